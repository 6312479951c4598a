"""JSON Lines read leniently: a line that does not decode is an issue, the other lines are kept.

A crashed writer leaves a cut last line (a partial character included); that is
reported as ``truncated`` and everything before it read.  Shared by the readers
of line-oriented stores (Claude Code, Codex).
"""

from __future__ import annotations

import json
from typing import Any

from trajset.schemas.session import Issue

JSON = Any


def objects(data: bytes, name: str) -> tuple[list[tuple[int, dict[str, JSON]]], list[Issue]]:
    """(1-based line number, object) of every line that decodes to an object, and an issue
    for each line that does not decode (``truncated`` for the last line, else ``bad_line``);
    ``name`` is the file name the issues give.  Blank lines and non-object values are
    skipped without an issue."""
    out: list[tuple[int, dict[str, JSON]]] = []
    issues: list[Issue] = []
    lines = data.split(b"\n")
    for i, chunk in enumerate(lines, 1):
        if not chunk.strip():
            continue
        try:
            raw = json.loads(chunk.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError) as exc:
            last = i == len(lines) or (i == len(lines) - 1 and not lines[-1])
            what = "the final line is cut short" if last else "a line does not decode"
            issues.append(
                Issue(
                    "truncated" if last else "bad_line",
                    i,
                    f"{name}: {what} ({_why(exc)}); the other lines were read",
                )
            )
            continue
        if isinstance(raw, dict):
            out.append((i, raw))
    return out, issues


def _why(exc: Exception) -> str:
    """What is wrong with a line, shortly: the decoder's message and where."""
    if isinstance(exc, json.JSONDecodeError):
        return f"{exc.msg}, column {exc.colno}"
    if isinstance(exc, UnicodeDecodeError):
        return f"not UTF-8 at byte {exc.start}"
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    return str(exc)[:80] or type(exc).__name__
