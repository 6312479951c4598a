"""Pi session files: where they are, their header, and their entries as version 3 has them.

``~/.pi/agent/sessions/--<cwd>--/<ts>_<uuid>.jsonl`` (specs/pi.md §1): line 1 is
the header (``type: session``, no ``format``), every other line an entry.
Version 1 files are linear and carry no ids: each entry gets ``l<line>`` and
the entry before it as parent, and a compaction's ``firstKeptEntryIndex`` (a
line index, the header at 0) becomes the id of the entry on that line, as
Pi's own migration does; version 2's ``hookMessage`` role is read as
``custom``.  The user's files are never rewritten.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trajset.schemas.session import Issue

from ...errors import SessionReadError
from ..base import read_input
from ..jsonl import objects
from ..regular import open_input

JSON = Any
HEAD_BYTES = 1 << 16


def header_of(d: JSON) -> bool:
    return (
        isinstance(d, dict)
        and d.get("type") == "session"
        and isinstance(d.get("id"), str)
        and "cwd" in d
        and "format" not in d
    )


def header(path: Path) -> dict[str, JSON] | None:
    """The header of a Pi session file (its first line), read cheaply; None if it is none."""
    if not path.is_file() or path.suffix != ".jsonl":
        return None
    try:
        with open_input(path) as fh:
            first = json.loads(fh.readline(HEAD_BYTES))
    except (OSError, ValueError, UnicodeDecodeError, RecursionError):
        return None
    return first if header_of(first) else None


def is_session(path: Path) -> bool:
    """A Pi session file: ``.jsonl`` whose first line is a Pi header."""
    return header(path) is not None


def project_dirs(path: Path) -> list[Path]:
    """The folders of session files at or below ``path`` (the sessions folder, a project)."""
    if any(is_session(p) for p in sorted(path.glob("*.jsonl"))[:8]):
        return [path]
    for root in (path, path / "sessions", path / "agent" / "sessions"):
        if root.is_dir():
            found = [
                p
                for p in sorted(root.iterdir())
                if p.is_dir() and any(is_session(f) for f in sorted(p.glob("*.jsonl"))[:8])
            ]
            if found:
                return found
    return []


@dataclass
class PiFile:
    """One session file: its header, its entries (each with its line), what did not read."""

    path: str
    header: dict[str, JSON]
    entries: list[tuple[int, dict[str, JSON], bytes]]  # (line, entry as v3, the line's bytes)
    issues: list[Issue] = field(default_factory=list)

    @property
    def version(self) -> int:
        v = self.header.get("version")
        return v if isinstance(v, int) and not isinstance(v, bool) else 1

    @property
    def source(self) -> str:
        """The file name stem of the session this one was forked from ("" if none)."""
        src = self.header.get("parentSession") or self.header.get("branchedFrom")
        return Path(str(src).replace("\\", "/")).stem if isinstance(src, str) and src else ""


def read_pi(path: Path) -> PiFile:
    """The file's entries as version 3 has them; ``SessionReadError`` without a valid header."""
    data = read_input(path)
    found, issues = objects(data, path.name)
    if not found or found[0][0] != 1 or not header_of(found[0][1]):
        raise SessionReadError(
            "not a Pi session: its first line is not a Pi header "
            '({"type": "session", "id", "cwd", ...}); pass ~/.pi/agent/sessions, a project folder or a session file',
            rule="truncated" if issues and issues[0].line == 1 else "format", source=str(path), line=1,
        )  # fmt: skip
    lines = data.split(b"\n")
    header = found[0][1]
    out = PiFile(str(path), header, [(n, e, lines[n - 1]) for n, e in found[1:]], issues)
    if out.version < 2:
        _migrate_v1(out, [e for _, e in found])
    for _, e, _ in out.entries:
        m = e.get("message")
        if e.get("type") == "message" and isinstance(m, dict) and m.get("role") == "hookMessage":
            e["message"] = {**m, "role": "custom"}
    return out


def _migrate_v1(f: PiFile, decoded: list[dict[str, JSON]]) -> None:
    """Ids ``l<line>``, each entry the child of the one before; index-based compactions."""
    ids = [f"l{n}" for n, _, _ in f.entries]
    prev = None
    for (_, e, _), eid in zip(f.entries, ids, strict=True):
        e.setdefault("id", eid)
        e.setdefault("parentId", prev)
        prev = e["id"]
        index = e.get("firstKeptEntryIndex")
        if e.get("type") == "compaction" and isinstance(index, int) and 0 < index < len(decoded):
            e.setdefault("firstKeptEntryId", decoded[index].get("id"))
