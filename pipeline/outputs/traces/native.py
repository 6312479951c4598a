"""A session's store files in the agent's own JSONL shape, every value redacted.

For the store kinds the Hub's trace viewer reads as they are (Claude Code, Codex, Pi):
each line of each file the session was read from is decoded, passed through the same
redactor as the session's tree (its placeholders, so a value reads the same in the
tables and the trace), and written again as compact JSON, in file order, so the
session's branches (rewinds, rollbacks, forks) stay as the agent wrote them.  A line
that does not decode is left out and counted (the session's read already made it an
error row).  The first line gets a ``trajset`` member (session, store kind, rule-set
version): readers ignore members they do not know.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trajset.redactors import Placeholders, Redactor

from ...stores.codex.rollouts import rollout_lines

JSON = Any


@dataclass
class Dropped:
    """Lines of the files that did not decode, left out of the trace."""

    lines: int = 0


def _raw_lines(path: Path) -> Iterable[bytes]:
    """The file's lines as its reader reads them (a Codex ``.zst`` rollout decompressed)."""
    data = rollout_lines(path)
    return data.splitlines() if isinstance(data, bytes) else data


def encoded(value: JSON) -> bytes:
    """One compact JSON line; a lone surrogate (escaped in the file) stays escaped."""
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
    except UnicodeEncodeError:
        return json.dumps(value, separators=(",", ":")).encode() + b"\n"


def native_lines(
    path: Path,
    redactor: Redactor | None,
    placeholders: Placeholders,
    stamp: JSON | None,
    dropped: Dropped,
) -> Iterator[bytes]:
    """The file's lines redacted; ``stamp`` joins the first as its ``trajset`` member."""
    for raw in _raw_lines(path):
        if not raw.strip():
            continue
        try:
            value = json.loads(raw)
        except (ValueError, RecursionError):
            dropped.lines += 1
            continue
        if redactor is not None:
            value = redactor.value(value, placeholders)
        if stamp is not None and isinstance(value, dict):
            value, stamp = {**value, "trajset": stamp}, None
        yield encoded(value)
