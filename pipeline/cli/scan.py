"""``trajset scan``: look for anything a redaction rule finds in an export folder."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from trajset.redactors.identities import home_users

from ..options import resolve
from ..scan import scan_folder, second_opinion_of
from .errors import FAILED, exits, fail


@exits
def scan(
    directory: Annotated[Path, typer.Argument(help="An export folder.")],
    redact: Annotated[
        list[str] | None, typer.Option(help="Add a rule or group to the default set.")
    ] = None,
    secret: Annotated[list[str] | None, typer.Option(help="A literal secret to look for.")] = None,
    secret_env: Annotated[
        list[str] | None, typer.Option(help="A variable holding a secret.")
    ] = None,
    home: Annotated[list[str] | None, typer.Option(help="A home folder to look for.")] = None,
    redact_terms: Annotated[
        Path | None,
        typer.Option(
            help="A file of names to look for (people, companies, codenames), one per line."
        ),
    ] = None,
    accept: Annotated[
        list[str] | None,
        typer.Option(help="The id of a detect-secrets finding you found harmless; repeatable."),
    ] = None,
) -> None:
    """Run every redaction rule, and detect-secrets beside them, over every file of an
    export; exit 1 when anything is found.

    Prints findings per file and rule (detect-secrets' also with their row or member and an
    id), never the text. Example: trajset scan my-dataset --redact pii
    """
    flags = {"redact": redact, "secret": secret, "secret_env": secret_env, "home": home,
             "redact_terms": redact_terms}  # fmt: skip
    options, run = resolve(flags, None, 1)
    # the user running the scan is looked for as a name too (an export numbers the names it knows)
    me = home_users([os.environ.get("HOME", ""), f"/home/{os.environ.get('USER', '')}"])
    report = scan_folder(
        directory, options.redactor(list(run.secrets), run.terms, me, (), run.pseudonym_key)
    )
    for rel, counts in sorted(report.items()):
        for rule, n in sorted(counts.items()):
            typer.echo(f"{rel}: {rule}: {n}")
    second = second_opinion_of(directory, frozenset(accept or ()))
    for finding in second:
        typer.echo(finding.line())
    total = sum(sum(c.values()) for c in report.values())
    files = len(set(report) | {f.file for f in second})
    typer.echo(f"{total} finding(s) of the redaction rules, {len(second)} of detect-secrets, "
               f"in {files} file(s)")  # fmt: skip
    if total or second:
        fail("redaction findings in the export (listed above); do not publish it as it is", FAILED)
