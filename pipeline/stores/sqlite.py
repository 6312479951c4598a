"""The agentsession SQLite store (spec §8.2): one unit per session row, safe on a live store.

The database is opened read-only (``mode=ro``), the writer's lease
(``holders``) is never read or taken, and each session is read in one
short read transaction, so a writer appending meanwhile gives a consistent
prefix and is never blocked for longer than that read (in WAL mode, the
reference's journal mode, not at all).  A session is rebuilt as its JSONL
text and read exactly like a file.  A SQLite file that is not such a store
is refused with the missing table or column named.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from trajset.schemas.session import Session

from ..errors import SessionReadError, UsageError
from .agentsession import read_session_text
from .base import Loaded, Reader, Unit, UnitOptions

SQLITE_MAGIC = b"SQLite format 3\x00"
#: what the reader needs of the schema
REQUIRED = {"sessions": ("id", "created_at", "header"), "entries": ("session_id", "seq", "line")}


def _connect(path: Path) -> sqlite3.Connection:
    """Read-only, never creating a file, whatever characters the path holds."""
    db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, isolation_level=None)
    db.execute("PRAGMA query_only = ON")
    return db


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


def read_sqlite_session(path: Path, session_id: str) -> Session:
    """The session's header and entry lines, read in one transaction, then read as a file."""
    source = f"{path}#{session_id}"
    try:
        db = _connect(path)
        try:
            db.execute("BEGIN")  # one snapshot: a concurrent append is seen whole or not at all
            row = db.execute("SELECT header FROM sessions WHERE id = ?", (session_id,)).fetchone()
            lines = [
                r[0]
                for r in db.execute(
                    "SELECT line FROM entries WHERE session_id = ? ORDER BY seq", (session_id,)
                )
            ]
            db.execute("COMMIT")
        finally:
            db.close()
    except sqlite3.Error as exc:
        raise SessionReadError(f"database error: {exc}", rule="io", source=source) from None
    if row is None:
        raise SessionReadError("no such session in the database", rule="io", source=source)
    if not all(isinstance(x, str) for x in (row[0], *lines)):
        raise SessionReadError("a header or line is not text", rule="bad_line", source=source)
    return read_session_text("\n".join([row[0], *lines]) + "\n", source=source)


class SqliteReader(Reader):
    """``agentsession-sqlite``: a database file holding ``sessions`` and ``entries`` tables
    (no default location: the reference names none)."""

    kind = "agentsession-sqlite"

    def detect(self, path: Path) -> bool:
        if not path.is_file():  # a FIFO would block the open
            return False
        try:
            with path.open("rb") as fh:
                return fh.read(16) == SQLITE_MAGIC
        except OSError:
            return False

    def units(self, path: Path, options: UnitOptions = ()) -> list[Unit]:
        try:
            db = _connect(path)
            try:
                check_schema(db, path)
                ids = [r[0] for r in db.execute("SELECT id FROM sessions ORDER BY created_at, id")]
            finally:
                db.close()
        except sqlite3.Error as exc:
            raise UsageError(f"{path}: not an agentsession database ({exc})") from None
        return [self.unit((str(path),), sid) for sid in ids]

    def load(self, unit: Unit) -> Loaded:
        return [read_sqlite_session(Path(unit.files[0]), unit.key)]

    def session_ids(self, unit: Unit) -> list[str]:
        return [unit.key]

    def inputs(self, unit: Unit) -> None:
        return None  # the database is shared by many units; rows have no stable bytes of their own
