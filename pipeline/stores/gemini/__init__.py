"""Gemini CLI chat recordings (specs/gemini-cli.md): ``~/.gemini/tmp/<project>/chats/``.

A unit is one project folder: its main chats and the subagent chats under
``chats/<parent session id>/``, read together so each child is linked from the
call whose ``agentId`` names it.  Each chat is one session: its records
replayed (``replay.py``: upserts, rewinds, checkpoints) and converted
(``convert.py``).  A legacy ``.json`` and the ``.jsonl`` it was migrated to (the
same ``sessionId``) are one session, read from the ``.jsonl``.  The replayed
view's last message is the reserved ``leaf`` label (``current`` policy).  The
working folder comes from the project's ``.project_root``, else from the
environment message.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trajset.redactors.identities import Identity, identities_of
from trajset.schemas.timestamps import RFC3339_RE

from ...errors import SessionReadError
from ..base import Fixture, Location, Match, Unit, UnitOptions
from ..draft import SessionDraft
from ..regular import read_text
from ..template import ConvertingReader
from .convert import convert
from .files import (
    Chat,
    chat_files,
    head,
    is_unreadable_copy,
    looks_like_chat,
    project_dirs,
    read_chat,
)  # fmt: skip
from .replay import ENVIRONMENT_ID, replay, text_of

JSON = Any
_WORKING = re.compile(r"I'm currently working in the directory: (\S.*)")


@dataclass(frozen=True)
class Joined:
    """A chat and what its conversion needs of the unit's others."""

    chat: Chat
    ids: set[str]  # the session ids of the unit's chats
    spawned: dict[str, str]  # child session id -> the call that spawned it
    cwd: str  # the project's folder (``.project_root``)


class GeminiCliReader(ConvertingReader[Chat, Joined]):
    """``gemini-cli``: a home (``~/.gemini``), its ``tmp/``, one project folder, its ``chats/``,
    or one chat file (``.jsonl``, or a legacy ``.json``)."""

    kind = "gemini-cli"
    match = Match.MARKER
    fixtures = (
        Fixture("upstream/gemini-cli/synthetic/gemini-home"),
        Fixture("upstream/gemini-cli/real/gemini-home"),
    )
    locations = (Location("~", env="GEMINI_CLI_HOME", below=".gemini"),)
    identity_fields = (
        ("workdir", "the project's .project_root"),
        ("workdir", "each chat's directories"),
    )

    def detect(self, path: Path) -> bool:
        if path.is_file():
            return looks_like_chat(path)
        return path.is_dir() and any(chat_files(p) for p in project_dirs(path))

    def units(self, path: Path, options: UnitOptions = ()) -> list[Unit]:
        if path.is_file():
            return [self.unit((str(path),), name=str(path))]
        out = []
        for project in project_dirs(path):
            files = chat_files(project)
            if files:
                out.append(self.unit(tuple(str(f) for f in files), name=str(project)))
        return out

    def inputs(self, unit: Unit) -> tuple[str, ...]:
        root = Path(unit.name) / ".project_root"
        return (
            (*unit.files, str(root)) if Path(unit.name).is_dir() and root.is_file() else unit.files
        )

    def read(self, path: Path, unit: Unit, earlier: list[Chat]) -> Chat:
        if is_unreadable_copy(path):
            raise SessionReadError(
                "a chat Gemini CLI could not parse on resume and moved aside; not read",
                rule="unreadable_copy", source=str(path),
            )  # fmt: skip
        return read_chat(path)

    def join(self, read: list[Chat], unit: Unit) -> list[Joined]:
        """Each chat (a migrated legacy ``.json`` read from its ``.jsonl``), with what it needs
        of the others: their ids, the calls that spawned subagents, the project's folder."""
        cwd = _project_root(Path(unit.name))
        chats = _without_migrated(read)
        ids = {c.session_id for c in chats}
        spawned = _spawns(chats, ids)
        return [Joined(chat, ids, spawned, cwd) for chat in chats]

    def convert(self, tree: Joined, unit: Unit) -> SessionDraft:
        return _session(tree)

    def session_ids(self, unit: Unit) -> list[str]:
        return [str(h["sessionId"]) for f in unit.files if (h := head(Path(f))) is not None]

    def identities(self, unit: Unit) -> list[Identity]:
        found: list[tuple[str, object]] = [("workdir", _project_root(Path(unit.name)))]
        for f in unit.files:
            dirs = (head(Path(f)) or {}).get("directories")
            found += [("workdir", d) for d in dirs] if isinstance(dirs, list) else []
        return identities_of(found)


