"""Cursor stores (specs/cursor.md): the CLI's ``store.db``, the IDE's ``state.vscdb`` and the
agent transcripts, one session per conversation id (``files.py``: the richest store wins).

A unit is one conversation: the store that won, its transcript's subagents, and the
stores that lost (counted as duplicates, not read).  ``chat.py`` turns a ``store.db``'s
roots into one tree (rewinds are forks, summaries compactions); ``transcripts.py`` reads
the lossy transcripts.
"""

from __future__ import annotations

import json
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trajset.redactors.identities import Identity, identities_of

from ...errors import SessionReadError
from ..base import Fixture, Location, Unit, UnitOptions
from ..draft import EPOCH, SessionDraft
from ..regular import open_input
from ..template import ConvertingReader
from .chat import chat_entries
from .files import conversations, rank
from .store import Store, read_store_db
from .times import iso
from .transcripts import HARNESS, query, read_transcript, read_txt, text_of
from .vscdb import composer_session, load_composer

JSON = Any


@dataclass(frozen=True)
class Source:
    """One file of a unit, as ``read`` found it: the winning store (a CLI store, an IDE
    composer, a transcript), a subagent transcript, or a duplicate of the winner."""

    path: Path
    role: str  # "main", "subagent", "duplicate"
    store: Store | None = None
    composer: tuple[dict[str, JSON], dict[str, list[JSON]]] | None = None


class CursorReader(ConvertingReader[Source, Source]):
    """``cursor``: ``~/.cursor`` (its ``chats/`` and ``projects/``), a ``store.db``, or a transcript."""

    kind = "cursor"
    fixtures = (
        Fixture("upstream/cursor/synthetic/home", cut=False),
        Fixture("upstream/cursor/third-party/codeburn/tests/fixtures/cursor-agent/workspace-less"),
    )
    locations = (
        Location("~/.cursor", env="CURSOR_CONFIG_DIR"),
        Location("~/.config/Cursor/User"),
        Location("~/Library/Application Support/Cursor/User"),
    )
    identity_fields = (("workdir", "the store's workspacePath"),)

    def session_ids(self, unit: Unit) -> list[str]:
        """The conversation's id (a CLI store's agent id where its meta says) and its
        subagents' (transcript stems)."""
        first = Path(unit.files[0])
        sid = unit.key or _id(first)
        if first.suffix == ".db":
            with suppress(SessionReadError):
                sid = str(read_store_db(first).meta.get("agentId") or sid)
        return [sid, *(Path(f).stem for f in unit.files[1:] if Path(f).parent.name == "subagents")]

    def identities(self, unit: Unit) -> list[Identity]:
        """The workspace folder a CLI store or an IDE composer names (transcripts name none)."""
        first = Path(unit.files[0])
        try:
            if unit.key:
                data, _ = load_composer(first, unit.key)
                where = ((data.get("workspaceIdentifier") or {}).get("uri") or {}).get("fsPath")
            elif first.suffix == ".db":
                store = read_store_db(first)
                where = _workspace(store)
            else:
                where = None
        except SessionReadError:
            where = None  # its load is the error row
        return identities_of([("workdir", where)])

    def detect(self, path: Path) -> bool:
        return bool(conversations(path))

    def units(self, path: Path, options: UnitOptions = ()) -> list[Unit]:
        out = []
        for c in conversations(path):
            files = (c.sources[0], *c.subagents, *c.sources[1:])
            key = c.id if c.sources[0].name == "state.vscdb" else ""
            out.append(
                self.unit(
                    tuple(str(f) for f in files), key=key, name="" if key else str(c.sources[0])
                )
            )
        return out

    def read(self, path: Path, unit: Unit, earlier: list[Source]) -> Source:
        if not earlier:
            if path.name == "state.vscdb":
                return Source(path, "main", composer=load_composer(path, unit.key))
            store = read_store_db(path) if path.suffix == ".db" else None  # found by is_store
            return Source(path, "main", store)
        if path.parent.name == "subagents":
            return Source(path, "subagent")
        return Source(path, "duplicate")

    def join(self, read: list[Source], unit: Unit) -> list[Source]:
        main = [s for s in read if s.role == "main" and (s.store is None or s.store.roots)]
        return [*main, *(s for s in read if s.role == "subagent")] if main else []

    def convert(self, tree: Source, unit: Unit) -> SessionDraft:
        files = [Path(f) for f in unit.files]
        parent = _id(files[0])
        if tree.role == "subagent":
            d = SessionDraft(tree.path.stem, str(tree.path), HARNESS, HARNESS)
            read_transcript(tree.path, tree.path.stem, d)
            d.members["parent_session"] = parent
            return d
        if tree.composer is not None:
            d = composer_session(tree.path, unit.key, *tree.composer)
        elif tree.store is not None:
            d = _chat(tree.store)
        else:
            d = SessionDraft(parent, str(tree.path), HARNESS, HARNESS)
            if tree.path.suffix == ".txt":
                read_txt(tree.path, parent, d)
            else:
                kids = [f for f in files if f.parent.name == "subagents"]
                read_transcript(tree.path, parent, d, {_first_prompt(f): f.stem for f in kids})
        dups = [f for f in files[1:] if f.parent.name != "subagents" and rank(f) > rank(files[0])]
        if dups:
            d.counts["duplicate_sources"] += len(dups)
            d.members["cursor:duplicates"] = [f.name for f in dups]
        return d


def _workspace(store: Store) -> str:
    """The store's workspace folder: its meta's, else a root's ``file://`` field."""
    found = store.meta.get("workspacePath") or next(
        (r.workspace for r in store.roots if r.workspace), ""
    )
    return found.removeprefix("file://") if isinstance(found, str) else ""


def _id(path: Path) -> str:
    """A file's conversation id (a CLI store's folder, a transcript's stem)."""
    return path.parent.name if path.suffix == ".db" else path.stem  # a unit's store: is_store


def _first_prompt(path: Path) -> str:
    """A subagent transcript's first prompt, unwrapped: what its delegation call sent."""
    with suppress(OSError), open_input(path) as fh:
        for line in fh:
            with suppress(ValueError, UnicodeDecodeError, RecursionError):
                rec = json.loads(line)
                if isinstance(rec, dict) and rec.get("role") == "user":
                    m = rec.get("message")
                    return query(text_of(m.get("content") if isinstance(m, dict) else None))
    return ""


def _chat(store: Store) -> SessionDraft:
    meta = store.meta
    sid = str(meta.get("agentId") or store.path.parent.name)
    start = iso(meta.get("createdAt"))
    d = SessionDraft(sid, str(store.path), HARNESS, HARNESS, ts=start)
    trie = chat_entries(store, d, start)
    d.created_at = start if start != EPOCH else ""
    workspace = _workspace(store)
    if workspace:
        d.members["cwd"] = workspace
        d.meet("workdir", workspace)
    d.members["cursor:meta"] = {k: v for k, v in meta.items() if k != "blobEncryptionKey"}
    for name in ("meta.json", "prompt_history.json"):
        with suppress(OSError, ValueError):
            beside = json.loads((store.path.parent / name).read_text())
            d.members[f"cursor:{name.removesuffix('.json')}"] = beside
    d.counts.update(trie.counts)
    d.issues = [*store.issues, *d.issues]
    return d
