"""``trajset export``: the whole run, with a progress bar on a terminal and a summary."""

from __future__ import annotations

import inspect
import os
import shutil
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from .. import __version__
from ..errors import UsageError
from ..flags import FLAGS, annotated
from ..options import Mode, resolve
from ..outputs.remote import default_stage, existing, is_url, upload
from ..outputs.row_checks import found
from ..run.driver import default_workers, run_export
from ..run.results import RunResult
from ..sources import local_sources
from ..stores import READERS, sample_store
from .errors import exits, fail

StoreArgs = Annotated[
    list[Path] | None,
    typer.Argument(
        help="Session files, folders or databases; none: the bundled sample store.",
        show_default=False,
    ),
]
#: ``--store-kind`` and ``--reader-option`` as the commands that read stores take them
if TYPE_CHECKING:  # what they parse to; typer reads their declaration (flags.py)
    StoreKindOption = str | None
    ReaderOptions = list[str] | None
else:
    StoreKindOption = annotated("store_kind")
    ReaderOptions = annotated("reader_option")


def stores_or_sample(stores: list[Path] | None) -> list[Path]:
    return list(stores) if stores else [sample_store()]


def all_local_stores(
    stores: list[Path] | None, store_kind: str | None, quiet: bool = False
) -> list[Path]:
    """The given stores and every store ``trajset sources`` finds (the ones with sessions)."""
    if store_kind not in (None, "auto"):
        raise UsageError("--all-local exports stores of every kind; leave out --store-kind")
    found = [s for s in local_sources() if s.sessions]
    if not found and not stores:
        searched = "; ".join(
            f"{k}: {loc.describe()}" for k, r in READERS.items() for loc in r.locations
        )
        raise UsageError(f"--all-local found no store (searched {searched}); give a STORE")
    for s in found if not quiet else []:
        typer.echo(f"--all-local: {s.kind} store {s.path} ({s.sessions} sessions)", err=True)
    return list(dict.fromkeys([*(stores or []), *(s.path for s in found)]))


