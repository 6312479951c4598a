"""``trajset publish``: an export folder to the Hugging Face Hub (``pipeline/publish.py``)."""

from __future__ import annotations

import tempfile
from contextlib import ExitStack
from pathlib import Path
from typing import Annotated

import typer

from ..outputs.remote import download, is_url
from ..publish import HubClient, Plan, hub_client, plan, upload
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
    prune: Annotated[
        bool,
        typer.Option(
            "--prune",
            help="Remove from the repository the sessions this export does not hold (by "
            "default they stay), so it holds exactly this export.",
        ),
    ] = False,
    license_id: Annotated[
        str,
        typer.Option(
            "--license", help="The licence the card names (default: the export's --license)."
        ),
    ] = "",
) -> None:
    """Upload an export folder to the Hugging Face Hub as a dataset, after validate and scan.

    A repository that holds an earlier publish grows: only new and changed rows and files
    are sent, a session exported again replaces its older rows, and one the export no longer
    holds stays (unless --prune). The token comes from HF_TOKEN or `huggingface-cli login`;
    it is never printed.

    Example: trajset publish my-dataset acme/agent-sessions --license apache-2.0

    Example: trajset publish s3://my-bucket/datasets/v3 acme/agent-sessions --prune
    """
    with ExitStack() as stack:
        folder = Path(directory)
        if is_url(directory):  # copied down whole first: the checks read every file
            copy = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="trajset-")))
            typer.echo(f"copying {directory} to a temporary folder", err=True)
            folder = download(directory, copy / "export")
        client = hub_client()
        p = plan(
            folder, repo_id, private=private, revision=revision, message=message,
            create_pr=create_pr, allow_unredacted=allow_unredacted,
            accept=frozenset(accept or ()), client=client, prune=prune, license_id=license_id,
        )  # fmt: skip
        _publish(p, client, verbose, dry_run)


def _publish(p: Plan, client: HubClient, verbose: bool, dry_run: bool) -> None:
    for line in p.lines(every_file=verbose):
        typer.echo(line)
    if dry_run:
        typer.echo("dry run: nothing was sent")
        return
    result = upload(p, client, lambda line: typer.echo(line, err=True))
    typer.echo(f"published: {getattr(result, 'commit_url', None) or result}")
