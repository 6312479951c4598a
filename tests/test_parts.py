"""Parts with a shared column: a fork's pairs (and their KTO rows) hold one prompt object,
which a part writes once as a dictionary; the row groups hold it row by row, as before."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from trajset.pipeline.outputs import parquet, part_files
from trajset.pipeline.tables import SCHEMAS, TABLES


@pytest.fixture(scope="module")
def rows(sample_export: Path) -> dict[str, list[dict[str, Any]]]:
    """The sample store's pairs and KTO rows, each distinct prompt one object as the tables
    build them."""
    out = sample_export
    found: dict[str, list[dict[str, Any]]] = {}
    for name in ("preferences", "kto"):
        held: dict[str, Any] = {}
        found[name] = pq.read_table(out / "data" / name).to_pylist()
        for r in found[name]:
            r["prompt"] = held.setdefault(json.dumps(r["prompt"]), r["prompt"])
    return found


@pytest.mark.parametrize("name", ["preferences", "kto"])
def test_a_shared_prompt_is_written_once_and_assembled_as_every_row_holds_it(
    rows: dict[str, list[dict[str, Any]]], name: str, tmp_path: Path
) -> None:
    plain = part_files.to_table(name, rows[name])
    assert TABLES[name].shared == ("prompt",)
    shared = part_files.to_table(name, rows[name], TABLES[name].shared)
    distinct = len({id(r["prompt"]) for r in rows[name]})
    assert 1 < distinct < len(rows[name])  # the sample store's forks have several pairs
    assert len(shared.column("prompt").chunk(0).dictionary) == distinct
    part_files.write_part(tmp_path / "plain.arrow", plain)
    part_files.write_part(tmp_path / "shared.arrow", shared)
    assert (tmp_path / "shared.arrow").stat().st_size < (tmp_path / "plain.arrow").stat().st_size
    back = part_files.read_part(tmp_path / "shared.arrow")
    assert part_files.contiguous([back]).equals(plain, check_metadata=True)
    # slices, and an older plain part between shared ones (a resumed run), come out in order
    pieces = [back.slice(0, 3), part_files.read_part(tmp_path / "plain.arrow"), back.slice(3)]
    expected = pa.concat_tables([plain.slice(0, 3), plain, plain.slice(3)]).combine_chunks()
    assert part_files.contiguous(pieces).equals(expected, check_metadata=True)


def test_a_shared_columns_bytes_count_its_value_once_per_row(
    rows: dict[str, list[dict[str, Any]]],
) -> None:
    """Row groups and shards are cut by ``row_bytes``: the plain table's bytes, within the
    offset and validity bytes each row's own slice of the value counts again."""
    plain = part_files.to_table("kto", rows["kto"])
    shared = part_files.to_table("kto", rows["kto"], ("prompt",))
    assert part_files.row_bytes(plain) == plain.nbytes
    assert plain.nbytes <= part_files.row_bytes(shared) <= plain.nbytes + 16 * plain.num_rows
    assert shared.nbytes < plain.nbytes
    half = shared.slice(0, shared.num_rows // 2)
    assert part_files.row_bytes(half) <= part_files.row_bytes(shared) // 2 + 16 * plain.num_rows


def test_a_table_of_shared_rows_is_written_byte_identical_to_its_plain_rows(
    rows: dict[str, list[dict[str, Any]]], tmp_path: Path
) -> None:
    """A shard from shared parts is the same file as from plain parts (row groups of about
    a row, so a part of two rows is cut inside)."""
    written = {}
    for kind, shared in (("plain", ()), ("shared", ("prompt",))):
        parts = []
        for i in range(0, len(rows["kto"]), 2):
            path = tmp_path / kind / f"{i}.arrow"
            path.parent.mkdir(exist_ok=True)
            facts = part_files.write_part(
                path, part_files.to_table("kto", rows["kto"][i : i + 2], shared)
            )
            parts.append((path, *facts))
        cap = part_files.row_bytes(part_files.to_table("kto", rows["kto"][:1]))
        task = parquet.ShardTask("kto", tmp_path / f"{kind}.parquet", tuple(parts), cap)
        written[kind] = parquet.write_shard(task)
        assert pq.read_table(task.path).schema.equals(SCHEMAS["kto"])
    assert (tmp_path / "plain.parquet").read_bytes() == (tmp_path / "shared.parquet").read_bytes()
    assert pq.ParquetFile(tmp_path / "plain.parquet").metadata.num_row_groups > 2


def test_a_shard_is_the_same_file_however_its_rows_fell_into_parts(
    rows: dict[str, list[dict[str, Any]]], tmp_path: Path
) -> None:
    """A row group is one array per column whatever parts it gathers, so the parts' ends
    cut no page: a shard from parts of 3 rows is the file of one part.  (Handing the writer
    each part's chunks ended a page at each: the benchmark corpus's ``trajectories`` shard
    grew by 12%, its repeated tool outputs compressed a part apart.)"""
    # rows of about a page each (30 outputs of 32 KB), outputs a compressor cannot shrink
    # alone but sees again in the next rows, as a session's trajectories repeat its history
    outputs = [hashlib.sha256(f"{k}".encode()).hexdigest() * 500 for k in range(40)]
    many = []
    for i in range(24):
        row = dict(rows["kto"][i % len(rows["kto"])])
        said = row["completion"][0]
        row["completion"] = [{**said, "content": outputs[(i // 4 + j) % 40]} for j in range(30)]
        many.append(row)
    written = {}
    for kind, size in (("whole", len(many)), ("threes", 3)):
        parts = []
        for i in range(0, len(many), size):
            path = tmp_path / kind / f"{i}.arrow"
            path.parent.mkdir(exist_ok=True)
            table = part_files.to_table("kto", many[i : i + size], TABLES["kto"].shared)
            parts.append((path, *part_files.write_part(path, table)))
        task = parquet.ShardTask("kto", tmp_path / f"{kind}.parquet", tuple(parts), 1 << 30)
        parquet.write_shard(task)
        written[kind] = task.path.read_bytes()
    assert pq.ParquetFile(tmp_path / "whole.parquet").metadata.num_row_groups == 1
    assert written["whole"] == written["threes"]
