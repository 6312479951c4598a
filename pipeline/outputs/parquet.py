"""Parquet files as ``datasets`` writes them (DESIGN §4, datasets-and-ecosystem §2.3).

A batch of units writes its rows to Arrow IPC part files (``part_files``) under
``DIR/.trajset/parts/`` (its share of every table, which is also what
``--mode resume`` keeps).  ``ShardPlan`` takes the parts' facts in unit
order as each batch's result arrives and cuts them into the shards
``data/<table>/<split>-NNNNN-of-MMMMM.parquet``; ``write_shard`` writes one
shard from its parts, in any worker: zstd, row groups of at most 100 MB and
shards of at most 500 MB (uncompressed), page index on.  Same rows in the
same parts give the same bytes, whoever writes them and whenever."""

from __future__ import annotations

import hashlib
import io
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, TypeAlias

import pyarrow as pa
import pyarrow.parquet as pq

from ..options import RunSettings
from ..tables import SCHEMAS
from .audit import table_placeholders
from .files import atomic_path, atomic_write
from .part_files import contiguous, read_part, row_bytes
from .tables_info import shard_facts

WRITE_OPTIONS: dict[str, Any] = {
    "compression": "zstd",
    # level 3 (zstd's own default; Arrow's is 1): 15% smaller shards on the benchmark
    # corpus for 2-9% more time in the Parquet writer, about 1% of an export
    "compression_level": 3,
    "write_page_index": True,
    "write_statistics": True,
}


class HashingSink(io.RawIOBase):
    """A binary file that hashes (SHA-256) and counts the bytes written through it."""

    def __init__(self, fh: BinaryIO) -> None:
        super().__init__()
        self.fh, self.digest, self.size = fh, hashlib.sha256(), 0

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        self.digest.update(data)
        self.size += len(data)
        return self.fh.write(data)

    def tell(self) -> int:
        return self.size


#: what a row group is made of: a part file, or rows in memory
Source: TypeAlias = Path | pa.Table


def _load(source: Source) -> pa.Table:
    return source if isinstance(source, pa.Table) else read_part(source)


