"""The run's session index in a SQLite file, for the jobs an executor sends to its workers.

A job carries its ``RunContext`` to every worker with every chunk of work;
with the index in memory that was every session id of the store each time
(34 MB to pickle and 0.9 s to load per chunk at 200,000 sessions).  An
``IndexFile`` pickles as its path, opens the file read-only where it is
used, and answers each lookup with one query.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from .base import Unit


def _unit(text: str) -> Unit:
    d = json.loads(text)
    options = tuple(map(tuple, d["options"]))
    return Unit(d["kind"], tuple(d["files"]), d["key"], d["name"], options, d["size"])


def _key(session_id: str) -> str | bytes:
    """The id as SQLite can hold it: an id with a lone surrogate (half an emoji a store
    wrote) as its bytes, which UTF-8 text cannot encode."""
    try:
        session_id.encode("utf-8")
    except UnicodeEncodeError:
        return session_id.encode("utf-8", "surrogatepass")
    return session_id


@dataclass(frozen=True)
class IndexFile:
    """Session id -> the unit that holds it, read from ``path`` (written by ``write``)."""

    path: str

    @classmethod
    def write(cls, path: Path, pairs: Iterable[tuple[str, Unit]]) -> IndexFile:
        """The (session id, unit) pairs in a fresh file at ``path``."""
        path.parent.mkdir(parents=True, exist_ok=True)
        path.unlink(missing_ok=True)
        with sqlite3.connect(path) as db:
            db.execute("CREATE TABLE ids (id TEXT PRIMARY KEY, unit TEXT NOT NULL)")
            db.executemany(
                "INSERT INTO ids VALUES (?, ?)",
                ((_key(sid), json.dumps(asdict(u))) for sid, u in pairs),
            )
        db.close()
        return cls(str(path))

    @cached_property
    def _db(self) -> sqlite3.Connection:
        # immutable: nothing writes the file while jobs read it, so no locks (shared filesystems);
        # any thread may read through it (a local run's first worker is a thread of the driver)
        uri = f"file:{self.path}?mode=ro&immutable=1"
        return sqlite3.connect(uri, uri=True, check_same_thread=False)

    def unit_of(self, session_id: str) -> Unit | None:
        row = self._db.execute("SELECT unit FROM ids WHERE id = ?", (_key(session_id),)).fetchone()
        return None if row is None else _unit(row[0])

    def close(self) -> None:
        """Close this process's connection, if it opened one (a lookup opens it again)."""
        db = self.__dict__.pop("_db", None)
        if db is not None:
            db.close()

    def remove(self) -> None:
        """Close and delete the file (the run is over; workers' connections die with them)."""
        self.close()
        Path(self.path).unlink(missing_ok=True)

    def __getstate__(self) -> dict[str, Any]:
        return {"path": self.path}  # the connection is opened where the job lands
