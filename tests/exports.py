"""What the store readers' tests ask of an export: run one, read a table, a row's answers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pyarrow.parquet as pq

from trajset.pipeline import ExportOptions, RunOptions, read_store, run_export
from trajset.schemas.session import Session


def export(store: Path, out: Path, **options: Any) -> Path:
    """``out`` with the store exported there, unredacted, by one worker."""
    run_export([store], out, ExportOptions(redact=False, **options), RunOptions(workers=1))
    return out


def table(out: Path, name: str) -> list[dict[str, Any]]:
    """The rows of a table of an export ([] when it has none)."""
    files = sorted((out / "data" / name).glob("*.parquet"))
    return pl.read_parquet(files).to_dicts() if files else []


def answers(row: dict[str, Any]) -> list[str]:
    """The non-empty texts of the assistant messages of a trajectory or sft row."""
    return [m["content"] for m in row["messages"] if m["role"] == "assistant" and m["content"]]


def only_session(store: Path) -> Session:
    """The one session a store holds (fails when it holds another number)."""
    [session] = read_store(store)
    return session


def data_files(out: Path) -> dict[str, bytes]:
    """Every data file of an export by its path in it: documents, tables, ``errors.parquet``
    (what must be byte-identical across worker counts, resumes and refactorings)."""
    return {
        str(p.relative_to(out)): p.read_bytes()
        for d in ("atif", "data")
        for p in sorted((out / d).rglob("*"))
        if p.is_file()
    } | {"errors.parquet": (out / "errors.parquet").read_bytes()}


def unstamped(path: Path) -> Any:
    """A data file's content apart from the rule set it names: a Parquet table's rows without
    ``redaction_version`` (a redacted and an unredacted export differ there by design),
    any other file's bytes."""
    if path.suffix != ".parquet":
        return path.read_bytes()
    table = pq.read_table(path)
    if "redaction_version" in table.column_names:
        table = table.drop_columns(["redaction_version"])
    return table.to_pylist()
