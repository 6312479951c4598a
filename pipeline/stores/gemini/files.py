"""Gemini CLI chat files: where they are and what they hold (specs/gemini-cli.md §1, §2.1).

A home (``~/.gemini``, or ``$GEMINI_CLI_HOME/.gemini``) holds ``tmp/<project-id>/``
folders; each holds ``chats/session-*.json|jsonl`` (main sessions) and
``chats/<parent session id>/<agent id>.json|jsonl`` (subagents).  A ``.jsonl``
is a metadata line, then message records (upserts by ``id``), ``$set`` and
``$rewindTo`` lines; a legacy ``.json`` is one whole object.  ``logs.json``,
``projects.json``, checkpoints, ``*.tmp-*`` files and everything else are never
sessions; an ``*.unreadable-*`` copy Gemini CLI moved aside is reported.
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
from ..qwen.files import is_qwen
from ..regular import open_input, read_bytes

JSON = Any
SUFFIXES = (".jsonl", ".json")
#: how far a file's first line is read to tell whether it is a chat
HEAD_BYTES = 1 << 16


def is_chat_name(path: Path) -> bool:
    """A chat file's name: ``.json``/``.jsonl``, not a temporary or moved-aside copy."""
    return path.suffix in SUFFIXES and ".tmp-" not in path.name and ".unreadable-" not in path.name


def is_unreadable_copy(path: Path) -> bool:
    return ".unreadable-" in path.name


def _is_meta(d: JSON) -> bool:
    return isinstance(d, dict) and isinstance(d.get("sessionId"), str) and "projectHash" in d


def head(path: Path) -> dict[str, JSON] | None:
    """The chat's metadata (its first line, or a legacy file's whole object without its
    messages); None when ``path`` is not a chat."""
    if not path.is_file() or not is_chat_name(path):
        return None
    try:
        if path.suffix == ".jsonl":
            with open_input(path) as fh:
                first = fh.readline(HEAD_BYTES)
            d = json.loads(first)
        else:
            with open_input(path) as fh:
                start = fh.read(2048)
            if b'"sessionId"' not in start or b'"projectHash"' not in start:
                return None
            d = json.loads(read_bytes(path))
    except (OSError, ValueError, UnicodeDecodeError, RecursionError):
        return None
    if not _is_meta(d):
        return None
    return {k: v for k, v in d.items() if k != "messages"}


def looks_like_chat(path: Path) -> bool:
    """A chat by its start: a metadata first line, or a legacy file that begins like one (a
    legacy file cut short still is a chat, whose loss is reported)."""
    if head(path) is not None:
        return True
    if not path.is_file() or path.suffix != ".json" or not is_chat_name(path):
        return False
    try:
        with open_input(path) as fh:
            start = fh.read(2048)
    except OSError:
        return False
    return start.lstrip().startswith(b"{") and b'"sessionId"' in start and b'"projectHash"' in start


def project_dirs(path: Path) -> list[Path]:
    """The project folders at or below ``path`` (a home, ``tmp/``, a project, ``chats/``, or
    any folder of chat files, which is then its own ``chats/``)."""
    if path.name == "chats" and path.is_dir():
        return [path.parent]
    if (path / "chats").is_dir():
        return [path]
    if path.is_dir() and any(looks_like_chat(p) for p in sorted(path.glob("session-*"))[:8]):
        return [path]
    for tmp in (path / "tmp", path / ".gemini" / "tmp", path):
        if tmp.is_dir():
            found = sorted(p for p in tmp.iterdir() if (p / "chats").is_dir())
            if found:
                return found
    return []


def chat_files(project: Path) -> list[Path]:
    """The chats of a project folder (main and subagent), and its moved-aside copies, sorted.
    In a ``chats`` folder every chat-named file is one, but Qwen Code's: its fork keeps its
    sessions in the same layout (``~/.qwen/projects/<project>/chats/``), as JSON Lines only
    (a ``.json`` chat is never probed: Qwen's reader would not take it, and the probe reads
    64 lines of each pretty-printed chat in vain)."""
    own = (project / "chats").is_dir()
    chats = project / "chats" if own else project
    found = [*chats.glob("*"), *chats.glob("*/*")]
    return sorted(
        p
        for p in found
        if p.is_file()
        and (
            is_unreadable_copy(p)
            or (own and is_chat_name(p) and not (p.suffix == ".jsonl" and is_qwen(p)))
            or looks_like_chat(p)
        )
    )


@dataclass
class Chat:
    """One chat file read: its metadata and its records, in file order."""

    path: str
    meta: dict[str, JSON]
    records: list[tuple[int, JSON]]  # (line, record); a legacy file's messages are line 0
    issues: list[Issue] = field(default_factory=list)
    legacy: bool = False
    twin: bool = False  # a .jsonl migrated from a legacy .json of the same session

    @property
    def session_id(self) -> str:
        return str(self.meta.get("sessionId") or "")


def read_chat(path: Path) -> Chat:
    """The chat's records; ``SessionReadError`` for a legacy file that does not parse or a file
    with no metadata."""
    data = read_input(path)
    if not data.strip():
        raise SessionReadError("the chat file is empty; nothing of it can be read",
                               rule="empty", source=str(path))  # fmt: skip
    if path.suffix == ".json":
        return _legacy(path, data)
    found, issues = objects(data, path.name)
    if not found or not _is_meta(found[0][1]):
        rule = "truncated" if issues and not found else "format"
        raise SessionReadError(
            "not a Gemini CLI chat: its first line is not the metadata line "
            "({sessionId, projectHash, ...}); pass ~/.gemini, a project folder or a chat file",
            rule=rule, source=str(path), line=found[0][0] if found else 1,
        )  # fmt: skip
    return Chat(str(path), found[0][1], found[1:], issues)


def _legacy(path: Path, data: bytes) -> Chat:
    try:
        whole = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise SessionReadError(
            f"a legacy chat that does not parse ({type(exc).__name__}): Gemini CLI rewrites the "
            "whole file on every change, so a cut one is lost; nothing of it was read",
            rule="truncated" if data.strip() else "format", source=str(path),
        ) from None  # fmt: skip
    if not _is_meta(whole):
        raise SessionReadError(
            "not a Gemini CLI chat: no sessionId and projectHash", rule="format", source=str(path)
        )
    messages = whole.get("messages") if isinstance(whole.get("messages"), list) else []
    meta = {k: v for k, v in whole.items() if k != "messages"}
    return Chat(str(path), meta, [(0, m) for m in messages], [], legacy=True)
