"""A unit's share of every table as Arrow IPC parts (none for a table it has no rows of),
with its error rows redacted (they travel in its result and marker) and its placeholder audit."""

from __future__ import annotations

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
        path = part_path(out, result.unit, name)
        if rows[name]:
            write_part(path, to_table(name, rows[name]))
        else:  # no part for no rows (most units have no pairs); a stale one must not stay
            path.unlink(missing_ok=True)
        if r.active:
            for rule, n in rows_placeholders(rows[name]).items():
                result.stats.counts[f"redacted/{name}/{rule}"] += n
