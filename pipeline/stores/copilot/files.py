"""Which files are Copilot CLI sessions, in its three layouts (specs/copilot-cli.md §1).

``session-state/<id>/events.jsonl`` (from ~0.0.385), the flat ``session-state/<id>.jsonl``
(0.0.342 on; 1.0.x keeps appending to it) and ``history-session-state/session_<id>_<ms>.json``
(before 0.0.342).  An events file's first line is a ``session.start`` whose producer is
``copilot-agent``.  A ``/fork`` copy repeats its source's events under the same ids, its
``session.start`` included (rewritten, same id): the files whose first event has one id are
one lineage, read together.  ``session-store.db``, logs, config and command history are
never read.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from contextlib import suppress
from pathlib import Path
from typing import Any

from ..jsonl import BOM
from ..regular import open_input

JSON = Any
PRODUCER = "copilot-agent"
LEGACY_NAME = re.compile(r"session_.+_\d+\.json")
#: how much of a first line is read to know a file (its session.start is about 500 bytes)
HEAD_BYTES = 1 << 16


def first_event(path: Path) -> dict[str, JSON] | None:
    """The first line's event, when it decodes to an object."""
    with suppress(OSError), open_input(path) as fh:
        line = fh.readline(HEAD_BYTES)
        with suppress(ValueError, UnicodeDecodeError, RecursionError):
            d = json.loads(line.removeprefix(BOM))
            return d if isinstance(d, dict) else None
    return None


def is_events_file(path: Path) -> bool:
    """An events file: its first event is Copilot's ``session.start``."""
    if path.suffix != ".jsonl" or not path.is_file():
        return False
    d = first_event(path)
    data = d.get("data") if d else None
    return bool(d and d.get("type") == "session.start" and isinstance(data, dict)
                and data.get("producer") == PRODUCER)  # fmt: skip


def is_legacy_file(path: Path) -> bool:
    """A pre-0.0.342 session: ``session_<id>_<ms>.json`` holding ``chatMessages``."""
    if not LEGACY_NAME.fullmatch(path.name) or not path.is_file():
        return False
    with suppress(OSError), open_input(path) as fh:
        return b'"chatMessages"' in fh.read(HEAD_BYTES)
    return False


def session_files(path: Path) -> list[Path]:
    """The session files at or below ``path``: a home (``~/.copilot``), its ``session-state``
    or ``history-session-state``, a session folder, or one file; sorted."""
    if path.is_file():
        return [path] if is_events_file(path) or is_legacy_file(path) else []
    found: set[Path] = set()
    for root in (path, path / "session-state", path / "history-session-state"):
        if not root.is_dir():
            continue
        found |= {p for p in root.glob("*/events.jsonl") if p.is_file()}
        found |= {p for p in root.glob("*.jsonl") if is_events_file(p)}
        found |= {p for p in root.glob("session_*.json") if is_legacy_file(p)}
    if (path / "events.jsonl").is_file():
        found.add(path / "events.jsonl")
    # an events.jsonl is claimed by its name only beside a Copilot session (an empty one is
    # then its own error row): in a store where some events file is Copilot's
    if not any(is_events_file(p) or is_legacy_file(p) for p in found):
        return []
    return sorted(found)


def lineages(files: Iterable[Path]) -> list[list[Path]]:
    """The files grouped by their first event's id (a ``/fork`` copy with its source), each
    group in the order its sessions started (a copy's start is the fork time), then by name."""
    groups: dict[str, list[Path]] = {}
    for f in files:
        d = first_event(f) if f.suffix == ".jsonl" else None
        eid = d.get("id") if d else None
        key = eid if isinstance(eid, str) else f"file:{f}"
        groups.setdefault(key, []).append(f)
    return sorted((sorted(g, key=_started) for g in groups.values()), key=lambda g: str(g[0]))


def _started(path: Path) -> tuple[str, str]:
    d = first_event(path) if path.suffix == ".jsonl" else None
    data = d.get("data") if d else None
    start = data.get("startTime") if isinstance(data, dict) else None
    return (start if isinstance(start, str) else "", str(path))
