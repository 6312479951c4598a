"""The job an executor runs: a batch of units through the per-unit chain, rows into parts.

``process_unit`` runs one unit through the stages and contains what fails in
it; ``process_batch`` runs a batch's units and writes their rows to parts.
``BatchJob`` is picklable: it carries the frozen ``RunContext`` to any
process and builds the ``Runtime`` where it lands, once per job object.
"""

from __future__ import annotations

from functools import cached_property

from trajset.schemas.records import ErrorRow

from .batches import Batch
from .outputs.parts import placeholders, redact_errors, write_parts
from .results import BatchResult, UnitResult
from .stages import (
    RunContext,
    Runtime,
    enumerate_,
    export,
    make_runtime,
    read,
    redact,
    tables_and_write,
    where,
)
from .stores import Unit, fingerprint
from .tables import TABLES, Row


def process_unit(
    ctx: RunContext, rt: Runtime, unit: Unit
) -> tuple[UnitResult, dict[str, list[Row]]]:
    """Read, redact, enumerate, export, filter and write one unit's documents; returns its
    result and table rows.  Never raises for bad input.

    An error nobody planned for loses this unit only: its documents are removed and it
    becomes one ``internal`` error row, with no rows."""
    result = UnitResult(unit)
    try:
        rows = _process(ctx, rt, unit, result)
    except Exception as exc:
        atif = ctx.out / "atif"
        for name in result.documents:
            (atif / name).unlink(missing_ok=True)
        failed = UnitResult(unit, fingerprint=result.fingerprint, bytes_read=result.bytes_read)
        first = (str(exc).splitlines() or [""])[0][:300]
        message = f"{type(exc).__name__}: {first} (not expected; please report it with the input)"
        failed.errors.append(ErrorRow(unit.label, "", None, "internal", message))
        failed.stats.counts["sessions_read"] += 1
        failed.stats.counts["sessions_failed"] += 1
        result, rows = failed, {name: [] for name in TABLES}
    redact_errors(rt.redactor, result)
    result.stats.counts.update(placeholders(rt.redactor, rows))
    return result, rows


def _process(ctx: RunContext, rt: Runtime, unit: Unit, result: UnitResult) -> dict[str, list[Row]]:
    result.fingerprint, result.bytes_read = fingerprint(unit)
    stats = result.stats
    trees = redact(rt, read(ctx, unit, result), stats, result.errors)
    chain = where(rt, export(rt, enumerate_(rt, trees, unit, stats), unit, stats), stats)
    return tables_and_write(ctx, rt, chain, result)


#: a batch writes its rows to a part once the units behind them read this many input bytes
PART_INPUT_BYTES = 4 * 1000 * 1000


def process_batch(ctx: RunContext, rt: Runtime, batch: Batch) -> BatchResult:
    """Each unit of the batch in order; their rows go to a part once the units behind them
    have read ``PART_INPUT_BYTES`` (so a batch's rows in memory stay bounded), and at the end."""
    out = BatchResult(batch)
    rows: dict[str, list[Row]] = {name: [] for name in TABLES}
    pending = 0
    for i, unit in enumerate(batch):
        result, unit_rows = process_unit(ctx, rt, unit)
        out.units.append(result)
        for name in TABLES:
            rows[name].extend(unit_rows[name])
        pending += result.bytes_read
        last = i == len(batch) - 1
        if (last or pending >= PART_INPUT_BYTES) and any(rows.values()):
            out.parts.append(write_parts(ctx.out, batch, len(out.parts), rows))
            rows, pending = {name: [] for name in TABLES}, 0
    return out


class BatchJob:
    """``process_batch`` bound to a run: a picklable callable an executor maps over batches.

    What it derives from the options (compiled redaction rules, policies,
    the filter) is built once per job object, i.e. once per worker process.
    """

    def __init__(self, ctx: RunContext) -> None:
        self.ctx = ctx

    @cached_property
    def runtime(self) -> Runtime:
        return make_runtime(self.ctx)

    def __getstate__(self) -> dict[str, RunContext]:
        return {"ctx": self.ctx}  # the runtime is rebuilt where the job lands

    def __call__(self, batch: Batch) -> BatchResult:
        return process_batch(self.ctx, self.runtime, batch)
