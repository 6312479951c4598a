"""``trajset validate`` and ``trajset schema``: check an export folder, print a declared schema."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

import typer

from ..outputs.validate import validate_folder
from ..tables import SCHEMAS, schema_json
from .errors import USAGE, exits, fail

if TYPE_CHECKING:
    SchemaName = str
else:
    SchemaName = Literal[("atif", *SCHEMAS)]


@exits
def validate(directory: Annotated[Path, typer.Argument(help="An export folder.")]) -> None:
    """Check every ATIF document, every table against its schema, and the card against the folder.

    Example: trajset validate my-dataset
    """
    if not (directory / "atif").is_dir() and not (directory / "data").is_dir():
        fail(f"{directory} has no atif/ or data/ folder; is it a trajset export?", USAGE)
    problems, summary = validate_folder(directory)
    for p in problems:
        typer.echo(p)
    typer.echo(summary)
    if problems:
        raise typer.Exit(1)


@exits
def schema(name: Annotated[SchemaName, typer.Argument(help="atif or a table name.")]) -> None:
    """Print the JSON Schema of ATIF, or a table's columns: name, Arrow type, nullable, meaning.

    Example: trajset schema preferences  (or: trajset schema atif > atif-v1.8.schema.json)
    """
    if name == "atif":
        from trajset.schemas.atif import json_schema

        typer.echo(json.dumps(json_schema(), indent=2))
    else:
        typer.echo(json.dumps(schema_json(name), indent=2))
