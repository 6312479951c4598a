"""The OpenCode SQLite database, v1.2 and later 1.x (specs/opencode.md §2): a group of
sessions read in one snapshot.

The tables ``project``, ``session``, ``message``, ``part`` and ``todo`` are read
through ``snapshot.read_snapshot`` (read-only, no side files left, the writer
never blocked); the secrets of ``session_share`` and ``control_account`` never
are.  A 2.x database (``session_v2``, or ``session_message`` rows and no
``message`` rows) is refused with a message: its shapes are not known yet (§1).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections import defaultdict
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

from trajset.schemas.session import Issue

from ...errors import SessionReadError
from ..base import note_read
from ..jsonl import json_kind
from ..regular import open_input
from ..snapshot import read_snapshot
from .records import Group, Message, Overview, StoredSession, as_ms, decoded, ordered, record

JSON = Any
SQLITE_MAGIC = b"SQLite format 3\x00"
REQUIRED = {
    "session": ("id", "project_id", "directory", "title", "time_created"),
    "message": ("id", "session_id", "time_created", "data"),
    "part": ("id", "message_id", "session_id", "data"),
}
#: session columns that become ``Session.Info`` members by name; the rest are kept as found
_KNOWN = {"id", "project_id", "parent_id", "slug", "directory", "title", "version",
          "share_url", "summary_additions", "summary_deletions", "summary_files",
          "summary_diffs", "revert", "permission", "time_created", "time_updated",
          "time_compacting", "time_archived"}  # fmt: skip
Row = dict[str, JSON]


def _tables(db: sqlite3.Connection) -> dict[str, set[str]]:
    names = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    return {n: {c[1] for c in db.execute(f"PRAGMA table_info({json.dumps(n)})")} for n in names}


def is_database(path: Path) -> bool:
    """An OpenCode database, of any generation (a 2.x one is refused when read): a SQLite
    file with its tables, or a file named as OpenCode names them (an empty or damaged one
    is then an error row, not a store no reader recognises)."""
    if path.name == "opencode.db" or fnmatch(path.name, "opencode-*.db"):
        return path.is_file()  # empty or damaged: its load is the row that says so
    try:
        with open_input(path) as fh:
            if fh.read(16) != SQLITE_MAGIC:
                return False
        tables = read_snapshot(path, _tables)
    except (OSError, sqlite3.Error):
        return False
    return "session_v2" in tables or all(t in tables for t in REQUIRED)


def check(db: sqlite3.Connection, path: Path) -> dict[str, set[str]]:
    """The database's tables and their columns; ``SessionReadError`` for a 2.x database or a
    table or column the reader needs."""
    tables = _tables(db)
    later = "session_v2" in tables or (
        "session_message" in tables
        and db.execute("SELECT 1 FROM session_message LIMIT 1").fetchone() is not None
        and db.execute("SELECT 1 FROM message LIMIT 1").fetchone() is None
    )
    if later:
        raise SessionReadError(
            "an OpenCode 2.x database (session_v2 / session_message): trajset reads the 1.x "
            "tables (session, message, part) only, so nothing of it was exported; the JSON "
            "files beside it, if any, are read",
            rule="unsupported", source=str(path),
        )  # fmt: skip
    for table, columns in REQUIRED.items():
        missing = [c for c in columns if c not in tables.get(table, set())]
        if missing:
            raise SessionReadError(
                f"not an OpenCode 1.x database: table {table!r} lacks {', '.join(missing)}",
                rule="format", source=str(path),
            )  # fmt: skip
    return tables


def overview(path: Path) -> list[Overview]:
    """Every session of the database with what its grouping needs (``records.Overview``),
    oldest first, read in one snapshot."""
    first = ("(SELECT m.{} FROM message m WHERE m.session_id = s.id "
             "ORDER BY m.time_created, m.id LIMIT 1)")  # fmt: skip

    def read(db: sqlite3.Connection) -> list[Overview]:
        check(db, path)
        q = (f"SELECT s.id, s.project_id, s.parent_id, s.time_created, "
             f"{first.format('time_created')}, {first.format('data')} FROM session s "
             "ORDER BY s.time_created, s.id")  # fmt: skip
        return [Overview(str(sid), str(project), str(parent or ""), _first(at, data), as_ms(made))
                for sid, project, parent, made, at, data in db.execute(q)]  # fmt: skip

    return read_snapshot(path, read)


def _first(created: JSON, data: JSON) -> tuple[str, int] | None:
    """(role, creation ms) of a session's first message, from its row; None without one."""
    if created is None:
        return None
    info = decoded(data, "", "", [])
    return (str(info.get("role") or "") if isinstance(info, dict) else "", as_ms(created))


