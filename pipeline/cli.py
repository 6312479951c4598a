"""The ``trajset`` command line (DESIGN §3).

Exit codes: 0 success; 1 processing failed (``--strict`` saw a bad input,
``verify`` found a mismatch, ``validate`` found an invalid file); 2 usage or
configuration error.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer

from . import __version__
from .errors import AbortRun, SessionReadError, TrajsetError, UsageError

if TYPE_CHECKING:
    from .export import RunResult

app = typer.Typer(
    name="trajset",
    help="Turn agent session stores into ATIF trajectories and training datasets.\n\n"
    "Example: trajset export --out my-dataset   (exports the bundled sample store)",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

StoreArgs = Annotated[
    list[Path] | None,
    typer.Argument(
        help="Session files, folders or databases; none: the bundled sample store.",
        show_default=False,
    ),
]


def _fail(message: str, code: int) -> NoReturn:
    typer.echo(f"trajset: {message}", err=True)
    raise typer.Exit(code)


def _stores(stores: list[Path] | None) -> list[Path]:
    from .stores import sample_store

    return list(stores) if stores else [sample_store()]


def _not_yet(option: str, issue: str) -> NoReturn:
    _fail(f"{option} is not available yet in trajset {__version__} ({issue})", 2)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"trajset {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """Turn agent session stores into ATIF trajectories and training datasets."""


# --------------------------------------------------------------------------- export


@app.command()
def export(
    stores: StoreArgs = None,
    out: Annotated[Path, typer.Option("--out", "-o", help="Output folder (the dataset).")] = Path(
        "trajset-out"
    ),
    store_kind: Annotated[
        str, typer.Option(help="auto|agentsession|agentsession-sqlite|einox|suga")
    ] = "auto",
    prefer: Annotated[
        list[str] | None,
        typer.Option(help="latest|current|label:NAME|score; repeat to chain, first decisive wins."),
    ] = None,
    redact: Annotated[
        list[str] | None,
        typer.Option(
            help="Add a redaction rule or group (pii, network, all) to the default set; e.g. --redact ipv4 --redact environment."
        ),
    ] = None,
    no_redact: Annotated[
        bool, typer.Option("--no-redact", help="Write the sessions unredacted.")
    ] = False,
    secret: Annotated[list[str] | None, typer.Option(help="A literal secret to redact.")] = None,
    secret_env: Annotated[
        list[str] | None, typer.Option(help="An environment variable whose value is a secret.")
    ] = None,
    where: Annotated[
        str | None,
        typer.Option(
            help='Keep trajectories matching a SQL filter on their columns, e.g. "outcome_score >= 0.5".'
        ),
    ] = None,
    workers: Annotated[
        int | None, typer.Option(help="Worker processes (default: CPU count).")
    ] = None,
    executor: Annotated[str, typer.Option(help="local|ray")] = "local",
    strict: Annotated[
        bool, typer.Option("--strict", help="Exit 1 on the first unreadable input.")
    ] = False,
    mode: Annotated[
        str, typer.Option(help="error|overwrite|resume: what to do when --out is not empty.")
    ] = "error",
    config: Annotated[Path | None, typer.Option(help="A TOML file of options.")] = None,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="No progress and no summary.")
    ] = False,
    license_id: Annotated[
        str,
        typer.Option("--license", help="License id for the dataset card (a Hub id, or 'other')."),
    ] = "other",
) -> None:
    """Export every trajectory as ATIF v1.8 plus Parquet tables, laid out as a Hugging Face dataset.

    Example: trajset export ~/.agent/sessions --out my-dataset --prefer label:kept --prefer score
    """
    import os

    from trajset.redactors import custom_rule, selected_rules

    from .config import load_config
    from .export import EXECUTORS, ExportOptions, default_workers, run_export

    try:
        conf, custom = load_config(config) if config else ({}, [])
        prefer = prefer or conf.get("prefer")
        where = where or conf.get("where")
        license_id = license_id if license_id != "other" else conf.get("license", "other")
        redact = redact or conf.get("redact")
        secret_env = secret_env or conf.get("secret_env")
        workers = workers or conf.get("workers")
        no_redact = no_redact or conf.get("no_redact", False)
        store_kind = store_kind if store_kind != "auto" else conf.get("store_kind", "auto")
        rules = [custom_rule(spec) for spec in custom]
        names = selected_rules(redact or [])
    except UsageError as exc:
        _fail(str(exc), 2)
    if no_redact and (redact or secret or secret_env or custom):
        _fail(
            "--no-redact cannot be combined with --redact, --secret, --secret-env or custom rules",
            2,
        )
    secrets = list(secret or [])
    for var in secret_env or []:
        if var not in os.environ:
            _fail(f"--secret-env {var}: the environment variable is not set", 2)
        secrets.append(os.environ[var])
    if executor not in EXECUTORS:
        _fail(f"unknown --executor {executor!r}; valid: {', '.join(EXECUTORS)}", 2)
    if executor == "ray":
        _not_yet("--executor ray", "use --executor local")
    if workers is not None and workers < 1:
        _fail("--workers must be at least 1", 2)
    options = ExportOptions(
        prefer=tuple(prefer or ()),
        store_kind=store_kind,
        redact=not no_redact,
        redact_rules=tuple(names) if not no_redact else (),
        custom_rules=tuple((r.name, r.pattern.pattern) for r in rules),
        secret_count=len(secrets),
        where=where,
        license=license_id,
    )
    show = not quiet and sys.stderr.isatty()
    bar = _ProgressBar() if show else None

    def progress(done: int, total: int) -> None:
        if bar is not None:
            bar.update(done, total)

    try:
        run = run_export(
            _stores(stores),
            out,
            options,
            workers=workers or default_workers(),
            mode=mode,
            progress=progress,
            version=__version__,
            secrets=secrets,
        )
    except UsageError as exc:
        _fail(str(exc), 2)
    except AbortRun as exc:
        _fail(str(exc), 1)
    finally:
        if bar is not None:
            bar.close()
    if not quiet:
        _summary(run, out)
    if strict and run.errors:
        first = run.errors[0]
        _fail(
            f"--strict: {first.source}{':' + str(first.line) if first.line else ''}: {first.kind}: {first.message}",
            1,
        )


class _ProgressBar:
    """A units progress bar on stderr (rich comes with typer)."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

        self._progress = Progress(
            "export",
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=Console(stderr=True),
            transient=True,
        )
        self._task = self._progress.add_task("units", total=None)
        self._progress.start()

    def update(self, done: int, total: int) -> None:
        self._progress.update(self._task, completed=done, total=total)

    def close(self) -> None:
        self._progress.stop()


