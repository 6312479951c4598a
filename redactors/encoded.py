"""Secrets inside base64: a ``.env`` or config file someone encoded (``base64 .env``).

A run of base64 (standard or URL-safe, 32 characters or more) whose bytes decode
to text is searched with the same rules; if they find anything, the whole run is
one finding, named by the rule that found it.  Runs that decode to binary (an
image, a digest read as base64) stop after their first 48 bytes, and that verdict is
remembered: most runs are no base64 at all but the paths and long names a store repeats
in every tool output (158,040 runs in a 47 MB Codex store, none of them text).
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Iterator
from functools import lru_cache

#: the trigger: a run long enough to hold a secret once decoded
BASE64_TRIGGER = r"[A-Za-z0-9+/_-]{32}"
_RUN = re.compile(r"(?<![A-Za-z0-9+/_=-])[A-Za-z0-9+/_-]{32,}={0,2}(?![A-Za-z0-9+/_=-])")
_PROBE = 64  # characters decoded first, to tell text from binary cheaply


def _text(chars: str) -> str | None:
    """The decoded text of a base64 run, or None when it is no base64 of UTF-8 text."""
    chars = chars.replace("-", "+").replace("_", "/")
    chars += "=" * (-len(chars) % 4)
    try:
        data = base64.b64decode(chars, validate=True)
        text = data.decode("utf-8")
    except (binascii.Error, ValueError):
        return None
    printable = sum(c.isprintable() or c in "\n\r\t" for c in text)
    return text if text and printable >= 0.95 * len(text) else None


def _looks_like_text(run: str) -> bool:
    probe = run[: _PROBE - _PROBE % 4].rstrip("=")
    if len(probe) < len(run):
        probe = probe[: len(probe) - len(probe) % 4]
    return _probe_is_text(probe) if len(probe) >= 4 else False


@lru_cache(maxsize=1 << 16)
def _probe_is_text(probe: str) -> bool:
    return _text(probe) is not None


def base64_findings(
    text: str, found_in: Callable[[str], list[tuple[int, int, int]]]
) -> Iterator[tuple[int, int, int]]:
    """(start, end, rule index) of each base64 run of ``text`` whose decoded text
    ``found_in`` finds something in; the rule is the first finding's."""
    for m in _RUN.finditer(text):
        run = m.group()
        if not _looks_like_text(run) or (decoded := _text(run)) is None:
            continue
        inner = found_in(decoded)
        if inner:
            yield m.start(), m.end(), min(inner)[2]
