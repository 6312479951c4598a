"""``trajset sources``: which stores of which kinds this machine holds at their default places."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from ..sources import local_sources
from ..stores import READERS
from .errors import exits


@exits
def sources(
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per store.")] = False,
) -> None:
    """List the stores of every registered kind found at their default locations.

    Each line: kind, sessions, size and path. `trajset export --all-local --out DIR`
    exports every one of them.

    Example: trajset sources
    """
    found = local_sources()
    for s in found:
        if as_json:
            row = {"kind": s.kind, "path": str(s.path), "sessions": s.sessions, "bytes": s.bytes}
            typer.echo(json.dumps(row | ({"problem": s.problem} if s.problem else {})))
        else:
            note = f"   ({s.problem})" if s.problem else ""
            typer.echo(f"{s.kind:<20}{s.sessions:>8} sessions{_size(s.bytes):>11}   {s.path}{note}")
    if not as_json:
        searched = [f"{k}: {loc.describe()}" for k, r in READERS.items() for loc in r.locations]
        typer.echo(
            f"{len(found)} store(s) found; searched {'; '.join(searched)}",
            err=True,
        )


def _size(n: int) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} B"
