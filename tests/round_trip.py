"""Convert a store to Agent Session Format files, export those, and compare with the direct export."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
from typer.testing import CliRunner

from trajset.pipeline import ExportOptions, RunOptions, run_export
from trajset.pipeline.cli import app

TABLES = ("trajectories", "steps", "outcomes", "preferences", "sft", "kto")


def _rows(out: Path, table: str) -> list[dict[str, Any]]:
    """The table's rows but ``source_format``, sorted: the converted store lists its units
    in another order."""
    files = sorted((out / "data" / table).glob("*.parquet"))
    rows = pl.read_parquet(files).to_dicts() if files else []
    found = [{k: v for k, v in r.items() if k != "source_format"} for r in rows]
    return sorted(found, key=lambda r: json.dumps(r, sort_keys=True, default=str))


def assert_round_trip(store: Path, direct: Path, work: Path) -> int:
    """``trajset convert`` then ``verify`` then export equals ``direct`` (the store exported
    with ``redact=False``), every document and table, as values; the number of documents."""
    runner = CliRunner()
    result = runner.invoke(app, ["convert", str(store), "--out", str(work / "asf")])
    assert result.exit_code == 0, result.output
    assert runner.invoke(app, ["verify", str(work / "asf")]).exit_code == 0
    again = work / "again"
    run_export([work / "asf"], again, ExportOptions(redact=False), RunOptions(workers=1))
    docs = sorted(p.name for p in (direct / "atif").glob("*.json"))
    assert docs == sorted(p.name for p in (again / "atif").glob("*.json"))
    for name in docs:
        assert json.loads((direct / "atif" / name).read_text()) == json.loads(
            (again / "atif" / name).read_text()
        ), name
    for table in TABLES:
        assert _rows(direct, table) == _rows(again, table), table
    return len(docs)
