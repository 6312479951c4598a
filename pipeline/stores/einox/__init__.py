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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trajset.redactors.identities import Identity, identities_of

from ...errors import UnitSkipped
from ..base import Fixture, Location, ReaderOption, Unit, UnitOptions
from ..draft import SessionDraft
from ..regular import read_bytes
from ..template import ConvertingReader
from .convert import Converted, convert
from .groups import groups
from .lineage import Edge, fork_edges, members, merged_entries
from .record import Record, read_record
from .turns import split_events

JSON = Any


def users_dir(path: Path) -> Path | None:
    """``path`` itself when it is the ``users/`` folder of a store, else its ``users/`` child."""
    if path.name == "users" and any(path.glob("*/sessions")):
        return path
    users = path / "users"
    return users if users.is_dir() and any(users.glob("*/sessions")) else None


class EinoxReader(ConvertingReader[Record, tuple[str, "Owned"]]):
    """``einox``: a root holding ``users/`` (or ``users/`` itself); a unit per fork group of an owner."""

    kind = "einox"
    fixtures = (Fixture("upstream/einox/synthetic/data"),)
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

    def files(self, unit: Unit) -> tuple[str, ...]:
        if not unit.files:
            raise UnitSkipped(
                f"{unit.label}: no sessions/ folder (not an owner)", reason="not_an_owner"
            )
        return unit.files

    def read(self, path: Path, unit: Unit, earlier: list[Record]) -> Record:
        return read_record(path)

    def join(self, read: list[Record], unit: Unit) -> list[tuple[str, Owned]]:
        """Every tree of the owner: merged fork trees and side chats, roots in time order;
        each session converted first (``convert.py``), a fork's entries merged onto its
        source's (``lineage.py``)."""
        records: dict[str, Record] = {}
        for r in read:
            records.setdefault(r.sid, r)
        keep = bool(self.option(unit, "keep_truncated"))
        edges, unverified = fork_edges(records)
        conv: dict[str, Converted] = {}
        for sid, r in records.items():
            inherited = _inherited(r, records) if r.parent_sid else 0
            conv[sid] = convert(r, inherited, keep)
        owned = Owned(unit.key, records, edges, unverified, conv)
        roots = sorted((r.started_ms(), sid) for sid, r in records.items() if sid not in edges)
        return [(sid, owned) for _, sid in roots]

    def convert(self, tree: tuple[str, Owned], unit: Unit) -> SessionDraft:
        sid, o = tree
        d = _draft(o.records[sid], o.owner)
        d.entries = merged_entries(sid, o.conv, o.edges)
        link = _link(o.records[sid], o.unverified.get(sid))
        if link is not None:
            first = d.entries[0]
            d.entries.insert(
                1, {**link, "id": f"{sid}-link", "parent": first["id"], "ts": first["ts"]}
            )
            d.entries[2]["parent"] = f"{sid}-link"
        for member in members(sid, o.edges):  # what its forks' conversions met is the tree's
            d.notes += o.conv[member].entries.notes
            for name in _participants(o.records[member].raw):
                d.meet("user", name)
        return d

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
            found += [("user", name) for name in _participants(record)]
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


@dataclass(frozen=True)
class Owned:
    """An owner's sessions read and converted, and how their forks join (``join``)."""

    owner: str
    records: dict[str, Record]
    edges: dict[str, Edge]
    unverified: dict[str, JSON]
    conv: dict[str, Converted]


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


def _draft(r: Record, owner: str) -> SessionDraft:
    d = SessionDraft(r.sid, str(r.path), "einox", "einox")
    d.issues += r.issues
    if r.parent_sid:
        d.members["parent_session"] = r.parent_sid
    d.members["einox:owner"] = owner
    d.meet("user", owner)
    return d


def _participants(record: JSON) -> list[JSON]:
    """The ids and names of a ``session.json``'s ``participants``."""
    people = record.get("participants") if isinstance(record, dict) else None
    return [
        p.get(k)
        for p in (people if isinstance(people, list) else [])
        if isinstance(p, dict)
        for k in ("id", "name")
    ]
