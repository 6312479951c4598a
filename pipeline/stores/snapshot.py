"""One consistent read of a SQLite database that writes nothing beside it and never blocks
its writer (the agentsession and OpenCode stores).

A read-only connection to a WAL database creates its ``-wal`` and ``-shm``
files when they are missing, and cannot delete them again, so a plain
``mode=ro`` open leaves files in the user's store.  When no ``-wal`` file
exists, nothing is mid-write: the database is read as ``immutable`` (no lock,
no side files), and the read is kept only if afterwards there is still no
``-wal`` and the file is unchanged.  Otherwise (a writer is or became active,
so its side files exist) it is read with ``mode=ro`` in one read transaction:
in WAL mode that never blocks the writer, and a concurrent commit is seen whole
or not at all.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from ..errors import SessionReadError

T = TypeVar("T")


def _stat(path: Path) -> tuple[int, int, int]:
    st = path.stat()
    return st.st_ino, st.st_size, st.st_mtime_ns


def connect(path: Path, *, immutable: bool = False) -> sqlite3.Connection:
    """Read-only, never creating a file, whatever characters the path holds."""
    flags = "mode=ro&immutable=1" if immutable else "mode=ro"
    db = sqlite3.connect(f"{path.resolve().as_uri()}?{flags}", uri=True, isolation_level=None)
    db.execute("PRAGMA query_only = ON")
    return db


def _in_transaction(db: sqlite3.Connection, read: Callable[[sqlite3.Connection], T]) -> T:
    """``read(db)`` in one read transaction; text that is not UTF-8 where a reader did not
    expect any (a damaged schema's table names) is the database's error, not the run's."""
    db.execute("BEGIN")
    try:
        return read(db)
    except UnicodeDecodeError as exc:
        raise sqlite3.DatabaseError(
            f"the database holds text that is not UTF-8 ({exc.reason} at byte {exc.start})"
        ) from None
    finally:
        db.execute("COMMIT")


def read_snapshot(path: Path, read: Callable[[sqlite3.Connection], T]) -> T:
    """``read(connection)`` on one snapshot of the database at ``path`` (see the module
    docstring); ``sqlite3.Error`` when it cannot be read."""
    wal = Path(f"{path}-wal")
    if not os.path.lexists(wal):
        before = _stat(path)
        db = connect(path, immutable=True)
        try:
            got = _in_transaction(db, read)
        except sqlite3.DatabaseError:
            if _unchanged(path, wal, before):
                raise  # the file itself does not read
        else:
            if _unchanged(path, wal, before):
                return got
        finally:
            db.close()
    db = connect(path)
    try:
        return _in_transaction(db, read)
    finally:
        db.close()


def _unchanged(path: Path, wal: Path, before: tuple[int, int, int]) -> bool:
    """No writer came meanwhile: still no ``-wal``, the same file, size and time."""
    return not os.path.lexists(wal) and _stat(path) == before


def unlisted(path: Path, probe: Callable[[Path], object]) -> SessionReadError:
    """Why a database whose units could not be listed at discovery is not read: ``probe``
    (what listed them) fails again, or the file changed in between."""
    try:
        probe(path)
    except sqlite3.DatabaseError as exc:
        return SessionReadError(
            f"the database cannot be read ({exc}); nothing of it was exported",
            rule="io", source=str(path),
        )  # fmt: skip
    return SessionReadError(
        "the database changed while it was read; export it again", rule="io", source=str(path)
    )
