"""Commands whose issues have not landed yet: they say so and exit 2."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .. import __version__
from .errors import USAGE, exits, fail


@exits
def publish(
    directory: Annotated[Path, typer.Argument(help="An export folder.")],
    repo_id: Annotated[str, typer.Argument(help="Hub dataset repository, e.g. acme/sessions.")],
    private: Annotated[bool, typer.Option("--private/--public")] = True,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="List what would be uploaded.")
    ] = False,
) -> None:
    """Upload an export folder to the Hugging Face Hub as a dataset.

    Example: trajset publish my-dataset acme/agent-sessions --private
    """
    fail(f"publish is not available yet in trajset {__version__}", USAGE)
