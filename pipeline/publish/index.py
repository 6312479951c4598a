"""The publish index: what a repository holds, row by row and file by file.

``trajset-index.parquet`` sits beside the card.  It has one item per table row (its
shard, session and content hash), one per shard (its facts: split, rows, bytes, size,
SHA-256) and one per other file (document, trace, medium, errors table: its session
and SHA-256), each with the redaction rule set it went through.  A publish reads the
repository's index, compares it with the export's own (``folder_items``), and sends
only the rows and files that are new or changed; the index it commits describes the
merged repository.  A row's hash is the SHA-256 of its values as canonical JSON
(sorted keys), so it is the same whoever computes it, on any machine or version.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import orjson
import pyarrow as pa
import pyarrow.parquet as pq

from ..outputs.traces import FOLDER as TRACES
from ..tables import CONFIGS, DERIVED

JSON = Any
INDEX = "trajset-index.parquet"
#: files a publish writes anew each time: never part of the comparison
GENERATED = ("README.md", "manifest.json", INDEX)
SCHEMA = pa.schema(
    [
        pa.field("path", pa.string(), nullable=False),
        pa.field("kind", pa.string(), nullable=False),  # row | shard | file
        pa.field("table", pa.string()),
        pa.field("split", pa.string()),
        pa.field("session_id", pa.string()),
        pa.field("source_format", pa.string()),
        pa.field("hash", pa.string()),
        pa.field("redaction_version", pa.string()),
        pa.field("rows", pa.int64()),
        pa.field("bytes", pa.int64()),
        pa.field("num_bytes", pa.int64()),
    ]
)


@dataclass(frozen=True)
class Item:
    """A row, a shard or a file of a repository (see the module docstring)."""

    path: str
    kind: str
    table: str = ""
    split: str = ""
    session_id: str = ""
    source_format: str = ""
    hash: str = ""
    redaction_version: str = ""
    rows: int = 0
    bytes: int = 0
    num_bytes: int = 0

    def stamped(self, version: str) -> Item:
        return replace(self, redaction_version=version)


def row_hash(row: dict[str, JSON]) -> str:
    return hashlib.sha256(orjson.dumps(row, option=orjson.OPT_SORT_KEYS)).hexdigest()


def file_hash(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def shard_items(directory: Path, rel: str, table: str, version: str) -> list[Item]:
    """A shard's item and one per row, read from the file."""
    path = directory / rel
    pf = pq.ParquetFile(path)
    meta = pf.metadata
    rows = pf.read().to_pylist()
    split = rel.rsplit("/", 1)[-1].split("-", 1)[0]
    shard = Item(
        rel, "shard", table, split, hash=file_hash(path), redaction_version=version,
        rows=meta.num_rows, num_bytes=path.stat().st_size,
        bytes=sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups)),
    )  # fmt: skip
    return [shard, *(_row_item(rel, table, r, version) for r in rows)]


def _row_item(rel: str, table: str, row: dict[str, JSON], version: str) -> Item:
    return Item(
        rel, "row", table, str(row.get("split") or ""), str(row.get("session_id") or ""),
        str(row.get("source_format") or ""), row_hash(row),
        str(row.get("redaction_version") or version),
    )  # fmt: skip


def tables_in(directory: Path) -> list[str]:
    """The tables an export holds data files of."""
    return [n for n in (*CONFIGS, *DERIVED) if (directory / "data" / n).is_dir()]


def folder_items(directory: Path, version: str) -> list[Item]:
    """Every item of an export folder: its tables' shards and rows, then its other files
    (documents and traces with their session, media and the errors table with none)."""
    items: list[Item] = []
    for table in tables_in(directory):
        for shard in sorted((directory / "data" / table).glob("*.parquet")):
            items += shard_items(directory, shard.relative_to(directory).as_posix(), table, version)
    of_doc = _documents(directory)
    for path in _files(directory):
        rel = path.relative_to(directory).as_posix()
        sid = of_doc.get(rel, "") if rel.startswith("atif/") else _trace_session(path)
        items.append(Item(rel, "file", session_id=sid, hash=file_hash(path),
                          redaction_version=version))  # fmt: skip
    return items


def _files(directory: Path) -> Iterator[Path]:
    """The published files that are neither table shards nor generated."""
    for path in sorted(directory.rglob("*")):
        rel = path.relative_to(directory)
        if not path.is_file() or rel.parts[0] in (".trajset", ".cache", "data"):
            continue
        if rel.as_posix() not in GENERATED:
            yield path


def _documents(directory: Path) -> dict[str, str]:
    """Document path -> its session, from the trajectories table."""
    out: dict[str, str] = {}
    for shard in sorted((directory / "data" / "trajectories").glob("*.parquet")):
        for r in pq.read_table(shard, columns=["atif_path", "session_id"]).to_pylist():
            if r["atif_path"]:
                out[r["atif_path"]] = r["session_id"]
    return out


def _trace_session(path: Path) -> str:
    """A trace's session (its first line's ``trajset``); "" for any other file."""
    if path.parent.parent.name != TRACES or path.suffix != ".jsonl":
        return ""
    try:
        with open(path, "rb") as fh:
            return str(json.loads(fh.readline())["trajset"]["session_id"])
    except (OSError, ValueError, KeyError, TypeError):
        return ""


def write_index(path: Path, items: Iterable[Item]) -> None:
    """The items as the index file, sorted (the same repository, the same bytes)."""
    rows = sorted((asdict(i) for i in items), key=lambda d: tuple(str(v) for v in d.values()))
    table = pa.Table.from_pylist(rows, schema=SCHEMA)
    pq.write_table(table, path, compression="zstd")


def read_index(path: Path) -> list[Item]:
    return [Item(**r) for r in pq.read_table(path).to_pylist()]
