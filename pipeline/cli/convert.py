"""``trajset convert``: a store of any kind as Agent Session Format files."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import typer

from ..convert import convert_store
from ..options import reader_options
from .errors import FAILED, exits, fail
from .export import ReaderOptions, StoreKindOption


@exits
def convert(
    stores: Annotated[list[Path], typer.Argument(help="einox stores, or any store trajset reads.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Output folder (new or empty).")],
    to: Annotated[Literal["agentsession"], typer.Option(help="Target format.")] = "agentsession",
    store_kind: StoreKindOption = None,
    reader_option: ReaderOptions = None,
) -> None:
    """Convert a store into Agent Session Format files (jsonl store layout) that verify accepts.

    Example: trajset convert ~/einox/data --to agentsession --out sessions/
    """
    result = convert_store(stores, out, store_kind or "auto", reader_options(reader_option or []))
    for exc in result.errors:
        typer.echo(f"trajset: not converted: {exc}", err=True)
    typer.echo(
        f"wrote {len(result.written)} sessions to {out}; {len(result.errors)} unreadable, "
        f"{result.skipped} folders without sessions skipped",
        err=True,
    )
    if result.errors:
        fail(f"{len(result.errors)} input(s) could not be converted (listed above)", FAILED)
