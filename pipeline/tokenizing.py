"""What ``--tokenizer``, ``--chat-template``, ``--max-tokens`` and ``--overlong`` ask for
(``trajset tokenize`` and ``export``), parsed from the command line or ``--config``.

The work itself is ``trajset.pipeline.tokenize``; this module holds only the options, so
``ExportOptions`` can carry them without importing a tokenizer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import UsageError

OVERLONG = ("drop", "truncate")


@dataclass(frozen=True)
class Limits:
    """``--max-tokens`` (None: no limit) and what ``--overlong`` does past it."""

    max_tokens: int | None = None
    overlong: str = "drop"  # drop | truncate


@dataclass(frozen=True)
class TokenizeOptions:
    """``--tokenizer`` (a folder or a Hub id), ``--chat-template`` (the template's text, not
    its path) and the limits."""

    tokenizer: str
    chat_template: str | None = None
    limits: Limits = field(default_factory=Limits)


def parse_tokenize(
    tokenizer: str | None,
    chat_template: str | Path | None,
    max_tokens: int | None,
    overlong: str | None,
) -> TokenizeOptions | None:
    """The options, checked (``UsageError`` saying how to fix one); None without a tokenizer."""
    if tokenizer is None:
        if chat_template is not None or max_tokens is not None or overlong is not None:
            raise UsageError("--chat-template, --max-tokens and --overlong need --tokenizer")
        return None
    if overlong is not None and overlong not in OVERLONG:
        raise UsageError(f"--overlong {overlong}: use {' or '.join(OVERLONG)}")
    if max_tokens is not None and max_tokens < 1:
        raise UsageError(f"--max-tokens {max_tokens}: give a positive number of tokens")
    template = None
    if chat_template is not None:
        try:
            template = Path(chat_template).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"--chat-template {chat_template}: cannot read it ({exc})") from None
    return TokenizeOptions(tokenizer, template, Limits(max_tokens, overlong or "drop"))


def from_flags(flags: dict[str, Any], conf: dict[str, Any]) -> TokenizeOptions | None:
    """``parse_tokenize`` of the flags, each else the config file's ``[export]`` value."""

    def pick(key: str) -> Any:
        return flags[key] if flags.get(key) is not None else conf.get(key)

    return parse_tokenize(
        pick("tokenizer"), pick("chat_template"), pick("max_tokens"), pick("overlong")
    )
