"""Which files are Qwen Code's (specs/qwen-code.md §1): a session file by its records, and
the files of a project folder (``chats/``, ``chats/archive/``, ``subagents/<session>/``)."""

from __future__ import annotations

import json
import re
from contextlib import suppress
from pathlib import Path

from ..jsonl import BOM
from ..regular import open_input

#: how Qwen Code names a session file: its session id
SESSION_FILE = re.compile(r"[0-9a-fA-F-]{32,36}\.jsonl")


#: what Qwen Code writes first in every record (``createBaseRecord``)
BASE_FIELDS = ("uuid", "parentUuid", "sessionId")


def is_qwen(path: Path, lines: int = 64) -> bool:
    """Whether the file's records are Qwen Code's: uuid/parentUuid/sessionId records like
    Claude Code's, but a message holds Gemini's ``parts`` (or is the ``model``'s), and
    Qwen's own records carry ``systemPayload``.  The first record that says decides; a
    first record with none of the base fields says no (another agent's header: the rest of
    its file need not be parsed)."""
    if not path.is_file():  # a FIFO would block, a folder has no line
        return False
    first = True
    with suppress(OSError), open_input(path) as fh:
        for _, line in zip(range(lines), fh, strict=False):
            with suppress(ValueError, UnicodeDecodeError, RecursionError):
                record = json.loads(line.removeprefix(BOM))
                if first and isinstance(record, dict) and not any(f in record for f in BASE_FIELDS):
                    return False
                first, said = False, _says(record)
                if said is not None:
                    return said
    return False


def _says(record: object) -> bool | None:
    """True for a Qwen Code record, False for a record that is not one, None when it cannot
    tell (a record without a message)."""
    if not isinstance(record, dict) or "uuid" not in record or "sessionId" not in record:
        return False if not isinstance(record, dict) or "type" not in record else None
    m = record.get("message")
    if isinstance(m, dict):
        return "parts" in m or m.get("role") == "model"
    if record.get("type") == "tool_result" or isinstance(record.get("systemPayload"), dict):
        return True
    return None


def sessions_in(folder: Path) -> list[Path]:
    """The folder's session files: those whose records are Qwen Code's and, in a folder that
    holds one, every file named as a session (an empty or unreadable one is then its own
    error row, not a skipped path)."""
    if not folder.is_dir():
        return []
    files = [p for p in sorted(folder.glob("*.jsonl")) if not p.name.startswith("agent-")]
    ours = [p for p in files if is_qwen(p)]
    if not ours:
        return []
    return [p for p in files if p in ours or SESSION_FILE.fullmatch(p.name)]


def agents_in(folder: Path) -> list[Path]:
    """A project's background-agent transcripts: ``subagents/<session>/agent-<id>.jsonl``."""
    return sorted(p for p in (folder / "subagents").glob("*/agent-*.jsonl") if p.is_file())


def project_files(folder: Path) -> list[Path]:
    """The session and agent files of a project folder (or of its ``chats/`` folder, or of a
    folder of session files): the sessions, the archived ones, then the agents'."""
    sessions = [
        *sessions_in(folder),
        *sessions_in(folder / "archive"),
        *sessions_in(folder / "chats"),
        *sessions_in(folder / "chats" / "archive"),
    ]
    agents = agents_in(folder)
    return [*sessions, *agents] if sessions or agents else []


def projects(path: Path) -> list[Path]:
    """The project folders below ``path``: itself, else those of ``projects/`` (a Qwen Code
    home, ``~/.qwen``), else its sub-folders (``projects/`` itself)."""
    if project_files(path):
        return [path]
    below = path / "projects" if (path / "projects").is_dir() else path
    return [p for p in sorted(below.iterdir()) if p.is_dir() and project_files(p)]
