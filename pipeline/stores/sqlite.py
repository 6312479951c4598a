"""The agentsession SQLite store (spec §8.2): one unit per session row, safe on a live store.

The database is read through ``snapshot.read_snapshot`` (read-only, no side
files left, one short read transaction), the writer's lease (``holders``) is
never read or taken, so a writer appending meanwhile gives a consistent prefix
and is never blocked for longer than that read (in WAL mode, the reference's
journal mode, not at all).  A session is rebuilt as its JSONL
text and read exactly like a file.  A SQLite file that is not such a store
is refused with the missing table or column named.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path
from typing import Any

from trajset.redactors.identities import Identity, header_identities
from trajset.schemas.session import Session

from ..errors import SessionReadError, UsageError
from .agentsession import AgentSessionReader, read_session_text
from .base import Fixture, Loaded, Match, Reader, Reads, Unit, UnitOptions
from .regular import open_input
from .snapshot import read_snapshot, unlisted

SQLITE_MAGIC = b"SQLite format 3\x00"
#: what the reader needs of the schema
REQUIRED = {"sessions": ("id", "created_at", "header"), "entries": ("session_id", "seq", "line")}


def check_schema(db: sqlite3.Connection, path: Path) -> None:
    """``UsageError`` naming the first table or column an agentsession store must have."""
    for table, columns in REQUIRED.items():
        have = {row[1] for row in db.execute(f"PRAGMA table_info({table})")}
        if not have:
            raise UsageError(f"{path}: not an agentsession database (no table {table!r})")
        for column in columns:
            if column not in have:
                raise UsageError(
                    f"{path}: not an agentsession database (table {table!r} has no column {column!r})"
                )


def session_text(path: Path, session_id: str) -> str:
    """The session as the text of a session file: its header and entry lines, read in one
    transaction (``SessionReadError`` when they cannot be)."""
    source = f"{path}#{session_id}"

    def rows(db: sqlite3.Connection) -> tuple[tuple[Any, ...] | None, list[Any]]:
        row = db.execute("SELECT header FROM sessions WHERE id = ?", (session_id,)).fetchone()
        lines = [
            r[0]
            for r in db.execute(
                "SELECT line FROM entries WHERE session_id = ? ORDER BY seq", (session_id,)
            )
        ]
        return row, lines

    try:
        row, lines = read_snapshot(path, rows)  # a concurrent append is seen whole or not at all
    except sqlite3.Error as exc:
        raise SessionReadError(f"database error: {exc}", rule="io", source=source) from None
    if row is None:
        raise SessionReadError("no such session in the database", rule="io", source=source)
    if not all(isinstance(x, str) for x in (row[0], *lines)):
        raise SessionReadError("a header or line is not text", rule="bad_line", source=source)
    return "\n".join([row[0], *lines]) + "\n"


#: every session, oldest first, with the characters of its header and lines (its weight)
_SIZES = """
SELECT s.id, length(s.header) + COALESCE(SUM(length(e.line)), 0) FROM sessions s
LEFT JOIN entries e ON e.session_id = s.id GROUP BY s.id ORDER BY s.created_at, s.id
"""


def _session_ids(path: Path) -> list[str]:
    """Every session id of the database, oldest first; ``UsageError`` when it is a database
    of something else, ``sqlite3.DatabaseError`` when it cannot be read."""

    def ids(db: sqlite3.Connection) -> list[str]:
        check_schema(db, path)
        return [r[0] for r in db.execute("SELECT id FROM sessions ORDER BY created_at, id")]

    return read_snapshot(path, ids)


def _session_sizes(path: Path) -> list[tuple[str, int]]:
    """(id, size) of every session (``_session_ids``' order and errors): its size weighs its
    unit in the batches."""

    def sizes(db: sqlite3.Connection) -> list[tuple[str, int]]:
        check_schema(db, path)
        return [(r[0], r[1] if isinstance(r[1], int) else 0) for r in db.execute(_SIZES)]

    return read_snapshot(path, sizes)


def read_sqlite_session(path: Path, session_id: str) -> Session:
    """The session's text (``session_text``), read as a file is."""
    text = session_text(path, session_id)
    return read_session_text(text, source=f"{path}#{session_id}")


class SqliteReader(Reader):
    """``agentsession-sqlite``: a database file holding ``sessions`` and ``entries`` tables
    (no default location: the reference names none)."""

    kind = "agentsession-sqlite"
    match = Match.FORMAT
    fixtures = (Fixture("build:sqlite"),)
    identity_fields = AgentSessionReader.identity_fields  # the header column's

    def detect(self, path: Path) -> bool:
        if not path.is_file():  # a FIFO would block the open
            return False
        try:
            with open_input(path) as fh:
                return fh.read(16) == SQLITE_MAGIC
        except OSError:
            return False

    def units(self, path: Path, options: UnitOptions = ()) -> list[Unit]:
        """A unit per session; a database that does not open or list its sessions (a cut or
        damaged file) is one unit without a session key, whose load reports why."""
        try:
            found = _session_sizes(path)
        except sqlite3.DatabaseError:
            return [self.unit((str(path),))]
        return [self.unit((str(path),), sid, size=size) for sid, size in found]

    def load(self, unit: Unit) -> Loaded:
        path = Path(unit.files[0])
        if not unit.key:  # the database did not list its sessions
            raise unlisted(path, _session_ids)
        return [read_sqlite_session(path, unit.key)]

    def session_ids(self, unit: Unit) -> list[str]:
        return [unit.key] if unit.key else []

    def identities(self, unit: Unit) -> list[Identity]:
        def header(db: sqlite3.Connection) -> Any:
            return db.execute("SELECT header FROM sessions WHERE id = ?", (unit.key,)).fetchone()

        try:
            row = read_snapshot(Path(unit.files[0]), header) if unit.key else None
            head = json.loads(row[0]) if row and isinstance(row[0], str) else {}
        except (sqlite3.Error, ValueError, RecursionError):
            return []
        return header_identities(head) if isinstance(head, dict) else []

    def inputs(self, unit: Unit) -> None:
        return None  # the database is shared by many units; their rows are their inputs

    def fingerprint(self, unit: Unit, read: Reads | None = None) -> tuple[str, int]:
        """Of the session's rows, as the text the reader reads: a change to another session
        of the database leaves this unit's fingerprint (and ``--mode resume``) alone."""
        try:
            data = session_text(Path(unit.files[0]), unit.key).encode("utf-8", "surrogatepass")
        except SessionReadError:
            return "", 0
        return "sha256:" + hashlib.sha256(data).hexdigest(), len(data)
