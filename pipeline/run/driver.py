"""The export run (DESIGN §2): discover units, run the chain on each through an executor, assemble.

``run_export`` lists the units, cuts them into batches, prepares the output
folder, hands ``BatchJob`` to the executor and, as each batch's result
arrives (in unit order), writes its completion marker and streams its parts
into the Parquet shards; then it closes the shards and writes
``errors.parquet``, the manifest and the dataset card.  ``--mode resume``
takes the results of batches that already have a marker and whose inputs
are unchanged.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import Any

from trajset.redactors import Redactor

from .. import __version__
from ..errors import OutputError
from ..executors import Executor, make_executor
from ..jsonio import fix_surrogates
from ..options import ExportOptions, Mode, RunOptions, RunSettings
from ..outputs.card import write_manifest_and_card
from ..outputs.folder import (
    check_outside,
    finish_output,
    locked,
    mark_unfinished,
    prepare_output,
)
from ..outputs.markers import (
    STATE,
    check_resumable,
    drop_state,
    part_path,
    read_marker,
    write_marker,
)
from ..outputs.parquet import write_shard, write_single
from ..outputs.part_files import to_table
from ..stores import (
    IndexFile,
    SessionIndex,
    Unit,
    discover,
    fingerprint,
    skipped_paths,
    store_roots,
)  # fmt: skip
from ..tables import TABLES
from ..tables.where import compile_where
from ..tokenize import tokenize_export
from ..tokenize.shards import load_tokenizer
from ..tuning import fewer_collections, small_pages
from . import dedup
from .batches import Batch, batch_key, batches
from .context import RunContext
from .parts import Assembly
from .people import people_of
from .results import BatchResult, InputLog, RunResult
from .stats import Stats
from .worker import BatchJob

JSON = Any
#: (done, total, stage): the units run, then the shards written
Progress = Callable[[int, int, str], None]


def run_units(
    ctx: RunContext,
    units: Sequence[Unit],
    run: RunOptions,
    kept: RunResult,
    executor: Executor,
    assembly: Assembly,
    progress: Progress | None = None,
) -> RunResult:
    """Run every unit (finished batches of a resumed run are not run again) and keep, in
    unit order, what the run's outputs need of each result (``kept``, returned).

    Each batch's parts go to ``assembly`` as its result arrives; then its marker holds
    the rest, so nothing per unit stays in memory but the run's error rows."""
    start = time.perf_counter()
    todo = batches(list(units), ctx.settings)
    done: dict[int, BatchResult] = {}
    if run.mode == Mode.resume:
        done = resumable(ctx.out, todo)
    fresh_batches = [b for i, b in enumerate(todo) if i not in done]
    kept.batches_run = len(fresh_batches)
    fresh = executor.map(BatchJob(ctx), fresh_batches)
    finished = sum(len(b.units) for b in done.values())
    for i in range(len(todo)):
        result = done.get(i)
        if result is None:
            result = next(fresh)
            with kept.stats.timed("driver/results"):
                write_marker(ctx.out, batch_key(result.batch), result.to_json())
            finished += len(result.units)
            if progress:
                progress(finished, len(units), "units")
        with kept.stats.timed("assemble"):
            assembly.add(result)
        with kept.stats.timed("driver/results"):
            for r in result.units:
                kept.add(r)
    for _ in fresh:  # run the executor to its end (a pool shuts down there)
        raise RuntimeError("the executor returned more results than it was given batches")
    kept.ledger.add("units", len(units))
    kept.ledger.add("units_reused", sum(len(b.units) for b in done.values()))
    kept.seconds = time.perf_counter() - start
    return kept


def resumable(out: Path, todo: Sequence[Batch]) -> dict[int, BatchResult]:
    """Finished batches whose units' inputs are all unchanged (same fingerprints).  Every
    other marker and part, and every document and trace not written by a kept batch, is
    removed (a changed, removed or unfinished batch's, or all of them when the state was not
    kept), so nothing stale is kept."""
    done: dict[int, BatchResult] = {}
    kept: set[str] = set()
    for i, batch in enumerate(todo):
        r = BatchResult.from_marker(batch, read_marker(out, batch_key(batch)))
        if r is not None and _intact(out, r):
            done[i] = r
            kept.update(name for u in r.units for name in u.documents)
            kept.update(rel for u in r.units for rel in u.traces)
    keys = {batch_key(todo[i]) for i in done}
    for stale in (out / STATE / "units").glob("*.json"):
        if stale.stem not in keys:
            stale.unlink()
    for stale in (out / STATE / "parts").glob("*/*.arrow"):
        if stale.stem.rsplit("-", 1)[0] not in keys:
            stale.unlink()
    for doc in (out / "atif").glob("*.json"):
        if doc.name not in kept:
            doc.unlink()
    for trace in (out / "traces").glob("*/*.jsonl"):
        if trace.relative_to(out).as_posix() not in kept:
            trace.unlink()
    return done


def _intact(out: Path, r: BatchResult) -> bool:
    """Every unit's inputs unchanged (same fingerprints) and every part the marker names there."""
    key = batch_key(r.batch)
    parts = [part_path(out, key, seq, name) for seq, f in enumerate(r.parts) for name in f]
    return all(p.exists() for p in parts) and all(
        u.fingerprint and u.fingerprint == fingerprint(u.unit)[0] for u in r.units
    )


