"""``trajset publish``: an export folder to the Hugging Face Hub (``pipeline/publish.py``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..publish import hub_client, plan, upload
from .errors import exits


@exits
def publish(
    directory: Annotated[Path, typer.Argument(help="An export folder.")],
    repo_id: Annotated[str, typer.Argument(help="Hub dataset repository, e.g. acme/sessions.")],
    private: Annotated[
        bool, typer.Option("--private/--public", help="Visibility of a new repository.")
    ] = True,
    revision: Annotated[
        str, typer.Option(help="Branch to commit to (created if missing).")
    ] = "main",
    message: Annotated[
        str, typer.Option(help="Commit message (default: version and counts).")
    ] = "",
    create_pr: Annotated[
        bool, typer.Option("--create-pr", help="Open a pull request instead of committing.")
    ] = False,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="List every file, not each folder.")
    ] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print the plan; send nothing.")
    ] = False,
    allow_unredacted: Annotated[
        bool,
        typer.Option(
            "--allow-unredacted",
            help="Publish an export made without redaction, or one scan flags.",
        ),
    ] = False,
) -> None:
    """Upload an export folder to the Hugging Face Hub as a dataset, after validate and scan.

    The token comes from HF_TOKEN or `huggingface-cli login`; it is never printed.
    Example: trajset publish my-dataset acme/agent-sessions --private
    """
    p = plan(
        directory, repo_id, private=private, revision=revision, message=message,
        create_pr=create_pr, allow_unredacted=allow_unredacted,
    )  # fmt: skip
    for line in p.lines(every_file=verbose):
        typer.echo(line)
    if dry_run:
        typer.echo("dry run: nothing was sent")
        return
    result = upload(p, hub_client(), lambda line: typer.echo(line, err=True))
    typer.echo(f"published: {getattr(result, 'commit_url', None) or result}")