class _RowGroups:
    """Row groups of one Parquet file, fed tables or parts in order: small ones are
    concatenated and big ones split so each group stays near the byte cap.

    Slices are sized from a source's mean row size, so a group of very uneven
    rows can exceed the cap by a few rows; it never holds more than one
    oversize row alone.  Parts are only named here and read when their group
    is written, so a pending group costs no memory.
    """

    def __init__(
        self,
        writer: pq.ParquetWriter,
        cap: int,
        drop: frozenset[tuple[Any, ...]] = frozenset(),
        tools: dict[tuple[str, str], str] | None = None,
        key: tuple[str, ...] = (),
        split: Split | None = None,
        audit: bool = False,
    ) -> None:
        self.writer, self.cap, self.drop, self.tools = writer, cap, drop, tools or {}
        self.key, self.split, self.audit = key, split or Split(), audit
        self.placeholders: Counter[str] = Counter()  # per rule, in the rows written (``audit``)
        self.pending: list[tuple[Source, int, int]] = []  # (source, first row, rows)
        self.size = 0
        self.written = False

    def add(self, source: Source, rows: int, nbytes: int) -> None:
        start, table = 0, None
        per_row = max(1, nbytes // rows) if rows else 1
        while start < rows:
            n = min(rows - start, max(1, (self.cap - self.size) // per_row))
            if n == rows:  # the whole source: its size is known
                self.size += nbytes
            else:
                table = table if table is not None else _load(source)
                self.size += row_bytes(table.slice(start, n))
            self.pending.append((source, start, n))
            start += n
            if self.size >= self.cap:
                self.flush()

    def flush(self) -> None:
        """Write the pending rows as one row group."""
        if not self.pending:
            return
        pieces: list[pa.Table] = []
        last: Source | None = None
        for source, start, n in self.pending:
            if source is not last:  # consecutive slices of one source share one read
                last, table = source, _load(source)
            pieces.append(table.slice(start, n))
        group = contiguous(pieces)
        if self.drop:
            group = group.filter(pa.array([k not in self.drop for k in _keys(group, self.key)]))
        if self.tools:
            group = _with_inferred_tools(group, self.tools)
        group = self.split.rows(group)
        if not group.schema.equals(self.writer.schema, check_metadata=True):
            group = group.cast(self.writer.schema)  # an equal schema's cast still copies
        if self.audit:
            self.placeholders.update(table_placeholders(group))
        self.writer.write_table(group, row_group_size=max(1, group.num_rows))
        self.pending, self.size, self.written = [], 0, True


@dataclass(frozen=True)
class Split:
    """The rows of one split: those of the ``include`` sessions, or of every session but the
    ``exclude`` ones (``train``), with their ``split`` column set to ``name`` and, given a
    ``redaction_version``, that column set to it (the run's rule set)."""

    name: str = "train"
    include: frozenset[str] | None = None
    exclude: frozenset[str] = frozenset()
    redaction_version: str | None = None

    def rows(self, group: pa.Table) -> pa.Table:
        if self.include is not None or self.exclude:
            sessions = group.column("session_id").to_pylist()
            keep = [
                s in self.include if self.include is not None else s not in self.exclude
                for s in sessions
            ]
            group = group.filter(pa.array(keep))
        for name, value in (("split", self.name), ("redaction_version", self.redaction_version)):
            i = group.schema.get_field_index(name)
            if i >= 0 and value is not None:  # errors.parquet has neither
                column = pa.array([value] * group.num_rows, pa.string())
                group = group.set_column(i, group.schema.field(i), column)
        return group


def _with_inferred_tools(table: pa.Table, tools: dict[tuple[str, str], str]) -> pa.Table:
    """``tools`` of the rows marked ``inferred`` set to their agent's inferred tools."""
    source = table.column("tools_source").to_pylist()
    if "inferred" not in source:
        return table
    agents = zip(
        table.column("agent_name").to_pylist(), table.column("agent_version").to_pylist(),
        strict=True,
    )  # fmt: skip
    old = table.column("tools").to_pylist()
    new = [
        tools.get((a or "", v or ""), t) if s == "inferred" else t
        for s, (a, v), t in zip(source, agents, old, strict=True)
    ]
    i = table.schema.get_field_index("tools")
    return table.set_column(i, table.schema.field(i), pa.array(new, pa.string()))


def _keys(table: pa.Table, columns: tuple[str, ...]) -> list[tuple[Any, ...]]:
    return list(zip(*(table.column(c).to_pylist() for c in columns), strict=True))


def write_single(path: Path, table: pa.Table, row_group_bytes: int) -> None:
    """One table as one file (``errors.parquet``), row groups capped as for shards."""
    sink = pa.BufferOutputStream()
    with pq.ParquetWriter(sink, table.schema, **WRITE_OPTIONS) as w:
        groups = _RowGroups(w, row_group_bytes)
        groups.add(table, table.num_rows, int(table.nbytes))
        groups.flush()
        if not groups.written:
            w.write_table(table, row_group_size=1)
    atomic_write(path, sink.getvalue().to_pybytes())


#: a part of a shard: (part file, rows, in-memory bytes), as ``part_facts`` gives them
PartRef: TypeAlias = tuple[Path, int, int]


@dataclass(frozen=True)
class ShardTask:
    """One shard to write: its table, final path and parts in order (picklable, so any
    worker of the run can write it)."""

    table: str
    path: Path
    parts: tuple[PartRef, ...]
    row_group_bytes: int
    #: the columns that name a row (``Dedup.key``), and the rows to leave out (held twice)
    key: tuple[str, ...] = ()
    drop: tuple[tuple[Any, ...], ...] = ()
    #: ((agent name, version), tools JSON): the inferred tools of rows whose store recorded none
    tools: tuple[tuple[tuple[str, str], str], ...] = ()
    #: the split the shard holds, and which sessions' rows that is
    split: Split = Split()
    #: count the redaction placeholders per rule in the rows written (the export redacts)
    audit: bool = False

    @property
    def nbytes(self) -> int:
        return sum(n for _, _, n in self.parts)


def write_shard(task: ShardTask) -> dict[str, Any]:
    """The shard's Parquet file (written under a temporary name, then renamed) and its
    facts (``tables_info.shard_facts``), taken as it is written: its checksum from the
    bytes on their way to the file, rows and sizes from the writer's footer, so the shard
    is never read back.  A task without parts writes the table's schema with no rows.
    With ``task.audit``, ``placeholders``: the redaction placeholders per rule in the rows
    written (``audit.table_placeholders`` of each row group)."""
    schema = SCHEMAS[task.table]
    footer: list[pq.FileMetaData] = []
    with atomic_path(task.path) as tmp, open(tmp, "wb") as raw:
        sink = HashingSink(raw)
        with pq.ParquetWriter(
            pa.PythonFile(sink, mode="w"), schema, metadata_collector=footer, **WRITE_OPTIONS
        ) as writer:
            groups = _RowGroups(
                writer, task.row_group_bytes, frozenset(task.drop), dict(task.tools), task.key,
                task.split, task.audit,
            )  # fmt: skip
            for part, rows, nbytes in task.parts:
                groups.add(part, rows, nbytes)
            groups.flush()
            if not task.parts:
                writer.write_table(schema.empty_table())
    facts: dict[str, Any] = shard_facts(footer[0], sink.size, sink.digest.hexdigest())
    if groups.placeholders:
        facts["placeholders"] = dict(sorted(groups.placeholders.items()))
    return facts


class ShardPlan:
    """Which parts make each shard of table ``name`` under ``out/data/<name>/``, planned
    from the parts' facts as they arrive in unit order; ``tasks`` hands the shards to
    ``write_shard``, so the workers write them, not the driver.

    A shard ends before a part would take it past ``RunSettings.shard_bytes`` of rows
    (a part larger than that is a shard alone); a table without rows is one
    shard without rows.  Shards are named ``<split>-NNNNN-of-MMMMM`` once their
    number is known.
    """

    def __init__(self, out: Path, name: str, settings: RunSettings) -> None:
        self.name, self.settings = name, settings
        self.folder = out / "data" / name
        self.folder.mkdir(parents=True, exist_ok=True)
        for stale in [*self.folder.glob("*.parquet"), *self.folder.glob(".*.tmp")]:
            stale.unlink()
        self.shards: list[list[PartRef]] = []
        self.shard_bytes = 0
        self.parts: list[PartRef] = []  # every part, in unit order

    def add(self, part: Path, rows: int, nbytes: int) -> None:
        """Append a part of ``rows`` rows taking ``nbytes`` in memory (``part_facts``)."""
        if not rows:
            return
        self.parts.append((part, rows, nbytes))
        if not self.shards or self.shard_bytes + nbytes > self.settings.shard_bytes:
            self.shards.append([])
            self.shard_bytes = 0
        self.shards[-1].append((part, rows, nbytes))
        self.shard_bytes += nbytes

    def tasks(
        self,
        splits: Mapping[str, float] | None = None,
        holds: Callable[[Path], frozenset[str]] | None = None,
    ) -> list[ShardTask]:
        """The shards of train alone, as planned; or with ``--split`` (``name -> fraction``,
        ``holds``: the splits a part has rows of), each split's from the parts that hold its
        rows, grouped so that its expected share of them fills a shard (``datasets`` cannot
        read a split with an empty file)."""
        if not splits or holds is None:
            return self._named("train", self.shards)
        fractions = {"train": 1 - sum(splits.values()), **splits}
        out: list[ShardTask] = []
        for name, fraction in fractions.items():
            parts = [p for p in self.parts if name in holds(p[0])]
            out += self._named(name, self._grouped(parts, fraction))
        return out

    def _grouped(self, parts: list[PartRef], fraction: float) -> list[list[PartRef]]:
        shards: list[list[PartRef]] = []
        size = 0.0
        for part in parts:
            share = part[2] * fraction
            if not shards or size + share > self.settings.shard_bytes:
                shards.append([])
                size = 0.0
            shards[-1].append(part)
            size += share
        return shards

    def _named(self, split: str, shards: list[list[PartRef]]) -> list[ShardTask]:
        shards = shards or [[]]
        n = len(shards)
        return [
            ShardTask(
                self.name,
                self.folder / f"{split}-{i:05d}-of-{n:05d}.parquet",
                tuple(parts),
                self.settings.row_group_bytes,
                split=Split(split),
            )
            for i, parts in enumerate(shards)
        ]
