"""``trajset report``: one self-contained HTML page of an export folder."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer

from ..report import write_report
from .errors import USAGE, exits, fail


@exits
def report(
    directory: Annotated[Path, typer.Argument(help="An export folder.")],
    out: Annotated[
        Path, typer.Option(help="Where to write the page (default: report.html here).")
    ] = Path("report.html"),
) -> None:
    """Write one HTML page of an export: table counts, distributions, redaction and every
    session's tree (forks, preferred path, scores, each step). It needs no network.

    Example: trajset report my-dataset --out report.html
    """
    if not (directory / "data").is_dir():
        fail(f"{directory} has no data/ folder; is it a trajset export?", USAGE)
    start = time.perf_counter()
    size = write_report(directory, out)
    typer.echo(
        f"wrote {out} ({size / 1e6:.1f} MB in {time.perf_counter() - start:.1f} s)", err=True
    )
