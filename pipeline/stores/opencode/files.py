"""The OpenCode JSON store, v0.6 to v1.1.65 (specs/opencode.md §1): ``storage/`` files.

``session/<project>/<session>.json``, ``message/<session>/<message>.json`` and
``part/<message>/<part>.json``, each id taken from its file name (as OpenCode's
own migration does), plus ``project/<project>.json`` and ``todo/<session>.json``.
Files are written in place, not atomically, so a crash leaves a cut file: each
that does not read is one issue naming it, and the rest of its session is read.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trajset.schemas.session import Issue

from ...errors import SessionReadError
from ..base import read_input
from ..jsonl import json_kind
from .records import Group, Message, Overview, StoredSession, as_ms, decoded, obj, ordered, record

JSON = Any
#: the folders of ``storage/`` that hold conversation records
KINDS = ("session", "message", "part", "project", "todo")


def is_storage(path: Path) -> bool:
    """A ``storage/`` folder: ``session/`` beside ``message/`` or ``project/``."""
    return (path / "session").is_dir() and any((path / d).is_dir() for d in ("message", "project"))


def _json_names(folder: Path) -> list[Path]:
    try:
        with os.scandir(folder) as it:
            return sorted(Path(e.path) for e in it if e.name.endswith(".json") and e.is_file())
    except OSError:
        return []


def projects(storage: Path) -> list[str]:
    try:
        with os.scandir(storage / "session") as it:
            return sorted(e.name for e in it if e.is_dir(follow_symlinks=False))
    except OSError:
        return []


def overview(storage: Path) -> list[Overview]:
    """Every session of the store with what its grouping needs: its session file and its
    message files are read (a file that does not read is reported when its unit is)."""
    out = []
    for project in projects(storage):
        for f in _json_names(storage / "session" / project):
            info = obj(_load(f, "", []))
            firsts = []
            for m in _json_names(storage / "message" / f.stem):
                data = obj(_load(m, "", []))
                created = as_ms(obj(data.get("time")).get("created"))
                firsts.append((created, m.stem, str(data.get("role") or "")))
            head = min(firsts, default=None)
            parent = info.get("parentID")
            out.append(Overview(f.stem, project, parent if isinstance(parent, str) else "",
                                (head[2], head[0]) if head else None,
                                as_ms(obj(info.get("time")).get("created"))))  # fmt: skip
    return out


def group_files(storage: Path, group: Group) -> list[Path]:
    """Every file of the group's sessions (and the project's file), in a stable order."""
    out = [storage / "project" / f"{group.project}.json"]
    out = [p for p in out if p.is_file()]
    for sid in group.sessions:
        s = storage / "session" / group.project / f"{sid}.json"
        if not s.is_file():
            continue
        out.append(s)
        for m in _json_names(storage / "message" / sid):
            out.append(m)
            out.extend(_json_names(storage / "part" / m.stem))
        todo = storage / "todo" / f"{sid}.json"
        if todo.is_file():
            out.append(todo)
    return out


@dataclass
class Layout:
    """The files of one session, by what they hold."""

    session: Path
    messages: dict[str, Path] = field(default_factory=dict)
    parts: dict[str, list[Path]] = field(default_factory=dict)
    todo: Path | None = None


def layouts(files: list[Path]) -> tuple[Path | None, dict[str, Layout]]:
    """(the project file, session id -> its files) of a unit's JSON files."""
    project: Path | None = None
    sessions: dict[str, Layout] = {}
    owner: dict[str, str] = {}  # message id -> session id
    for f in files:
        kind = f.parent.name if f.parent.name in ("project", "todo") else f.parent.parent.name
        if kind == "project":
            project = f
        elif kind == "session":
            sessions[f.stem] = Layout(f)
        elif kind == "message" and f.parent.name in sessions:
            sessions[f.parent.name].messages[f.stem] = f
            owner[f.stem] = f.parent.name
        elif kind == "part" and f.parent.name in owner:
            sessions[owner[f.parent.name]].parts.setdefault(f.parent.name, []).append(f)
        elif kind == "todo" and f.stem in sessions:
            sessions[f.stem].todo = f
    return project, sessions


def _load(path: Path, what: str, issues: list[Issue], of: type | tuple[type, ...] = dict) -> JSON:
    try:
        data = read_input(path)
    except SessionReadError as exc:
        issues.append(Issue("io", None, f"{what}: {exc.message}", str(path)))
        return None
    return decoded(data, what, str(path), issues, of)


def read_project_file(path: Path | None) -> dict[str, JSON]:
    return (_load(path, "project file", []) or {}) if path else {}


def read_session(sid: str, layout: Layout) -> StoredSession:
    """One session from its files; a file that does not read is an issue naming it."""
    s = StoredSession(sid, {}, [], str(layout.session), "json")
    info = _load(layout.session, "session file", s.issues)
    s.info = {**(info or {}), "id": sid}
    for mid, path in layout.messages.items():
        data = _load(path, f"message {mid}", s.issues)
        if _copy(data, path, layout.messages, s.issues):
            continue
        files = layout.parts.get(mid, [])
        stems = {f.stem: f for f in files}
        parts = [
            record(p, f.stem)
            for f in files
            if (p := _load(f, f"part {f.stem}", s.issues)) is not None
            and not _copy(p, f, stems, s.issues)
        ]
        if data is None:
            s.orphans.extend(parts)
            continue
        created = obj(data.get("time")).get("created")
        if not isinstance(created, int) or isinstance(created, bool):
            s.issues.append(Issue("bad_field", None, f"message {mid}: time.created is "
                                  f"{json_kind(created)}, not a time in ms; read as unknown",
                                  str(path)))  # fmt: skip
        s.messages.append(Message(mid, as_ms(created), record(data, mid), parts))
    s.messages = ordered(s.messages)
    if layout.todo is not None:
        todos = _load(layout.todo, "todo file", s.issues, (list, dict))
        s.todos = todos if isinstance(todos, list) else [todos] if todos is not None else []
    return s


def _copy(data: JSON, path: Path, named: dict[str, Path], issues: list[Issue]) -> bool:
    """Whether ``path`` holds a record whose own id names another file beside it (a copy
    under another name, which would say it twice): a ``duplicate_record`` issue."""
    own = data.get("id") if isinstance(data, dict) else None
    if not isinstance(own, str) or own == path.stem or own not in named:
        return False
    issues.append(Issue("duplicate_record", None, f"{path.name} holds record {own}, which "
                        f"{named[own].name} holds; the copy is left out", str(path)))  # fmt: skip
    return True


def folders(names: list[Path]) -> list[tuple[str, JSON]]:
    """(``workdir``, value) of the project file's worktree and each session file's directory
    among a unit's files (what ``Reader.identities`` asks, cheaply)."""
    out: list[tuple[str, JSON]] = []
    for f in names:
        member = "directory" if f.parent.parent.name == "session" else ""
        member = "worktree" if f.parent.name == "project" else member
        if member:
            out.append(("workdir", obj(_load(f, "", [])).get(member)))
    return out
