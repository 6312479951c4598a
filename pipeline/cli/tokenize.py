"""``trajset tokenize``: add the ``tokenized`` and ``pair_tokens`` configs to an export; the
options it shares with ``trajset export --tokenizer``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ..executors import make_executor
from ..flags import annotated
from ..options import RunOptions
from ..run.driver import default_workers
from ..tokenize import tokenize_export
from ..tokenizing import parse_tokenize
from .errors import exits, fail

if TYPE_CHECKING:  # what the options parse to; typer reads their declaration (flags.py)
    Tokenizer = str | None
    ChatTemplate = Path | None
    MaxTokens = int | None
    Overlong = str | None
else:
    Tokenizer = annotated("tokenizer")
    ChatTemplate = annotated("chat_template")
    MaxTokens = annotated("max_tokens")
    Overlong = annotated("overlong")


@exits
def tokenize(
    directory: Annotated[Path, typer.Argument(help="An export folder.")],
    tokenizer: Tokenizer = None,
    chat_template: ChatTemplate = None,
    max_tokens: MaxTokens = None,
    overlong: Overlong = None,
    workers: Annotated[int | None, typer.Option(help="Worker processes (default: CPUs).")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print nothing but errors.")] = False,
) -> None:
    """Add the tokenized config (input_ids, assistant_masks) and pair token lengths to an export.

    Example: trajset tokenize my-dataset --tokenizer Qwen/Qwen2.5-0.5B-Instruct --max-tokens 8192
    """
    options = parse_tokenize(tokenizer, chat_template, max_tokens, overlong)
    if options is None:
        fail("--tokenizer is required: a tokenizer folder or a Hub id", 2)
    run = RunOptions(workers=min(workers or default_workers(), default_workers()), fork=True)
    with make_executor(run) as executor:
        counts = tokenize_export(directory, options, executor)
    if not quiet:
        typer.echo(
            f"wrote {directory}/data/tokenized: {counts.get('tokenized_rows', 0)} rows, "
            f"{counts.get('tokens', 0)} tokens ({counts.get('trainable_tokens', 0)} trainable)",
            err=True,
        )
