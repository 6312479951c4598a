"""Which files are Claude Code's: a session file by its first record (and not Qwen Code's,
whose records look alike), the session files of a project folder, and its agents'."""

from __future__ import annotations

import json
import re
from pathlib import Path

from ..jsonl import BOM
from ..qwen.files import is_qwen
from ..regular import open_input

KNOWN = frozenset(
    {
        "user",
        "assistant",
        "summary",
        "system",
        "attachment",
        "progress",
        "queue-operation",
        "file-history-snapshot",
        "permission-mode",
        "last-prompt",
        "ai-title",
        "custom-title",
    }
)


def looks_like_claude(path: Path) -> bool:
    """The first line is a Claude Code record (not an Agent Session Format header), and the
    file is not Qwen Code's, whose records look alike."""
    if not path.is_file():  # a FIFO would block, a folder has no line
        return False
    try:
        with open_input(path) as fh:
            first = next((line for line in fh if line.strip()), b"")
        d = json.loads(first.removeprefix(BOM))
    except (OSError, ValueError, UnicodeDecodeError, RecursionError):
        return False
    if not isinstance(d, dict):
        return False
    kind = d.get("type")
    # a known record type with Claude Code's camelCase keys (leafUuid, messageId, ...); the
    # same type names in snake_case records (a suga export's "type": "user") are not ours
    ours = "sessionId" in d or (
        isinstance(kind, str) and kind in KNOWN and any(k != k.lower() for k in d)
    )
    return ours and not is_qwen(path)


#: how Claude Code names a session file: its session id
_SESSION_FILE = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.jsonl")


def sessions_in(folder: Path) -> list[Path]:
    """The folder's session files: those whose first record is Claude Code's and, in a
    folder that holds one, every file named as a session (an empty or unreadable one is
    then its own error row, not a skipped path)."""
    files = [p for p in sorted(folder.glob("*.jsonl")) if not p.name.startswith("agent-")]
    ours = [p for p in files if looks_like_claude(p)]
    if not ours:
        return []
    return [p for p in files if p in ours or _SESSION_FILE.fullmatch(p.name)]


def agents_in(folder: Path) -> list[Path]:
    return sorted([*folder.glob("agent-*.jsonl"), *folder.glob("*/subagents/agent-*.jsonl")])