def _rows(db: sqlite3.Connection, sql: str, args: tuple[JSON, ...]) -> list[Row]:
    cur = db.execute(sql, args)
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r, strict=True)) for r in cur]


def _snapshot(path: Path, unit: Group) -> dict[str, list[Row]]:
    """Every row of the group's sessions the reader uses, read in one transaction."""

    def read(db: sqlite3.Connection) -> dict[str, list[Row]]:
        tables = check(db, path)
        ids = (json.dumps(list(unit.sessions)),)
        mine = "IN (SELECT value FROM json_each(?))"
        out = {
            "project": _rows(db, "SELECT * FROM project WHERE id = ?", (unit.project,))
            if "project" in tables else [],
            "session": _rows(db, f"SELECT * FROM session WHERE id {mine} "
                             "ORDER BY time_created, id", ids),
            "message": _rows(db, "SELECT id, session_id, time_created, data FROM message "
                             f"WHERE session_id {mine} ORDER BY session_id, id", ids),
            # a part by its session or by its message's (a part whose session id is damaged)
            "part": _rows(db, "SELECT id, message_id, session_id, data FROM part "
                          f"WHERE session_id {mine} OR message_id IN (SELECT id FROM message "
                          f"WHERE session_id {mine}) ORDER BY message_id, id", ids * 2),
            "todo": [],
        }  # fmt: skip
        if "todo" in tables:
            out["todo"] = _rows(db, f"SELECT * FROM todo WHERE session_id {mine} ORDER BY "
                                "session_id, position", ids)  # fmt: skip
        return out

    rows = read_snapshot(path, read)
    note_read(f"{path}#{unit.key}", _fingerprint(rows))
    return rows


def _fingerprint(rows: dict[str, list[Row]]) -> tuple[str, int]:
    """(``sha256:`` of every value the rows hold, in order, and their size)."""
    digest, size = hashlib.sha256(), 0
    for table in sorted(rows):
        for row in rows[table]:
            for v in row.values():
                text = v if isinstance(v, str) else f"\x00{v!r}"  # None is not "None"
                data = text.encode("utf-8", "surrogatepass")
                digest.update(b"%d:" % len(data) + data)
                size += len(data)
    return "sha256:" + digest.hexdigest(), size


def read_group(path: Path, unit: Group) -> tuple[Row, list[StoredSession]]:
    """The project's row and the group's sessions the database holds; ``SessionReadError``
    when it cannot be read."""
    try:
        rows = _snapshot(path, unit)
    except sqlite3.Error as exc:
        raise SessionReadError(
            f"the database cannot be read ({exc}); nothing of it was exported",
            rule="io", source=str(path),
        ) from None  # fmt: skip
    sessions = {r["id"]: _session(path, r) for r in rows["session"]}
    messages: dict[str, Message] = {}
    seen_parts: set[str] = set()
    holder: dict[str, StoredSession] = {}  # message id -> its session
    for r in rows["message"]:
        s = sessions.get(r["session_id"])
        if s is None:
            continue
        if str(r["id"]) in messages:
            s.issues.append(_repeated("message", r["id"], path))
            continue
        data = decoded(r["data"], f"message {r['id']}", str(path), s.issues)
        if not isinstance(r["time_created"], int):
            s.issues.append(Issue("bad_field", None, f"message {r['id']}: time_created is "
                                  f"{json_kind(r['time_created'])}, not a time in ms; read as "
                                  "unknown", str(path)))  # fmt: skip
        if data is not None:
            m = Message(str(r["id"]), as_ms(r["time_created"]), record(data, str(r["id"])))
            messages[m.id] = m
            holder[m.id] = s
            s.messages.append(m)
    for r in rows["part"]:
        named, by_message = sessions.get(r["session_id"]), holder.get(r["message_id"])
        s = by_message or named
        if s is None:
            continue  # its message did not decode: that message's row says so
        if named is not s:  # selected by its message: read with it, said
            s.issues.append(Issue("bad_field", None, f"part {r['id']}: session_id "
                                  f"{r['session_id']!r} is not its message's session; read with "
                                  "its message", str(path)))  # fmt: skip
        if str(r["id"]) in seen_parts:
            s.issues.append(_repeated("part", r["id"], path))
            continue
        seen_parts.add(str(r["id"]))
        data = decoded(r["data"], f"part {r['id']}", str(path), s.issues)
        if data is None:
            continue
        part = record(data, str(r["id"]))
        owner = messages.get(r["message_id"])
        (owner.parts if owner is not None else s.orphans).append(part)
    todos: dict[str, list[JSON]] = defaultdict(list)
    for r in rows["todo"]:
        todos[str(r.get("session_id"))].append(
            {k: v for k, v in r.items() if k not in ("session_id", "time_created", "time_updated")}
        )
    for s in sessions.values():
        s.messages = ordered(s.messages)
        s.todos = todos.get(s.id, [])
    return (rows["project"][0] if rows["project"] else {}), list(sessions.values())


