"""What an executor runs: a batch of units through the chain, their rows into parts.

``process_unit`` runs one unit through ``chain.CHAIN`` and contains what fails
in it; ``process_batch`` runs a batch's units and writes their rows to parts.
``BatchJob`` is picklable: it carries the frozen ``RunContext`` (settings
included) to any process and builds the ``Runtime`` where it lands, once per
job object.
"""

from __future__ import annotations

from functools import cached_property

from trajset.schemas.records import ErrorRow

from ..errors import disk_full
from ..outputs.markers import part_path
from ..stores import Unit, fingerprint, recording_reads
from ..tables import TABLES
from ..tuning import fewer_collections, release_freed, small_pages
from .batches import Batch, batch_key
from .chain import run_chain
from .context import RunContext, Runtime, UnitScope, make_runtime
from .parts import redact_errors, write_parts
from .results import BatchResult, UnitResult
from .write import Rows, TableRows, no_rows

#: runs of a unit without a session an unplanned error stopped; then the unit fails whole
MAX_RERUNS = 4


def process_unit(
    ctx: RunContext, rt: Runtime, unit: Unit, parts: BatchParts
) -> tuple[UnitResult, Rows]:
    """Read, redact, enumerate, export, filter and write one unit's documents; returns its
    result and the table rows it still holds (rows it hands on go to ``parts`` on the way).
    Never raises for bad input.

    An error nobody planned for loses the session it happened in: what the unit wrote is
    removed and the unit runs again without that session, which becomes an ``internal``
    error row.  One that happens before any session was read (or in a session already
    left out, or after ``MAX_RERUNS`` runs: a unit is never run once per session) loses the
    unit: one ``internal`` row, no rows."""
    skip: dict[str, ErrorRow] = {}  # session id -> its error row
    while True:
        result = UnitResult(unit)
        scope = UnitScope(ctx, rt, result, frozenset(skip))
        try:
            held = _run(scope, unit, parts)
            break
        except Exception as exc:
            if disk_full(exc):
                raise  # the run stops: no session is to blame
            _discard(ctx, result, parts)
            if scope.current is None or scope.current[0] in skip or len(skip) >= MAX_RERUNS:
                result, held = _unit_failed(unit, exc, len(skip)), no_rows()
                break
            sid, source = scope.current
            skip[sid] = ErrorRow(source or unit.label, sid, None, "internal", _unplanned(exc))
    for row in skip.values():
        if row not in result.errors:
            result.errors.append(row)
            result.ledger.session_failed(read=True)
    redact_errors(rt.redactor, result)
    return result, held


def _run(scope: UnitScope, unit: Unit, parts: BatchParts) -> Rows:
    """The chain over the unit; the rows it still holds at its end."""
    held = no_rows()
    out: TableRows
    with recording_reads() as read:
        for out in run_chain(scope, [unit]):
            if out.final:
                held = out.rows
            else:
                parts.spill(out.rows)
    scope.result.fingerprint, scope.result.bytes_read = fingerprint(unit, read)  # what was read
    return held


def _discard(ctx: RunContext, result: UnitResult, parts: BatchParts) -> None:
    """Remove what an attempt at a unit wrote: its documents, traces and the parts it handed on."""
    atif = ctx.out / "atif"
    for name in result.documents:
        (atif / name).unlink(missing_ok=True)
    for rel in result.traces:
        (ctx.out / rel).unlink(missing_ok=True)
    parts.discard_unit()


def _unplanned(exc: Exception) -> str:
    first = (str(exc).splitlines() or [""])[0][:300]
    return f"{type(exc).__name__}: {first} (not expected; please report it with the input)"


def _unit_failed(unit: Unit, exc: Exception, reruns: int = 0) -> UnitResult:
    facts = fingerprint(unit)
    failed = UnitResult(unit, fingerprint=facts[0], bytes_read=facts[1])
    why = _unplanned(exc)
    if reruns >= MAX_RERUNS:
        why += f"; {reruns + 1} of its sessions failed so, and the rest of the unit is not exported"
    failed.errors.append(ErrorRow(unit.label, "", None, "internal", why))
    failed.ledger.session_failed(read=True)
    return failed


class BatchParts:
    """A batch's rows on their way to part files, in unit order: written once the units
    behind them have read ``RunSettings.part_input_bytes`` and at the batch's end, so the rows
    held stay bounded.  A unit that writes many documents hands its rows on the way: they
    go to parts of their own (after a part of the units before), removed if the unit fails."""

    def __init__(self, ctx: RunContext, batch: Batch) -> None:
        self.ctx, self.out = ctx, BatchResult(batch)
        self.rows, self.pending = no_rows(), 0
        self.unit_first: int | None = None  # the current unit's first part, once it spilled

    def _write(self) -> None:
        if any(self.rows.values()):
            seq = len(self.out.parts)
            facts, digests, shapes = write_parts(
                self.ctx.out, self.out.batch, seq, self.rows, self.ctx.options.dedup
            )
            self.out.parts.append(facts)
            self.out.digests.append(digests)
            self.out.shapes.append(shapes)
        self.rows, self.pending = no_rows(), 0

    def spill(self, rows: Rows) -> None:
        if self.unit_first is None:
            self._write()
            self.unit_first = len(self.out.parts)
        self.rows = rows
        self._write()

    def discard_unit(self) -> None:
        """Remove the parts the current unit spilled (it failed)."""
        first = len(self.out.parts) if self.unit_first is None else self.unit_first
        key = batch_key(self.out.batch)
        for seq, facts in enumerate(self.out.parts[first:], first):
            for name in facts:
                part_path(self.ctx.out, key, seq, name).unlink(missing_ok=True)
        del self.out.parts[first:]
        del self.out.digests[first:]
        del self.out.shapes[first:]
        self.unit_first = None

    def add(self, result: UnitResult, rows: Rows, last: bool) -> None:
        """A finished unit's result and the rows it still held."""
        self.out.units.append(result)
        self.unit_first = None
        for name in TABLES:
            self.rows[name].extend(rows[name])
        self.pending += result.bytes_read
        if last or self.pending >= self.ctx.settings.part_input_bytes:
            self._write()


def process_batch(ctx: RunContext, rt: Runtime, batch: Batch) -> BatchResult:
    """Each unit of the batch in order, their rows into parts (``BatchParts``)."""
    parts = BatchParts(ctx, batch)
    with fewer_collections(), small_pages():
        for i, unit in enumerate(batch):
            result, rows = process_unit(ctx, rt, unit, parts)
            parts.add(result, rows, last=i == len(batch) - 1)
            del rows
            release_freed(result.bytes_read)
    return parts.out


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