def _summary(run: RunResult, out: Path) -> None:
    """The short stats table printed after an export (stderr)."""
    c = run.stats.counts
    rate = run.bytes_read / 1e6 / run.seconds if run.seconds else 0.0
    rows = [
        ("units", c["units"]),
        ("sessions", c["sessions_read"]),
        ("trees", c["trees"]),
        ("trajectories", c["trajectories"]),
        ("steps", c["steps"]),
        ("pairs", c["pairs"]),
        ("filtered out", c["trajectories_filtered_out"]),
        ("errors", len(run.errors)),
        ("MB/s", f"{rate:.2f}"),
    ]
    for key, n in sorted(run.stats.counts.items()):
        if key.startswith("redacted/tree/"):
            rows.append((f"redacted {key.rsplit('/', 1)[1].rsplit('_v', 1)[0]}", n))
    typer.echo(f"wrote {out}", err=True)
    for k, v in rows:
        typer.echo(f"  {k:<24}{v:>10}", err=True)


# --------------------------------------------------------------------------- inspect / verify


@app.command()
def inspect(
    store: StoreArgs = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per session.")] = False,
) -> None:
    """Show sessions, trees, forks, leaves and problems of a store.

    Example: trajset inspect ~/.agent/sessions/home-u-proj
    """
    from .inspect import inspect_store

    try:
        reports = inspect_store(_stores(store))
    except UsageError as exc:
        _fail(str(exc), 2)
    totals = {"sessions": 0, "unreadable": 0, "entries": 0, "forks": 0, "leaves": 0, "truncated": 0}
    for rep in reports:
        totals["sessions"] += 1
        if rep.get("error"):
            totals["unreadable"] += 1
        totals["entries"] += rep.get("entries", 0)
        totals["forks"] += len(rep.get("forks", []))
        totals["leaves"] += len(rep.get("leaves", []))
        totals["truncated"] += bool(rep.get("truncated"))
        typer.echo(json.dumps(rep, ensure_ascii=False) if as_json else _format_report(rep))
    if not as_json:
        typer.echo(", ".join(f"{v} {k}" for k, v in totals.items()))