def _json_column(row: Row, name: str, issues: list[Issue], source: str) -> JSON:
    text = row.get(name)
    if text is None:
        return None
    try:
        return json.loads(text)
    except (TypeError, ValueError, RecursionError) as exc:
        issues.append(Issue("bad_json", None, f"session {row['id']}: column {name} is not "
                            f"JSON ({exc}); kept as text", source))  # fmt: skip
        return text


def _session(path: Path, row: Row) -> StoredSession:
    """A ``session`` row as the ``Session.Info`` OpenCode builds from it (``fromRow``)."""
    sid = str(row["id"])
    s = StoredSession(sid, {}, [], f"{path}#{sid}", "database")
    info: Row = {"id": sid, "projectID": row["project_id"], "directory": row["directory"],
                 "title": row["title"], "version": row.get("version")}  # fmt: skip
    for column, member in (("slug", "slug"), ("parent_id", "parentID")):
        if row.get(column):
            info[member] = row[column]
    if row.get("share_url"):
        info["share"] = {"url": row["share_url"]}
    if any(row.get(f"summary_{k}") is not None for k in ("additions", "deletions", "files")):
        info["summary"] = {k: row.get(f"summary_{k}") for k in ("additions", "deletions", "files")}
        if row.get("summary_diffs") is not None:
            info["summary"]["diffs"] = _json_column(row, "summary_diffs", s.issues, str(path))
    for name in ("revert", "permission"):
        if row.get(name) is not None:
            info[name] = _json_column(row, name, s.issues, str(path))
    info["time"] = {"created": row["time_created"], "updated": row.get("time_updated")}
    for k in ("compacting", "archived"):
        if row.get(f"time_{k}") is not None:
            info["time"][k] = row[f"time_{k}"]
    later = {k: v for k, v in row.items() if k not in _KNOWN and v is not None}
    if later:
        info["opencode:columns"] = later
    s.info = info
    return s


def folders(path: Path, unit: Group) -> list[tuple[str, JSON]]:
    """(``workdir``, value) of the group's sessions' directories and their project's
    worktree, in one snapshot (what ``Reader.identities`` asks, cheaply)."""
    marks = ",".join("?" * len(unit.sessions))

    def read(db: sqlite3.Connection) -> list[tuple[str, JSON]]:
        q = ("SELECT s.directory, p.worktree FROM session s LEFT JOIN project p "
             f"ON p.id = s.project_id WHERE s.id IN ({marks}) ORDER BY s.time_created, s.id")  # fmt: skip
        return [("workdir", v) for row in db.execute(q, unit.sessions) for v in row]

    return read_snapshot(path, read)


def _repeated(table: str, rid: object, path: Path) -> Issue:
    """A row whose id an earlier row of its table has (a table without its key): read once."""
    return Issue("duplicate_record", None, f"{path.name}: {table} {rid!s} appears again; the "
                 "later row is left out", source=str(path))  # fmt: skip
