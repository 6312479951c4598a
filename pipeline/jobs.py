"""The job an executor runs: a batch of units through the per-unit chain, rows into parts.

``BatchJob`` is picklable: it carries the frozen ``RunContext`` to any
process and builds the ``Runtime`` where it lands, once per job object.
"""

from __future__ import annotations

from functools import cached_property

from .batches import Batch
from .outputs.parts import write_parts
from .results import BatchResult
from .stages import RunContext, Runtime, make_runtime, process_unit
from .tables import TABLES, Row

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