def assemble_outputs(
    out: Path,
    result: RunResult,
    assembly: Assembly,
    executor: Executor | None,
    progress: Progress | None = None,
    settings: RunSettings | None = None,
) -> dict[str, JSON]:
    """The shards written (by ``executor``'s workers, or in this process without one) and
    ``errors.parquet``; returns each table's facts (rows, shard sizes and checksums)."""
    with result.stats.timed("assemble"):
        with result.stats.timed("driver/plan_shards"):
            tasks, written = assembly.tasks(), []
        for shard in (executor.map if executor else map)(write_shard, tasks):
            written.append(shard)
            if progress:
                progress(len(written), len(tasks), "shards")
        with result.stats.timed("driver/plan_shards"):
            facts = assembly.facts(tasks, written)
            for task, shard in zip(tasks, written, strict=True):
                result.ledger.redacted(task.table, shard.get("placeholders", {}))
        with result.stats.timed("driver/errors_file"):
            # a row may quote a store's half emoji (a session id): as U+FFFD, as its session
            errors = [fix_surrogates(asdict(e)) for e in result.errors]
            row_group_bytes = (settings or RunSettings()).row_group_bytes
            write_single(out / "errors.parquet", to_table("errors", errors), row_group_bytes)
    return facts


def check_options(options: ExportOptions, run: RunOptions) -> None:
    """Fail before any output on a bad ``--prefer`` or ``--where``, an unknown executor,
    ``--dedup near`` without rensa, or a ``--tokenizer`` that does not load."""
    options.policies()
    if options.where:
        compile_where(options.where)
    make_executor(run)
    dedup.check_mode(options.dedup)
    if options.tokenize:
        load_tokenizer(options.tokenize)


def run_export(
    stores: Sequence[Path],
    out: Path,
    options: ExportOptions,
    run: RunOptions | None = None,
    *,
    progress: Progress | None = None,
    version: str = __version__,
) -> RunResult:
    """The whole ``trajset export`` job; raises ``AbortRun`` subclasses for usage and output problems."""
    run = run or RunOptions()
    own = Stats()  # the driver's own work, of which no worker takes a share (``driver/*``)
    with own.timed("driver/discover"):
        found = discover(stores, options.store_kind, options.reader_options)
        check_options(options, run)
        units, people, unnamed = people_of(found, options)
        roots = store_roots(stores)
    redactor = options.redactor(list(run.secrets), run.terms, people, roots, run.pseudonym_key)
    check_outside(out, stores)
    if out.exists() and not out.is_dir():
        raise OutputError(f"--out {out} exists and is not a folder")
    with locked(out):
        target = prepare_output(out, run.mode)  # ``out``, or where overwrite stages
        resume = run.mode == Mode.resume
        check_resumable(target, options, resume, (*run.secrets, *run.terms), redactor.numbering)
        if resume:
            mark_unfinished(target)
        with own.timed("driver/index"):
            index = SessionIndex.of(units).write(target / STATE / "index.db")
        ctx = RunContext(
            target, options, run.secrets, index, world_size=run.workers, settings=run.settings,
            terms=run.terms, identities=people, roots=roots, pseudonym_key=run.pseudonym_key,
        )  # fmt: skip
        inputs = InputLog(target / STATE / "inputs.jsonl", redactor.plain_text)
        near = options.dedup_threshold if options.dedup == "near" else None
        assembly = Assembly(target, run.settings, near, options.split, options.split_by,
                            redactor.active, options.redaction_version())  # fmt: skip
        with small_pages(), make_executor(run) as executor, _closed(index, inputs):
            with fewer_collections():
                start = RunResult(inputs, errors=unnamed)
                result = run_units(ctx, units, run, start, executor, assembly, progress)
            result.stats.merge(own)
            index.remove()  # rebuilt by every run; no job reads it any more
            with result.stats.timed("driver/discover"):
                result.skipped = skipped_paths(stores, found)
            result.ledger.add("paths_skipped", len(result.skipped))
            # the workers write the shards, unless one batch or none ran (no worker started)
            shard_executor = executor if result.batches_run > 1 else None
            facts = assemble_outputs(
                target, result, assembly, shard_executor, progress, run.settings
            )
            if not run.keep_state:  # gone before the manifest's sync, which need not write it
                drop_state(target)
            write_manifest(target, result, assembly, facts, options, run, version, redactor)
            inputs.path.unlink(missing_ok=True)  # in the manifest now
            if options.tokenize:  # from the shards written, through the same workers
                tokenize_export(target, options.tokenize, executor, progress)
        finish_output(out, target)
    return result


@contextmanager
def _closed(*files: IndexFile | InputLog) -> Iterator[None]:
    """The run's state files closed however it ends (small pages hold in the executor's
    workers too: they start inside ``small_pages``)."""
    try:
        yield
    finally:
        for f in files:
            f.close()


def write_manifest(
    target: Path, result: RunResult, assembly: Assembly, facts: dict[str, JSON],
    options: ExportOptions, run: RunOptions, version: str, redactor: Redactor,
) -> None:  # fmt: skip
    """The run's last counts, then the manifest and the card (the manifest last); its time is
    ``driver/manifest`` of the run's result (not in the manifest, which it writes)."""
    start = time.perf_counter()
    result.ledger.check()  # every session read was exported or failed
    for name, table in TABLES.items():
        if table.dedup is not None:
            result.ledger.add(table.dedup.counter, len(assembly.dropped.get(name, {})))
    content = result.manifest(
        options, run, version, redactor, facts, dedup=dedup.report(assembly.dropped)
    )
    write_manifest_and_card(target, content)
    result.stats.stage("driver/manifest").seconds += time.perf_counter() - start


def default_workers() -> int:
    """The CPUs this process may use."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)
