"""``trajset scan``: look for anything a redaction rule finds in an export folder."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..options import resolve
from ..scan import scan_folder
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
) -> None:
    """Run every redaction rule over every file of an export; exit 1 when anything is found.

    Prints findings per file and rule, never the text. Example: trajset scan my-dataset --redact pii
    """
    flags = {"redact": redact, "secret": secret, "secret_env": secret_env, "home": home,
             "redact_terms": redact_terms}  # fmt: skip
    options, run = resolve(flags, None, 1)
    report = scan_folder(directory, options.redactor(list(run.secrets), run.terms))
    for rel, counts in sorted(report.items()):
        for rule, n in sorted(counts.items()):
            typer.echo(f"{rel}: {rule}: {n}")
    total = sum(sum(c.values()) for c in report.values())
    typer.echo(f"{total} finding(s) in {len(report)} file(s)")
    if total:
        fail("redaction findings in the export (listed above); do not publish it as it is", FAILED)
