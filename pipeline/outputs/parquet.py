"""Parquet files as ``datasets`` writes them (DESIGN §4, datasets-and-ecosystem §2.3).

Each unit's rows are written to an Arrow IPC part file under
``DIR/.trajset/parts/`` (the unit's share of every table, which is also what
``--mode resume`` keeps); ``assemble`` then streams the parts in unit order into shards
``data/<table>/train-NNNNN-of-MMMMM.parquet``: zstd, row groups of at most
100 MB and shards of at most 500 MB (uncompressed), page index on.  Same
rows give the same bytes.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from ..tables import SCHEMAS
from .files import atomic_path, atomic_write

MAX_ROW_GROUP_BYTES = 100 * 1000 * 1000
MAX_SHARD_BYTES = 500 * 1000 * 1000
WRITE_OPTIONS: dict[str, Any] = {
    "compression": "zstd",
    "write_page_index": True,
    "write_statistics": True,
}


def to_table(name: str, rows: list[dict[str, Any]]) -> pa.Table:
    """Rows cast to the declared schema of table ``name`` (never inferred)."""
    return pa.Table.from_pylist(rows, schema=SCHEMAS[name])


def write_part(path: Path, table: pa.Table) -> None:
    """A unit's rows as an Arrow IPC file: cheap to write and memory-mapped when assembled."""
    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, table.schema) as w:
        w.write_table(table)
    atomic_write(path, sink.getvalue().to_pybytes())


def read_part(path: Path) -> pa.Table:
    """A part read into memory and its file closed (a mapping per part ran into the kernel's
    limit of 65,530 mappings when a row group gathered tens of thousands of small parts)."""
    with pa.OSFile(str(path)) as f:
        return pa.ipc.open_file(f).read_all()


def write_single(path: Path, table: pa.Table) -> None:
    """One table as one file (``errors.parquet``), row groups capped as for shards."""
    sink = pa.BufferOutputStream()
    with pq.ParquetWriter(sink, table.schema, **WRITE_OPTIONS) as w:
        groups = list(_row_groups([table])) or [table]
        for group in groups:
            w.write_table(group, row_group_size=max(1, group.num_rows))
    atomic_write(path, sink.getvalue().to_pybytes())


def _row_groups(tables: Iterable[pa.Table]) -> Iterable[pa.Table]:
    """Concatenate small tables and split big ones so each group stays near the byte cap.

    Slices are sized from a table's mean row size, so a group of very uneven
    rows can exceed the cap by a few rows; it never holds more than one
    oversize row alone.
    """
    pending: list[pa.Table] = []
    size = 0
    for t in tables:
        start = 0
        per_row = max(1, t.nbytes // t.num_rows) if t.num_rows else 1
        while start < t.num_rows:
            room = MAX_ROW_GROUP_BYTES - size
            n = min(t.num_rows - start, max(1, room // per_row))
            chunk = t.slice(start, n)
            pending.append(chunk)
            size += chunk.nbytes
            start += n
            if size >= MAX_ROW_GROUP_BYTES:
                yield pa.concat_tables(pending).combine_chunks()
                pending, size = [], 0
    if pending:
        yield pa.concat_tables(pending).combine_chunks()


def _rows_bytes(path: Path) -> int:
    """The part's in-memory size, read through a mapping (no copy) closed at once; 0 when the
    unit has no rows of this table (no part)."""
    if not path.exists():
        return 0
    with pa.memory_map(str(path)) as f:
        return int(pa.ipc.open_file(f).read_all().nbytes)


def _shards(parts: list[Path]) -> list[list[Path]]:
    """The parts, in order, grouped into shards of at most ``MAX_SHARD_BYTES`` of rows."""
    if sum(p.stat().st_size for p in parts if p.exists()) <= MAX_SHARD_BYTES:
        # a part's rows take no more memory than its file holds, so they fit one shard
        # without reading every part for its size (most of assembling many small units)
        return [list(parts)]
    shards: list[list[Path]] = [[]]
    acc = 0
    for p in parts:
        s = _rows_bytes(p)
        if shards[-1] and acc + s > MAX_SHARD_BYTES:
            shards.append([])
            acc = 0
        shards[-1].append(p)
        acc += s
    return shards


def assemble(out: Path, name: str, parts: list[Path]) -> list[Path]:
    """Stream the parts (in the given order) into ``out/data/<name>/`` shards."""
    schema = SCHEMAS[name]
    shards = _shards(parts)
    folder = out / "data" / name
    folder.mkdir(parents=True, exist_ok=True)
    for stale in folder.glob("*.parquet"):
        stale.unlink()
    written = []
    for i, shard_parts in enumerate(shards):
        path = folder / f"train-{i:05d}-of-{len(shards):05d}.parquet"
        with atomic_path(path) as tmp, pq.ParquetWriter(str(tmp), schema, **WRITE_OPTIONS) as w:
            tables = (read_part(p) for p in shard_parts if p.exists())
            empty = True
            for group in _row_groups(tables):
                w.write_table(group.cast(schema), row_group_size=max(1, group.num_rows))
                empty = False
            if empty:
                w.write_table(schema.empty_table())
        written.append(path)
    return written