def export(
    stores: StoreArgs = None,
    out: Annotated[
        str,
        typer.Option(
            "--out",
            "-o",
            help="Output folder (the dataset), or an fsspec URL (s3://bucket/prefix, gs://, "
            "file://): written in --stage, then copied there, the manifest last.",
        ),
    ] = "trajset-out",
    stage: Annotated[
        Path | None,
        typer.Option(
            help="With an --out URL: the local folder the export is written in before it is "
            "copied up (default: one for that URL in the system's temporary folder).",
        ),
    ] = None,
    all_local: Annotated[
        bool,
        typer.Option(
            "--all-local", help="Also export every store `trajset sources` finds on this machine."
        ),
    ] = False,
    strict: Annotated[
        bool,
        typer.Option(
            "--strict", help="Exit 1 when an input could not be exported (errors.parquet has rows)."
        ),
    ] = False,
    config: Annotated[Path | None, typer.Option(help="A TOML file of options.")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress, no summary.")] = False,
    **given: Any,
) -> None:
    """Export every trajectory as ATIF v1.8 plus Parquet tables, laid out as a Hugging Face dataset.

    Example: trajset export ~/.agent/sessions --out my-dataset --prefer label:kept --prefer score

    Example: trajset export ~/.agent/sessions --out s3://my-bucket/datasets/v3
    """
    flags = {f.name: given.get(f.name) for f in FLAGS}  # the options declared once: flags.py
    store_kind = flags["store_kind"]
    options, run = resolve(flags, config, default_workers())
    run = replace(run, fork=True)  # this process runs nothing else: the pool may be forked
    chosen = all_local_stores(stores, store_kind, quiet) if all_local else stores_or_sample(stores)
    if run.executor == "local" and run.workers > default_workers():
        typer.echo(
            f"--workers {run.workers} is more than the {default_workers()} CPUs this process "
            f"may use; using {default_workers()}",
            err=True,
        )
        run = replace(run, workers=default_workers())
    url = out if is_url(out) else None
    if stage is not None and url is None:
        raise UsageError("--stage is where an export to an --out URL is written; --out is a folder")
    cluster = run.executor == "ray" and (run.ray_address or os.environ.get("RAY_ADDRESS"))
    if url and cluster and stage is None:
        raise UsageError(
            f"--out {url} with a Ray cluster: give --stage, a folder every node sees (a shared "
            "filesystem); the nodes write the export there before it is copied up"
        )
    folder = (stage or default_stage(out)) if url else Path(out)
    if url and run.mode is Mode.error and existing(url):
        raise UsageError(
            f"--out {url} is not empty; --mode overwrite replaces what is there, --mode resume "
            "finishes an interrupted export"
        )
    bar = _ProgressBar() if not quiet and sys.stderr.isatty() else None
    try:
        result = run_export(
            chosen, folder, options, run,
            progress=bar.update if bar else None, version=__version__,
        )  # fmt: skip
    finally:
        if bar is not None:
            bar.close()
    if url:
        say = (lambda line: None) if quiet else (lambda line: typer.echo(line, err=True))
        upload(folder, url, say)
        if not run.keep_state:
            shutil.rmtree(folder, ignore_errors=True)
    if not quiet:
        _summary(result, out)
    for line in explain(result, options.where):
        typer.echo(f"trajset: {line}", err=True)
    if strict and result.errors:
        e = result.errors[0]
        fail(f"--strict: {e.source}{':' + str(e.line) if e.line else ''}: {e.kind}: {e.message}", 1)


def _with_flags(command: Any) -> Any:
    """``command`` taking, besides its own parameters, every option ``flags.FLAGS`` declares
    (typer reads a command's parameters from its signature)."""
    own = inspect.signature(command, eval_str=True, globals=globals())
    fixed = [p for p in own.parameters.values() if p.kind is not p.VAR_KEYWORD]
    command.__signature__ = own.replace(parameters=[*fixed, *(f.parameter() for f in FLAGS)])
    return exits(command)


export = _with_flags(export)


class _ProgressBar:
    """A progress bar on stderr (rich comes with typer): the units run, then the shards
    written (a fifth of a run's time on the benchmark corpus).  Drawn when the run reports
    progress, at most ten times a second, not by a thread of its own: the worker pool
    starts by fork only while this process runs no other thread (``tuning.fork_safe``)."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        self._progress = Progress(
            TextColumn("export {task.description:<6}"), BarColumn(), MofNCompleteColumn(),
            TimeElapsedColumn(), console=Console(stderr=True), transient=True,
            auto_refresh=False,
        )  # fmt: skip
        self._task = self._progress.add_task("units", total=None)
        self._progress.start()
        self._drawn = 0.0  # when the bar was last drawn (time.monotonic)

    def update(self, done: int, total: int, stage: str) -> None:
        now = time.monotonic()
        draw = now - self._drawn >= 0.1 or done == total
        self._progress.update(self._task, description=stage, completed=done, total=total)
        if draw:
            self._progress.refresh()
            self._drawn = now

    def close(self) -> None:
        self._progress.stop()


def explain(run: RunResult, where: str | None) -> list[str]:
    """Why an export holds less than its store: a filter that left nothing, inputs that did
    not read (the first one named); printed even with --quiet."""
    c, lines = run.counts, []
    if where and c.get("trajectories", 0) == 0 and c.get("trajectories_filtered_out", 0):
        why = ""
        if "outcome_" in where and c.get("outcomes", 0) == 0:
            why = "; this store records no outcomes, so every outcome_* column is null"
        lines.append(
            f"no trajectory is left: --where {where!r} matched none of the "
            f"{c['trajectories_filtered_out']} trajectories{why}; every config is empty"
        )
    broken = {k: n for k, n in found(c).items() if n}
    if broken:
        said = ", ".join(f"{n} {k}" for k, n in broken.items())
        lines.append(
            f"the rows break the row checks ({said}): a reader misread its store; "
            "`trajset validate` on the folder says where"
        )
    if run.errors:
        e = run.errors[0]
        at = f"{e.source}:{e.line}" if e.line else e.source
        lines.append(
            f"{len(run.errors)} problem(s) with the inputs, each a row of errors.parquet "
            f"(source, line, kind, message); the first: {at}: {e.kind}: {e.message}"
        )
    return lines


def _summary(run: RunResult, out: str) -> None:
    """The short stats table printed after an export (stderr)."""
    c = run.counts
    rate = run.bytes_read / 1e6 / run.seconds if run.seconds else 0.0
    rows: list[tuple[str, object]] = [
        ("units", c["units"]),
        ("sessions", c["sessions_read"]),
        ("sessions filtered out", c.get("sessions_filtered_out", 0)),
        ("trees", c["trees"]),
        ("trajectories", c["trajectories"]),
        ("steps", c["steps"]),
        ("pairs", c["pairs"]),
        ("trajectories filtered out", c["trajectories_filtered_out"]),
        ("errors", len(run.errors)),
        ("paths skipped", c.get("paths_skipped", 0)),
        ("MB/s", f"{rate:.2f}"),
    ]
    for rule, n in run.ledger.findings().items():
        rows.append((f"redacted {rule.rsplit('_v', 1)[0]}", n))
    typer.echo(f"wrote {out}", err=True)
    width = max(len(k) for k, _ in rows) + 2
    for k, v in rows:
        typer.echo(f"  {k:<{width}}{v:>10}", err=True)
