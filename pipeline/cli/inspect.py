"""``trajset inspect`` and ``trajset verify``: look at a store without exporting it."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from ..inspect import inspect_store, verify_store
from .errors import exits
from .export import StoreArgs, StoreKindOption, stores_or_sample


@exits
def inspect(
    store: StoreArgs = None,
    as_json: bool = typer.Option(False, "--json", help="One JSON object per session."),
    store_kind: StoreKindOption = None,
) -> None:
    """Show sessions, trees, forks, leaves and problems of a store.

    Example: trajset inspect ~/.agent/sessions/home-u-proj
    """
    reports = inspect_store(stores_or_sample(store), store_kind or "auto")
    totals = {"sessions": 0, "unreadable": 0, "entries": 0, "forks": 0, "leaves": 0, "truncated": 0}
    for rep in reports:
        totals["sessions"] += 1
        totals["unreadable"] += bool(rep.get("error"))
        totals["entries"] += rep.get("entries", 0)
        totals["forks"] += len(rep.get("forks", []))
        totals["leaves"] += len(rep.get("leaves", []))
        totals["truncated"] += bool(rep.get("truncated"))
        typer.echo(json.dumps(rep, ensure_ascii=False) if as_json else format_report(rep))
    if not as_json:
        typer.echo(", ".join(f"{v} {k}" for k, v in totals.items()))


def format_report(rep: dict[str, Any]) -> str:
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
        lines.append(
            f"  compaction {k['entry_id']}: a summary stands for the context before entry "
            f"{k['first_kept']}"
        )
    for link in rep.get("links") or []:
        lines.append(f"  link      {link}")
    for key, n in (rep.get("reader") or {}).items():
        lines.append(f"  {key:<40}{n:>6}")
    if rep.get("truncated"):
        t = rep["truncated"]
        lines.append(f"  truncated line {t['line']}: {t['reason']}")
    for p in rep["problems"]:
        lines.append(f"  problem   {p}")
    return "\n".join(lines) + "\n"


@exits
def verify(
    store: StoreArgs = None,
    store_kind: StoreKindOption = None,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="Also a line for every response checked.")
    ] = False,
) -> None:
    """Rebuild every recorded request hash and check the record rules; exit 1 on a problem.

    Prints one line per problem (a mismatch, a record rule broken, a file that does not
    read), warnings (a cut last line), and a total. Example: trajset verify session.jsonl
    """
    found = verify_store(stores_or_sample(store), store_kind or "auto")
    for line in [*(found.details if verbose else []), *found.problems, *found.warnings]:
        typer.echo(line)
    typer.echo(found.total())
    if found.problems:
        raise typer.Exit(1)
