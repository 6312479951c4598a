"""A unit's share of every table as Arrow IPC parts (none for a table it has no rows of),
with its error rows redacted (they travel in its result and marker) and its placeholder audit;
and the assembly that streams them into the shards as results arrive."""

from __future__ import annotations

from pathlib import Path

from trajset.redactors import Redactor
from trajset.schemas.records import ErrorRow

from ..results import UnitResult
from ..tables import CONFIGS, TABLES, Row
from .audit import rows_placeholders
from .markers import part_path
from .parquet import ShardWriter, part_facts, to_table, write_part


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
    result.parts = {}
    for name in TABLES:
        path = part_path(out, result.unit, name)
        if rows[name]:
            result.parts[name] = write_part(path, to_table(name, rows[name]))
        else:  # no part for no rows (most units have no pairs); a stale one must not stay
            path.unlink(missing_ok=True)
        if r.active:
            for rule, n in rows_placeholders(rows[name]).items():
                result.stats.counts[f"redacted/{name}/{rule}"] += n


class Assembly:
    """Every table's shards, fed each unit's parts in unit order (while later units still
    run, so the assembly overlaps the workers instead of following them)."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.writers = {name: ShardWriter(out, name) for name in CONFIGS}

    def add(self, result: UnitResult) -> None:
        for name, writer in self.writers.items():
            path = part_path(self.out, result.unit, name)
            if result.parts is None:  # a marker of an older run: read the facts
                if path.exists():
                    writer.add(path, *part_facts(path))
            elif name in result.parts:
                writer.add(path, *result.parts[name])

    def finish(self) -> dict[str, list[Path]]:
        """Every table's shards, closed and named."""
        return {name: writer.finish() for name, writer in self.writers.items()}