def _project_root(project: Path) -> str:
    try:
        return read_text(project / ".project_root").strip()
    except (OSError, UnicodeDecodeError):
        return ""


def _without_migrated(chats: list[Chat]) -> list[Chat]:
    """Of a legacy ``.json`` and its migrated ``.jsonl`` (one ``sessionId``), the ``.jsonl``."""
    legacy = {c.session_id for c in chats if c.legacy}
    jsonl = {c.session_id for c in chats if not c.legacy}
    for c in chats:
        c.twin = not c.legacy and c.session_id in legacy
    return [c for c in chats if not (c.legacy and c.session_id in jsonl)]


def _spawns(chats: list[Chat], ids: set[str]) -> dict[str, str]:
    """Child session id -> the call whose ``agentId`` names it."""
    out: dict[str, str] = {}
    for chat in chats:
        for _, rec in chat.records:
            for call in (rec.get("toolCalls") if isinstance(rec, dict) else None) or []:
                if isinstance(call, dict) and call.get("agentId") in ids:
                    out.setdefault(str(call["agentId"]), str(call.get("id") or ""))
    return out


def _session(joined: Joined) -> SessionDraft:
    chat, ids, spawned, cwd = joined.chat, joined.ids, joined.spawned, joined.cwd
    r = replay(chat.records)
    sid = next(
        (str(m["sessionId"]) for m in reversed(r.meta) if isinstance(m.get("sessionId"), str)),
        chat.session_id,
    )
    d = SessionDraft(sid, chat.path, "gemini-cli", "gemini-cli")
    c = convert(r, {sid: sid for sid in ids if sid != chat.session_id}, d)
    d.label_leaf(c.tail.get(r.tail or "", ""))
    meta = chat.meta
    start = str(meta.get("startTime") or "")
    d.created_at = start if RFC3339_RE.match(start) else ""
    where = cwd or _working_dir(r)
    if where:
        d.members["cwd"] = where
    parent = Path(chat.path).parent.name
    if meta.get("kind") == "subagent" or parent in ids:
        if parent in ids:
            d.members["parent_session"] = parent
        if sid in spawned:
            d.members["spawned_by"] = spawned[sid]
    for k in ("projectHash", "kind", "directories"):
        if meta.get(k) is not None:
            d.members[f"gemini:{k}"] = meta[k]
    d.members["gemini:meta"] = {"first_line": meta, "updates": r.meta}
    d.meet("workdir", cwd)
    folders = meta.get("directories")
    for folder in folders if isinstance(folders, list) else []:
        d.meet("workdir", folder)
    d.counts.update({f"gemini/{k}": v for k, v in (r.counts + c.counts).items()})
    if chat.legacy:
        d.counts["gemini/legacy_json"] = 1
    if chat.twin:
        d.counts["gemini/migrated_json_read_from_jsonl"] = 1
    d.issues = [*chat.issues, *r.issues, *d.issues]  # the file's, its replay's, the converter's
    return d


def _working_dir(r: Any) -> str:
    env = r.messages.get(ENVIRONMENT_ID)
    m = _WORKING.search(text_of(env.record.get("content"))) if env else None
    return m.group(1).strip().rstrip(".") if m else ""
