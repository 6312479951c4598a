"""What ``trajset validate`` checks of ``traces/``: each file reads back as the viewer's format.

A file's first line says its shape (``trajset.shape``).  Session Trace Simple Format
files are read back line by line as the documented schema (``schemas/sts.py``); a
native file's lines must each be a JSON object with a string ``type``, as the agent's
own records are, and its first line must name its session.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from trajset.schemas.sts import validate_line


def trace_problems(path: Path) -> list[str]:
    """What is wrong with one trace file ([] when nothing)."""
    try:
        with open(path, "rb") as fh:  # line by line: a long session's trace is never held
            return _problems(path, fh)
    except OSError as exc:
        return [f"{path}: not readable ({exc.strerror or exc})"]


def _problems(path: Path, lines: Iterable[bytes]) -> list[str]:
    problems: list[str] = []
    sts, n = False, 0
    for n, line in enumerate(lines, 1):
        if n == 1:
            try:
                sts = json.loads(line)["trajset"]["shape"] == "sts"
            except (ValueError, KeyError, TypeError):
                return [f"{path}:1: the first line names no trajset session (trajset.shape)"]
        if sts:
            err = validate_line(line, first=n == 1)
        else:
            try:
                value = json.loads(line)
                err = None if isinstance(value.get("type"), str) else "no string type"
            except (ValueError, AttributeError, RecursionError):
                err = "not a JSON object"
        if err:
            problems.append(f"{path}:{n}: {err}")
            if len(problems) == 20:
                break
    return problems if n else [f"{path}: empty trace"]
