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
from pathlib import Path
from typing import Any

from trajset.redactors.identities import Identity, identities_of
from trajset.schemas.session import Session

from ...errors import SessionReadError
from ..base import Loaded, Location, Reader, Reads, Unit, UnitOptions, converted_session
from ..base import recording_reads as _recording
from ..snapshot import unlisted
from . import database, files
from .branches import write
from .convert import ts_of
from .forks import Tree, groups, trees
from .records import Group, Overview, StoredSession

JSON = Any
PAYLOAD = "openresponses/2026-04-24"
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


class OpenCodeReader(Reader):
    """``opencode``: a data folder (``~/.local/share/opencode``), its ``opencode.db``, or a
    legacy ``storage/`` folder."""

    kind = "opencode"
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

    def load(self, unit: Unit) -> Loaded:
        if not unit.key:
            raise unlisted(Path(unit.files[0]), database.overview)
        stored, errors = _stored(unit)
        out: Loaded = list(errors)
        children: dict[str, dict[str, tuple[int, str]]] = defaultdict(dict)
        for s in stored:
            if s.parent:
                children[s.parent][s.id] = (s.created, s.parent)
        made = []
        for tree in trees(stored):
            c = write(tree, children)
            made.append((tree, c))
        spawned = {k: v for _, c in made for k, v in c.spawned.items()}
        for tree, c in made:
            try:
                out.append(_session(tree, c.raws, dict(c.counts), spawned))
            except SessionReadError as exc:
                out.append(exc)
        return out

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


def _stored(unit: Unit) -> tuple[list[StoredSession], list[SessionReadError]]:
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


def _session(
    tree: Tree, raws: list[dict[str, JSON]], counts: dict[str, int], spawned: dict[str, str]
) -> Session:
    root = tree.root
    h = root.info
    header: dict[str, JSON] = {
        "type": "session", "format": "agentsession/0.2", "id": root.id,
        "created_at": ts_of(root.created) if root.created > 0 else raws[0]["ts"],
        "payload": PAYLOAD, "harness": {"name": "opencode"},
    }  # fmt: skip
    if isinstance(h.get("version"), str):
        header["harness"]["version"] = h["version"]
    if isinstance(h.get("directory"), str) and h["directory"]:
        header["cwd"] = h["directory"]
    if root.parent:
        header["parent_session"] = root.parent
        if root.id in spawned:
            header["spawned_by"] = spawned[root.id]
    keep = ("slug", "projectID", "title", "summary", "share", "permission", "time", "revert")
    header |= {f"opencode:{k}": h[k] for k in keep if h.get(k) is not None}
    header |= {k: v for k, v in h.items() if k.startswith("opencode:") and v}
    header["opencode:origin"] = root.origin
    if root.todos:
        header["opencode:todos"] = root.todos
    if root.orphans:
        header["opencode:orphan_parts"] = root.orphans
    forks = [seg for seg in tree.segments if seg.attach is not None]
    if forks:
        header["opencode:forks"] = [
            {"session": seg.session.id, "source": seg.source, "copied": seg.start,
             "origin": seg.session.origin,
             **{k: seg.session.info[k] for k in ("title", "revert") if k in seg.session.info}}
            for seg in forks
        ]  # fmt: skip
    sessions = [seg.session for seg in tree.segments]
    issues = [i for s in sessions for i in s.issues]
    total: dict[str, int] = {f"opencode/{k}": v for k, v in counts.items()}
    for s in sessions:
        for k, v in s.counts.items():
            total[f"opencode/{k}"] = total.get(f"opencode/{k}", 0) + v
    total["opencode/sessions"] = len(sessions)
    return converted_session(header, raws, root.source, "opencode", issues, total)
