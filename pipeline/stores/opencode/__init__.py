"""OpenCode sessions (specs/opencode.md): the data folder ``$XDG_DATA_HOME/opencode``.

From v1.2 everything is in the SQLite ``opencode.db`` (``database.py``); before,
in ``storage/`` JSON files (``files.py``), which the one-time migration leaves on
disk.  A unit is a few sessions of one project: those a fork copy or a subagent
ties together (``forks.groups``, decided from their first messages).  The
databases are read first (``opencode.db``, then any ``opencode-*.db`` channel
database; a session already read is not read again), then the JSON sessions no
database holds, so a migrated session is read once, from the database.  Fork
copies are merged into their source's tree (``forks.py``), and each tree written
as entries (``branches.py``, ``convert.py``).  A subagent's child is its own
session, linked from the ``task`` call that ran it.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trajset.redactors.identities import Identity, identities_of
from trajset.schemas.session import Issue

from ...errors import SessionReadError
from ..base import Fixture, Location, Reads, Unit, UnitOptions
from ..base import recording_reads as _recording
from ..draft import SessionDraft
from ..snapshot import unlisted
from ..template import ConvertingReader
from . import database, files
from .branches import write
from .convert import Converter, ts_of
from .forks import Tree, groups, trees
from .records import Group, Overview, StoredSession

JSON = Any
DB_NAME = "opencode.db"
_SIDE = ("-wal", "-shm")
#: folders of the data folder and of ``storage/`` that hold no conversation (spec §1)
DATA_DIR = {"snapshot": "file snapshots (git repositories)", "log": "logs", "bin": "tools",
            "plans": "plans"}  # fmt: skip
STORAGE = {"session_diff": "per-session diffs", "session_share": "share links",
           "permission": "approved permissions"}  # fmt: skip


def _databases(folder: Path) -> list[Path]:
    found = [folder / DB_NAME, *sorted(folder.glob("opencode-*.db"))]
    return [p for p in found if p.is_file() and database.is_database(p)]


def _layout(path: Path) -> tuple[list[Path], Path | None]:
    """(the databases, the ``storage/`` folder) of a store path."""
    if path.is_file():
        return [path], None
    storage = path / "storage" if files.is_storage(path / "storage") else None
    if storage is None and files.is_storage(path):
        storage = path
    return _databases(path), storage


#: a group's sessions as read, and an error for each database that did not read
Stored = tuple[list[StoredSession], list[SessionReadError]]


@dataclass(frozen=True)
class Written:
    """A tree written as entries (``converter.draft``), and the calls that spawned children."""

    tree: Tree
    converter: Converter
    spawned: dict[str, str]


class OpenCodeReader(ConvertingReader[Stored, Written]):
    """``opencode``: a data folder (``~/.local/share/opencode``), its ``opencode.db``, or a
    legacy ``storage/`` folder."""

    kind = "opencode"
    fixtures = (
        Fixture("upstream/opencode/sqlite"),
        Fixture("build:opencode-json"),
        Fixture("upstream/opencode/legacy", cut=False),  # a cut source changes its fork
    )
    locations = (Location("~/.local/share", env="XDG_DATA_HOME", below="opencode"),)
    identity_fields = (
        ("workdir", "each session's directory"),
        ("workdir", "its project's worktree"),
    )

    def detect(self, path: Path) -> bool:
        if path.is_file():
            return database.is_database(path)
        if not path.is_dir():
            return False
        dbs, storage = _layout(path)
        return bool(dbs) or storage is not None

    def units(self, path: Path, options: UnitOptions = ()) -> list[Unit]:
        """A unit per group of sessions read together (``forks.groups``): the databases'
        sessions first, then the JSON sessions no database holds."""
        dbs, storage = _layout(path)
        out: list[Unit] = []
        good: list[Path] = []
        seen: dict[str, Overview] = {}
        for db in dbs:
            try:
                found = database.overview(db)
            except (SessionReadError, sqlite3.Error):
                out.append(self.unit((str(db),), name=str(db)))  # its load says why
                continue
            good.append(db)
            for o in found:
                seen.setdefault(o.id, o)
        for o in files.overview(storage) if storage is not None else []:
            seen.setdefault(o.id, o)
        side = [f"{db}{s}" for db in good for s in _SIDE if os.path.lexists(f"{db}{s}")]
        ordered = sorted(seen.values(), key=lambda o: (o.created, o.id))
        for g in sorted(groups(ordered), key=lambda g: (g.project, g.sessions[0])):
            json = files.group_files(storage, g) if storage is not None else []
            names = (*map(str, good), *side, *map(str, json))
            out.append(self.unit(names, key=g.key, name=f"{path}#{g.project}/{g.sessions[0]}"))
        return out

    def files(self, unit: Unit) -> tuple[str, ...]:
        """The group: its databases and JSON files are read together (``_stored``)."""
        if not unit.key:
            raise unlisted(Path(unit.files[0]), database.overview)
        return (unit.name,)

    def read(self, path: Path, unit: Unit, earlier: list[Stored]) -> Stored:
        return _stored(unit)

    def join(self, read: list[Stored], unit: Unit) -> Iterator[Written | SessionReadError]:
        """The group's trees (fork copies merged into their source), each written as entries;
        a child's tree then learns the call its parent's tree spawned it by."""
        for stored, errors in read:
            yield from errors
            children: dict[str, dict[str, tuple[int, str]]] = defaultdict(dict)
            for s in stored:
                if s.parent:
                    children[s.parent][s.id] = (s.created, s.parent)
            made = []
            for tree in trees(stored):
                draft = SessionDraft(tree.root.id, tree.root.source, "opencode", "opencode")
                made.append((tree, write(tree, children, draft)))
            spawned = {k: v for _, c in made for k, v in c.spawned.items()}
            yield from (Written(tree, c, spawned) for tree, c in made)

    def convert(self, tree: Written, unit: Unit) -> SessionDraft:
        return _session(tree.tree, tree.converter, tree.spawned)

    def session_ids(self, unit: Unit) -> list[str]:
        return list(Group.of(unit.key).sessions) if unit.key else []

    def identities(self, unit: Unit) -> list[Identity]:
        if not unit.key:
            return []
        group = Group.of(unit.key)
        found = files.folders([Path(f) for f in unit.files if not _is_db(f)])
        for db in (f for f in unit.files if _is_db(f)):
            try:
                found += database.folders(Path(db), group)
            except (SessionReadError, sqlite3.Error):
                continue
        return identities_of(found)

    def inputs(self, unit: Unit) -> tuple[str, ...] | None:
        return None if any(_is_db(f) for f in unit.files) else unit.files

    def foreign_folders(self, store: Path) -> dict[str, str]:
        """The data folder's and ``storage/``'s folders that hold no conversation."""
        dbs, storage = _layout(store) if store.is_dir() else ([], None)
        folders: list[tuple[Path, dict[str, str]]] = []
        if dbs or (storage is not None and storage != store):  # a data folder
            folders = [(store, DATA_DIR), (storage or store / "storage", STORAGE)]
        elif storage is not None:
            folders = [(storage, STORAGE)]
        found = {
            str(base / d): f"OpenCode's {what}, not sessions"
            for base, names in folders
            for d, what in names.items()
        }
        return {p: why for p, why in found.items() if os.path.isdir(p)}

    def fingerprint(self, unit: Unit, read: Reads | None = None) -> tuple[str, int]:
        """Of what the unit's load reads: its project's rows in each database and the JSON
        files it reads (a change elsewhere in the database leaves it alone)."""
        if not unit.key:
            return "", 0
        mine = {f"{f}#{unit.key}" if _is_db(f) else f for f in unit.files}
        if read is None or not mine & set(read):
            with _recording() as read:
                try:
                    _stored(unit)  # what the load reads, not converted
                except SessionReadError:
                    return "", 0
        digest, size = hashlib.sha256(), 0
        for name in sorted(mine & set(read)):
            digest.update(f"{name}\0{read[name][0]}\n".encode("utf-8", "surrogatepass"))
            size += read[name][1]
        return "sha256:" + digest.hexdigest(), size


def _is_db(name: str) -> bool:
    return not name.endswith((".json", *_SIDE))


def _stored(unit: Unit) -> Stored:
    """The group's sessions: each database's first, then the JSON sessions none holds (beside a
    database, marked ``opencode:not_in_database``: OpenCode's migration copied every JSON
    session into it once, so such a session was most likely deleted in OpenCode since)."""
    group = Group.of(unit.key)
    seen: dict[str, StoredSession] = {}
    errors: list[SessionReadError] = []
    project: dict[str, JSON] = {}
    for f in unit.files:
        if not _is_db(f):
            continue
        try:
            row, sessions = database.read_group(Path(f), group)
        except SessionReadError as exc:
            errors.append(exc)
            continue
        project = project or row
        for s in sessions:
            if s.id in seen:
                seen[s.id].counts["copies_in_later_databases"] += 1
            else:
                seen[s.id] = s
    project_file, layouts = files.layouts([Path(f) for f in unit.files if f.endswith(".json")])
    for sid, layout in layouts.items():
        if sid not in group.sessions:
            continue
        if sid in seen:
            seen[sid].counts["json_copies_not_read"] += 1
            continue
        seen[sid] = s = files.read_session(sid, layout)
        if any(_is_db(f) for f in unit.files):  # migrated once: most such were deleted since
            s.info["opencode:not_in_database"] = True
            s.counts["json_sessions_not_in_database"] += 1
    project = project or files.read_project_file(project_file)
    for s in seen.values():
        s.info.setdefault("opencode:project", project)
    return list(seen.values()), errors


def _session(tree: Tree, c: Converter, spawned: dict[str, str]) -> SessionDraft:
    d = c.draft
    root = tree.root
    h = root.info
    if root.created > 0:
        d.created_at = ts_of(root.created)
    if isinstance(h.get("version"), str):
        d.harness["version"] = h["version"]
    if isinstance(h.get("directory"), str) and h["directory"]:
        d.members["cwd"] = h["directory"]
    if root.parent:
        d.members["parent_session"] = root.parent
        if root.id in spawned:
            d.members["spawned_by"] = spawned[root.id]
    keep = ("slug", "projectID", "title", "summary", "share", "permission", "time", "revert")
    d.members |= {f"opencode:{k}": h[k] for k in keep if h.get(k) is not None}
    d.members |= {k: v for k, v in h.items() if k.startswith("opencode:") and v}
    d.members["opencode:origin"] = root.origin
    if root.todos:
        d.members["opencode:todos"] = root.todos
    if root.orphans:
        d.members["opencode:orphan_parts"] = root.orphans
        d.issues.append(Issue("orphan_parts", None, f"{len(root.orphans)} part(s) name a "
                              "message the store does not hold; kept in the header's "
                              "opencode:orphan_parts, not in any step"))  # fmt: skip
    forks = [seg for seg in tree.segments if seg.attach is not None]
    if forks:
        d.members["opencode:forks"] = [
            {"session": seg.session.id, "source": seg.source, "copied": seg.start,
             "origin": seg.session.origin,
             **{k: seg.session.info[k] for k in ("title", "revert") if k in seg.session.info}}
            for seg in forks
        ]  # fmt: skip
    sessions = [seg.session for seg in tree.segments]
    for s in sessions:
        d.meet("workdir", s.info.get("directory"))
        project = s.info.get("opencode:project")
        d.meet("workdir", project.get("worktree") if isinstance(project, dict) else None)
    d.issues = [*(i for s in sessions for i in s.issues), *d.issues]  # and the converter's
    d.counts.update({f"opencode/{k}": v for k, v in c.counts.items()})
    for s in sessions:
        d.counts.update({f"opencode/{k}": v for k, v in s.counts.items()})
    d.counts["opencode/sessions"] = len(sessions)
    return d
