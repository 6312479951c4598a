"""The ``trajset`` command line (DESIGN §3): thin typer commands, one module per concern.

Exit codes (``errors.py``, the one place they are decided): 0 success; 1
processing failed (``--strict`` saw a bad input, ``verify`` found a
mismatch, ``validate`` found an invalid file); 2 usage or configuration error.
"""

from __future__ import annotations

from typing import Annotated

import typer

from .. import __version__
from ..tuning import pyarrow_without_pandas
from .convert import convert
from .export import export
from .inspect import inspect, verify
from .publish import publish
from .report import report
from .scan import scan
from .sources import sources
from .tokenize import tokenize
from .validate import schema, validate

app = typer.Typer(
    name="trajset",
    help="Turn agent session stores into ATIF trajectories and training datasets.\n\n"
    "Example: trajset export --out my-dataset   (exports the bundled sample store)",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
for command in (
    export, sources, inspect, verify, validate, scan, convert, tokenize, publish, report, schema
):  # fmt: skip
    app.command()(command)


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


def main() -> None:
    """Console entry point (a process trajset owns, so pyarrow is set up for it)."""
    pyarrow_without_pandas()
    app()
