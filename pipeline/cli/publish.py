"""``trajset publish``: an export folder to the Hugging Face Hub (``pipeline/publish.py``)."""

from __future__ import annotations

import tempfile
from contextlib import ExitStack
from pathlib import Path
from typing import Annotated

import typer

from ..outputs.remote import download, is_url
from ..publish import hub_client, plan, upload
from .errors import exits


@exits
def publish(
    directory: Annotated[
        str, typer.Argument(help="An export folder, or the fsspec URL an export was written to.")
    ],
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
    accept: Annotated[
        list[str] | None,
        typer.Option(
            help="The id of a detect-secrets finding you looked at and found harmless "
            "(scan prints the ids); repeat for several."
        ),
    ] = None,
) -> None:
    """Upload an export folder to the Hugging Face Hub as a dataset, after validate and scan.

    The token comes from HF_TOKEN or `huggingface-cli login`; it is never printed.
    Example: trajset publish my-dataset acme/agent-sessions --private

    Example: trajset publish s3://my-bucket/datasets/v3 acme/agent-sessions
    """
    with ExitStack() as stack:
        folder = Path(directory)
        if is_url(directory):  # copied down whole first: the checks read every file
            copy = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="trajset-")))
            typer.echo(f"copying {directory} to a temporary folder", err=True)
            folder = download(directory, copy / "export")
        _publish(folder, repo_id, private, revision, message, create_pr, verbose, dry_run,
                 allow_unredacted, frozenset(accept or ()))  # fmt: skip


def _publish(
    directory: Path, repo_id: str, private: bool, revision: str, message: str,
    create_pr: bool, verbose: bool, dry_run: bool, allow_unredacted: bool, accept: frozenset[str],
) -> None:  # fmt: skip
    p = plan(
        directory, repo_id, private=private, revision=revision, message=message,
        create_pr=create_pr, allow_unredacted=allow_unredacted, accept=accept,
    )  # fmt: skip
    for line in p.lines(every_file=verbose):
        typer.echo(line)
    if dry_run:
        typer.echo("dry run: nothing was sent")
        return
    result = upload(p, hub_client(), lambda line: typer.echo(line, err=True))
    typer.echo(f"published: {getattr(result, 'commit_url', None) or result}")
