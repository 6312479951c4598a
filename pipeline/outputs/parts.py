"""A unit's share of every table as Arrow IPC parts, with its error rows and placeholder audit."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

from trajset.redactors import Redactor
from trajset.schemas.records import ErrorRow

from ..results import UnitResult
from ..tables import TABLES, Row
from .audit import rows_placeholders
from .markers import part_path
from .parquet import to_table, write_part


def write_parts(out: Path, r: Redactor, rows: dict[str, list[Row]], result: UnitResult) -> None:
    """The unit's share of every table (errors redacted like any text) and its placeholder audit."""
    if r.active:
        result.errors = [
            ErrorRow(
                r.plain_text(e.source),
                r.plain_id(e.session_id),
                e.line,
                e.kind,
                r.plain_text(e.message),
            )
            for e in result.errors
        ]
    for name in TABLES:
        write_part(part_path(out, result.unit, name), to_table(name, rows[name]))
        if r.active:
            for rule, n in rows_placeholders(rows[name]).items():
                result.stats.counts[f"redacted/{name}/{rule}"] += n
    errors = to_table("errors", [asdict(e) for e in result.errors])
    write_part(part_path(out, result.unit, "errors"), errors)