def _format_report(rep: dict) -> str:
    if rep.get("error"):
        return f"{rep['source']}\n  UNREADABLE: {rep['error']}\n"
    lines = [
        f"{rep['session_id']}  {rep['name'] or ''}".rstrip(),
        f"  file      {rep['source']}",
        f"  entries   {rep['entries']}   roots {len(rep['roots'])}   leaves {len(rep['leaves'])}"
        f"   current leaf {rep['current_leaf']}   main leaf {rep['main_leaf']}",
    ]
    for fork in rep["forks"]:
        lines.append(f"  fork      {fork['entry_id']} -> {', '.join(fork['children'])}")
    for k in rep["compactions"]:
        lines.append(f"  compaction {k['entry_id']} keeps from {k['first_kept']}")
    if rep.get("truncated"):
        t = rep["truncated"]
        lines.append(f"  truncated line {t['line']}: {t['reason']}")
    for p in rep["problems"]:
        lines.append(f"  problem   {p}")
    return "\n".join(lines) + "\n"


@app.command()
def verify(store: StoreArgs = None) -> None:
    """Rebuild every recorded request hash and check the record rules; exit 1 on a mismatch.

    Example: trajset verify session.jsonl
    """
    from .inspect import verify_store

    try:
        lines, failed = verify_store(_stores(store))
    except UsageError as exc:
        _fail(str(exc), 2)
    for line in lines:
        typer.echo(line)
    if failed:
        raise typer.Exit(1)


# --------------------------------------------------------------------------- validate / schema


@app.command()
def validate(directory: Annotated[Path, typer.Argument(help="An export folder.")]) -> None:
    """Check every ATIF document, every table against its schema, and the card against the folder.

    Example: trajset validate my-dataset
    """
    from .validate import validate_folder

    if not (directory / "atif").is_dir() and not (directory / "data").is_dir():
        _fail(f"{directory} has no atif/ or data/ folder; is it a trajset export?", 2)
    problems, summary = validate_folder(directory)
    for p in problems:
        typer.echo(p)
    typer.echo(summary)
    if problems:
        raise typer.Exit(1)


@app.command()
def schema(
    name: Annotated[
        str, typer.Argument(help="atif|trajectories|steps|outcomes|preferences|errors")
    ],
) -> None:
    """Print the JSON Schema of ATIF or the declared Arrow schema of a table.

    Example: trajset schema atif > atif-v1.8.schema.json
    """
    from trajset.schemas.tables import TABLES, schema_json

    if name == "atif":
        from trajset.schemas.atif import json_schema

        typer.echo(json.dumps(json_schema(), indent=2))
    elif name in TABLES:
        typer.echo(json.dumps(schema_json(name), indent=2))
    else:
        _fail(f"unknown schema {name!r}; valid: atif, {', '.join(TABLES)}", 2)


@app.command()
def convert(
    store: Annotated[Path, typer.Argument(help="An einox or suga store.")],
    to: Annotated[str, typer.Option(help="Target format.")] = "agentsession",
    out: Annotated[Path, typer.Option("--out", "-o", help="Output folder.")] = Path("converted"),
) -> None:
    """Convert an einox or suga store into Agent Session Format files.

    Example: trajset convert ~/einox/data --to agentsession --out sessions/
    """
    _not_yet("convert", "the einox and suga readers have not landed")


@app.command()
def publish(
    directory: Annotated[Path, typer.Argument(help="An export folder.")],
    repo_id: Annotated[
        str, typer.Argument(help="Hub dataset repository, e.g. acme/agent-sessions.")
    ],
    private: Annotated[bool, typer.Option("--private/--public")] = True,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="List what would be uploaded.")
    ] = False,
) -> None:
    """Upload an export folder to the Hugging Face Hub as a dataset.

    Example: trajset publish my-dataset acme/agent-sessions --private
    """
    _not_yet("publish", "publishing arrives with the dataset folder")


def main() -> None:
    """Console entry point: usage errors from deep inside still exit 2 with one line."""
    try:
        app()
    except SessionReadError as exc:
        typer.echo(f"trajset: {exc}", err=True)
        sys.exit(1)
    except TrajsetError as exc:
        typer.echo(f"trajset: {exc}", err=True)
        sys.exit(2 if isinstance(exc, UsageError) else 1)
