"""Where Cursor keeps conversations, and which store of one conversation is read
(specs/cursor.md §1-§3, "Mapping").

One id names a conversation everywhere: the CLI's ``chats/<md5(cwd)>/<id>/store.db``
(S), the IDE's ``composerData:<id>`` row of ``state.vscdb`` (D) and the transcript
``projects/<slug>/agent-transcripts/<id>/<id>.jsonl`` (T; also a flat ``<id>.jsonl`` or
a legacy ``<id>.txt``).  The richest wins, S, then D, then T; the others are
duplicates, counted and not read.  A transcript's ``subagents/<child>.jsonl`` are read
with whichever store won its parent.
"""

from __future__ import annotations

import json
import re
import sqlite3
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path

from ..snapshot import read_snapshot

#: a conversation id (a UUID)
ID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
#: the stores of one conversation by how much they hold (S, D, T, legacy T)
RANK = {"store.db": 0, "state.vscdb": 1, ".jsonl": 2, ".txt": 3}


@dataclass
class Conversation:
    """The stores found for one conversation id, best first, and its transcript's subagents;
    ``ide``: the IDE database when that holds it (its rows are keyed by the id)."""

    id: str
    sources: list[Path] = field(default_factory=list)
    subagents: list[Path] = field(default_factory=list)
    ide: Path | None = None


def rank(path: Path) -> int:
    return RANK.get(path.name, RANK.get(path.suffix, 9))


def transcript_id(path: Path) -> str:
    return path.stem


def _transcripts(root: Path) -> list[Path]:
    """The transcripts below ``root`` (a home, ``projects/``, a project, its
    ``agent-transcripts``, a conversation folder)."""
    found: set[Path] = set()
    for pattern in ("*/*.jsonl", "*.jsonl", "*.txt", "agent-transcripts/*/*.jsonl",
                    "agent-transcripts/*.jsonl", "agent-transcripts/*.txt",
                    "*/agent-transcripts/*/*.jsonl", "*/agent-transcripts/*.jsonl",
                    "*/agent-transcripts/*.txt", "projects/*/agent-transcripts/*/*.jsonl",
                    "projects/*/agent-transcripts/*.jsonl", "projects/*/agent-transcripts/*.txt"):  # fmt: skip
        found |= {p for p in root.glob(pattern) if p.is_file() and _is_transcript(p)}
    return sorted(found)


def _is_transcript(p: Path) -> bool:
    """A transcript: named by its id, in an ``agent-transcripts`` folder (or its own), never a
    subagent's (read with its parent)."""
    if p.parent.name == "subagents" or not ID.fullmatch(p.stem):
        return False
    return "agent-transcripts" in p.parts or p.parent.name == p.stem


def is_store(path: Path) -> bool:
    """A CLI store: a SQLite file whose only tables are ``blobs`` and ``meta`` (an Agent
    Session Format database may be named ``store.db`` too), or a damaged ``store.db`` (its
    load is then the error row)."""
    tables = _tables(path) if path.suffix == ".db" and path.is_file() else set()
    if tables == {"blobs", "meta"}:
        return True
    return path.name == "store.db" and path.is_file() and not tables


def _tables(path: Path) -> set[str]:
    """The tables of a SQLite file; empty when it is none or does not read."""
    with suppress(OSError), open(path, "rb") as fh:
        if not fh.read(16).startswith(b"SQLite format 3"):
            return set()
    try:
        rows = read_snapshot(
            path,
            lambda db: db.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall(),
        )
    except sqlite3.Error:
        return set()
    return {name for (name,) in rows}


def is_transcript_file(path: Path) -> bool:
    """A transcript given alone: its first line is a Cursor message line (``role`` and
    ``message``, no record ``type``), or, for ``.txt``, ``user:``."""
    if path.suffix not in (".jsonl", ".txt") or not path.is_file():
        return False
    with suppress(OSError), open(path, "rb") as fh:
        first = next((line for line in fh if line.strip()), b"").strip()
        if path.suffix == ".txt":
            return first in (b"user:", b"assistant:")
        with suppress(ValueError, UnicodeDecodeError, RecursionError):
            d = json.loads(first)
            return (isinstance(d, dict) and d.get("role") in ("user", "assistant")
                    and isinstance(d.get("message"), dict) and "type" not in d)  # fmt: skip
    return False


def stores(path: Path) -> list[Path]:
    """The CLI stores at or below ``path``."""
    if path.is_file():
        return [path] if is_store(path) else []
    found: set[Path] = set()
    for pattern in ("store.db", "*/store.db", "*/*/store.db", "chats/*/*/store.db"):
        found |= {p for p in path.glob(pattern) if is_store(p)}
    return sorted(found)


#: where an IDE database stands below a home, a Cursor ``User`` folder or ``globalStorage``
IDE_DBS = (
    "state.vscdb",
    "globalStorage/state.vscdb",
    "User/globalStorage/state.vscdb",
    ".config/Cursor/User/globalStorage/state.vscdb",
    "Library/Application Support/Cursor/User/globalStorage/state.vscdb",
    "AppData/Roaming/Cursor/User/globalStorage/state.vscdb",
    ".cursor-server/data/User/globalStorage/state.vscdb",
)


def ide_dbs(path: Path) -> list[Path]:
    if path.is_file():
        return [path] if path.name == "state.vscdb" else []
    return sorted({p for rel in IDE_DBS if (p := path / rel).is_file()})


def conversations(path: Path) -> list[Conversation]:
    """Every conversation at or below ``path``, by id, in id order."""
    from .vscdb import composer_ids  # the database is opened only where one is found

    by_id: dict[str, Conversation] = {}
    for db in ide_dbs(path):
        for cid, _ in composer_ids(db):
            c = by_id.setdefault(cid, Conversation(cid))
            c.sources.append(db)
            c.ide = c.ide or db
    homes = [path, *([path / ".cursor"] if (path / ".cursor").is_dir() else [])]
    files = (
        []
        if path.name == "state.vscdb"
        else [path]
        if is_store(path) or is_transcript_file(path)
        else []
        if path.is_file()
        else [f for h in homes for f in (*stores(h), *_transcripts(h))]
    )
    for f in files:
        cid = f.parent.name if f.suffix == ".db" else transcript_id(f)  # stores: is_store
        c = by_id.setdefault(cid, Conversation(cid))
        c.sources.append(f)
    for c in by_id.values():
        c.sources.sort(key=lambda p: (rank(p), str(p)))
        t = next((p for p in c.sources if p.suffix == ".jsonl"), None)
        if t is not None and t.parent.name == t.stem:
            c.subagents = sorted((t.parent / "subagents").glob("*.jsonl"))
    return [by_id[k] for k in sorted(by_id)]
