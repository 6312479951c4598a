"""einox session stores (specs/einox.md): ``users/<owner>/sessions/<sid>/session.json``.

A unit is one group of an owner's sessions that forks join (``groups.py``):
a fork is read with its source, other sessions apart.  Each session
converts to a linear list of entries (``convert.py``); forks are merged onto
their source (``lineage.py``), side chats become their own tree with a
``fork_of`` link to the parent.  Folders under ``users/`` without
``sessions/`` (the channel gateway's ``.channel-bindings``) are units that
are skipped and counted.  Reader option: ``keep_truncated=true`` keeps the
``<persisted-output>`` placeholders instead of restoring ``spill/trunc/``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from trajset.redactors.identities import Identity, identities_of
from trajset.schemas.session import Entry, Session, validate_header

from ...errors import SessionReadError, UnitSkipped
from ..base import Loaded, Location, Reader, ReaderOption, Unit, UnitOptions
from ..regular import read_bytes
from .convert import Converted, convert
from .groups import groups
from .lineage import fork_edges, merged_entries
from .record import Record, read_record
from .turns import split_events

JSON = Any
FORMAT = "agentsession/0.2"
PAYLOAD = "openresponses/2026-04-24"


def users_dir(path: Path) -> Path | None:
    """``path`` itself when it is the ``users/`` folder of a store, else its ``users/`` child."""
    if path.name == "users" and any(path.glob("*/sessions")):
        return path
    users = path / "users"
    return users if users.is_dir() and any(users.glob("*/sessions")) else None


class EinoxReader(Reader):
    """``einox``: a root holding ``users/`` (or ``users/`` itself); a unit per fork group of an owner."""

    kind = "einox"
    #: the upstream comments call the per-user tree ``.agent/users/<operator>``
    locations = (Location("~/.agent/users"),)
    identity_fields = (
        ("user", "the owner (users/<owner>/)"),
        ("user", "participants[].id and participants[].name"),
    )
    options = (
        ReaderOption(
            "keep_truncated",
            bool,
            False,
            "keep the <persisted-output> placeholders instead of restoring spill/trunc/",
        ),
    )

    def detect(self, path: Path) -> bool:
        return path.is_dir() and users_dir(path) is not None

    def units(self, path: Path, options: UnitOptions = ()) -> list[Unit]:
        """A unit per fork group of each owner (``groups.py``); an owner of one group
        (or none: not an owner) is named by its folder, a group of several by its first
        session too."""
        users = users_dir(path) or path / "users"
        out = []
        for owner in sorted(p for p in users.iterdir() if p.is_dir()):
            found = groups(sorted(owner.glob("sessions/*/session.json"))) or [[]]
            for group in found:
                name = str(owner) if len(found) == 1 else f"{owner}#{group[0].parent.name}"
                files = tuple(str(f) for f in group)
                out.append(self.unit(files, owner.name, name))
        return out

    def load(self, unit: Unit) -> Loaded:
        if not unit.files:
            raise UnitSkipped(
                f"{unit.label}: no sessions/ folder (not an owner)", reason="not_an_owner"
            )
        records: dict[str, Record] = {}
        loaded: Loaded = []
        for f in unit.files:
            try:
                r = read_record(Path(f))
            except SessionReadError as exc:
                loaded.append(exc)
                continue
            records.setdefault(r.sid, r)
        loaded.extend(sessions(records, unit.key, bool(self.option(unit, "keep_truncated"))))
        return loaded

    def session_ids(self, unit: Unit) -> list[str]:
        return [Path(f).parent.name for f in unit.files]

    def identities(self, unit: Unit) -> list[Identity]:
        """The owner (its folder's name), then each session's participants; a file is parsed
        only when it names participants at all."""
        found: list[tuple[str, Any]] = [("user", unit.key)] if unit.files else []
        for f in unit.files:
            try:
                data = read_bytes(f)
                record = json.loads(data) if b'"participants"' in data else {}
            except (OSError, ValueError, RecursionError):
                continue
            people = record.get("participants") if isinstance(record, dict) else None
            for p in people if isinstance(people, list) else []:
                if isinstance(p, dict):
                    found += [("user", p.get("id")), ("user", p.get("name"))]
        return identities_of(found)

    def inputs(self, unit: Unit) -> tuple[str, ...]:
        """The session files and the spilled outputs and compactions beside them."""
        extra = sorted(
            str(p)
            for f in unit.files
            for sub in ("spill/trunc", "compact")
            for p in (Path(f).parent / sub).glob("*")
            if p.is_file()
        )
        return (*unit.files, *extra)


def sessions(records: dict[str, Record], owner: str, keep_truncated: bool = False) -> Loaded:
    """Every tree of an owner: merged fork trees and side chats, roots in time order."""
    edges, unverified = fork_edges(records)
    conv: dict[str, Converted] = {}
    for sid, r in records.items():
        inherited = _inherited(r, records) if r.parent_sid else 0
        conv[sid] = convert(r, inherited, keep_truncated)
    roots = sorted((r.started_ms(), sid) for sid, r in records.items() if sid not in edges)
    out: Loaded = []
    for _, sid in roots:
        raws = merged_entries(sid, conv, edges)
        link = _link(records[sid], unverified.get(sid))
        if link is not None:
            raws.insert(
                1, {**link, "id": f"{sid}-link", "parent": raws[0]["id"], "ts": raws[0]["ts"]}
            )
            raws[2]["parent"] = f"{sid}-link"
        try:
            out.append(_session(records[sid], owner, raws))
        except SessionReadError as exc:
            out.append(exc)
    return out


def _inherited(r: Record, records: dict[str, Record]) -> int:
    """Messages a side chat took from its parent: those before its first own user message."""
    turns = split_events(r.events)[0]
    first = turns[0].opening_text() if turns else ""
    own = [
        i
        for i, m in enumerate(r.messages)
        if m.get("role") == "user" and first and first in str(m.get("content") or "")
    ]
    return own[-1] if own else 0


def _link(r: Record, unverified: JSON) -> dict[str, JSON] | None:
    if r.parent_sid:
        return {"type": "link", "rel": "fork_of", "session": r.parent_sid, "einox:side_chat": True}
    if unverified:
        return {
            "type": "link",
            "rel": "fork_of",
            "session": unverified["source"],
            "einox:fork": unverified,
        }
    return None


def _session(r: Record, owner: str, raws: list[dict[str, JSON]]) -> Session:
    header: dict[str, JSON] = {
        "type": "session",
        "format": FORMAT,
        "id": r.sid,
        "created_at": raws[0]["ts"],
        "payload": PAYLOAD,
        "harness": {"name": "einox"},
    }
    if r.parent_sid:
        header["parent_session"] = r.parent_sid
    header["einox:owner"] = owner
    entries = []
    for i, raw in enumerate(raws):
        try:
            entries.append(Entry.of(raw, i + 2, i))
        except ValueError as exc:
            raise SessionReadError(
                f"converted entry {raw.get('id')} does not validate: {exc}",
                rule="conversion",
                source=str(r.path),
                session_id=r.sid,
            ) from None
    return Session(validate_header(header), header, entries, str(r.path), source_format="einox")
