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
from pathlib import Path
from typing import Any

from trajset.redactors.identities import Identity, identities_of
from trajset.schemas.session import Session
from trajset.schemas.timestamps import RFC3339_RE

from ...errors import SessionReadError
from ..base import Loaded, Location, Reader, Unit, UnitOptions, converted_session
from ..regular import read_text
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
PAYLOAD = "openresponses/2026-04-24"
_WORKING = re.compile(r"I'm currently working in the directory: (\S.*)")


class GeminiCliReader(Reader):
    """``gemini-cli``: a home (``~/.gemini``), its ``tmp/``, one project folder, its ``chats/``,
    or one chat file (``.jsonl``, or a legacy ``.json``)."""

    kind = "gemini-cli"
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

    def load(self, unit: Unit) -> Loaded:
        out: Loaded = []
        chats: list[Chat] = []
        for f in unit.files:
            path = Path(f)
            if is_unreadable_copy(path):
                out.append(SessionReadError(
                    "a chat Gemini CLI could not parse on resume and moved aside; not read",
                    rule="unreadable_copy", source=f,
                ))  # fmt: skip
                continue
            try:
                chats.append(read_chat(path))
            except SessionReadError as exc:
                out.append(exc)
        cwd = _project_root(Path(unit.name))
        chats = _without_migrated(chats)
        ids = {c.session_id for c in chats}
        spawned = _spawns(chats, ids)
        for chat in chats:
            try:
                out.append(_session(chat, ids, spawned, cwd))
            except SessionReadError as exc:
                out.append(exc)
        return out

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


def _session(chat: Chat, ids: set[str], spawned: dict[str, str], cwd: str) -> Session:
    r = replay(chat.records)
    c = convert(r, {sid: sid for sid in ids if sid != chat.session_id}, chat.path)
    raws = c.raws
    current = c.tail.get(r.tail or "", "")
    if current and current != raws[-1]["id"]:
        last = raws[-1]
        raws.append({"type": "label", "id": f"{last['id']}:leaf", "parent": last["id"],
                     "ts": last["ts"], "target": current, "label": "leaf"})  # fmt: skip
    meta = chat.meta
    sid = next(
        (str(m["sessionId"]) for m in reversed(r.meta) if isinstance(m.get("sessionId"), str)),
        chat.session_id,
    )
    start = str(meta.get("startTime") or "")
    header: dict[str, JSON] = {
        "type": "session", "format": "agentsession/0.2", "id": sid,
        "created_at": start if RFC3339_RE.match(start) else raws[0]["ts"],
        "payload": PAYLOAD, "harness": {"name": "gemini-cli"},
    }  # fmt: skip
    where = cwd or _working_dir(r)
    if where:
        header["cwd"] = where
    parent = Path(chat.path).parent.name
    if meta.get("kind") == "subagent" or parent in ids:
        if parent in ids:
            header["parent_session"] = parent
        if sid in spawned:
            header["spawned_by"] = spawned[sid]
    for k in ("projectHash", "kind", "directories"):
        if meta.get(k) is not None:
            header[f"gemini:{k}"] = meta[k]
    header["gemini:meta"] = {"first_line": meta, "updates": r.meta}
    counts = {f"gemini/{k}": v for k, v in (r.counts + c.counts).items()}
    if chat.legacy:
        counts["gemini/legacy_json"] = 1
    if chat.twin:
        counts["gemini/migrated_json_read_from_jsonl"] = 1
    return converted_session(header, raws, chat.path, "gemini-cli", chat.issues, counts)


def _working_dir(r: Any) -> str:
    env = r.messages.get(ENVIRONMENT_ID)
    m = _WORKING.search(text_of(env.record.get("content"))) if env else None
    return m.group(1).strip().rstrip(".") if m else ""
