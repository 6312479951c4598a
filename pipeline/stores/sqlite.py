"""The agentsession SQLite store (spec §8.2): one unit per session row.

A session is rebuilt as its JSONL text (the header column, then the entry
lines by ``seq``) and read exactly like a file, so both stores give the
same ``Session``.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from trajset.schemas.session import Session

from ..errors import SessionReadError, UsageError
from .agentsession import read_session_text
from .base import Loaded, Unit

SQLITE_MAGIC = b"SQLite format 3\x00"


def _connect(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"file:{path}?mode=ro", uri=True)


def read_sqlite_session(path: Path, session_id: str) -> Session:
    """Rebuild the JSONL text (header, then lines by ``seq``) and read it as a file."""
    source = f"{path}#{session_id}"
    try:
        with _connect(path) as db:
            row = db.execute("SELECT header FROM sessions WHERE id = ?", (session_id,)).fetchone()
            if row is None:
                raise SessionReadError("no such session in the database", rule="io", source=source)
            lines = [row[0]] + [
                r[0]
                for r in db.execute(
                    "SELECT line FROM entries WHERE session_id = ? ORDER BY seq", (session_id,)
                )
            ]
    except sqlite3.Error as exc:
        raise SessionReadError(f"database error: {exc}", rule="io", source=source) from None
    return read_session_text("\n".join(lines) + "\n", source=source)


class SqliteReader:
    """``agentsession-sqlite``: a database file holding ``sessions`` and ``entries`` tables."""

    def detect(self, path: Path) -> bool:
        try:
            with path.open("rb") as fh:
                return path.is_file() and fh.read(16) == SQLITE_MAGIC
        except OSError:
            return False

    def units(self, path: Path, options: tuple[tuple[str, str], ...] = ()) -> list[Unit]:
        try:
            with _connect(path) as db:
                ids = [r[0] for r in db.execute("SELECT id FROM sessions ORDER BY created_at, id")]
        except sqlite3.Error as exc:
            raise UsageError(f"{path}: not an agentsession database ({exc})") from None
        return [Unit("agentsession-sqlite", (str(path),), sid, options=options) for sid in ids]

    def load(self, unit: Unit) -> Loaded:
        return [read_sqlite_session(Path(unit.files[0]), unit.key)]

    def session_ids(self, unit: Unit) -> list[str]:
        return [unit.key]

    def fingerprint(self, unit: Unit) -> tuple[str, int]:
        return "", 0  # the database is shared by many units; rows have no stable bytes of their own
