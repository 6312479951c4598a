"""Finding sessions in a store and cutting them into work units (spec §8).

A store is a ``.jsonl`` session file, a folder of them (any depth, which
covers the jsonl store layout ``<root>/<project-key>/<stamp>_<id>.jsonl``),
or an agentsession SQLite database.  ``discover`` lists the units in a
stable order; ``Unit.load`` reads one; ``SessionIndex`` finds linked
subsessions in the same store without reading every file.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from .errors import SessionReadError, UsageError
from .jsonio import loads_strict
from .session import Session, read_session, read_session_text

SQLITE_MAGIC = b"SQLite format 3\x00"
STORE_KINDS = ("auto", "agentsession", "agentsession-sqlite", "einox", "suga")
NOT_YET = {"einox": "the einox reader", "suga": "the suga reader"}


@dataclass(frozen=True)
class Unit:
    """The files read together by one worker: one session file or one database row."""

    kind: str  # "jsonl" | "sqlite"
    path: str
    key: str = ""  # session id inside a database

    @property
    def label(self) -> str:
        return f"{self.path}#{self.key}" if self.key else self.path

    def load(self) -> Session:
        if self.kind == "sqlite":
            return read_sqlite_session(Path(self.path), self.key)
        return read_session(self.path)


def sample_store() -> Path:
    """The sample store bundled with the package."""
    return Path(str(resources.files("trajset.pipeline") / "sample_store"))


def _is_sqlite(path: Path) -> bool:
    try:
        with path.open("rb") as fh:
            return fh.read(16) == SQLITE_MAGIC
    except OSError:
        return False


def detect_kind(path: Path) -> str:
    if path.is_file():
        return "agentsession-sqlite" if _is_sqlite(path) else "agentsession"
    if path.is_dir():
        if (path / "users").is_dir() and any((path / "users").glob("*/sessions")):
            return "einox"
        if (path / "entries.jsonl").is_file() and (path / "sessions.jsonl").is_file():
            return "suga"
        return "agentsession"
    raise UsageError(
        f"store {path} does not exist; give a session file, a folder of them or a database"
    )


def discover(stores: Iterable[Path], kind: str = "auto") -> list[Unit]:
    """Every work unit of the given stores, in a stable order."""
    if kind not in STORE_KINDS:
        raise UsageError(f"unknown store kind {kind!r}; valid: {', '.join(STORE_KINDS)}")
    units: list[Unit] = []
    for store in stores:
        k = detect_kind(store) if kind == "auto" else kind
        if k in NOT_YET:
            raise UsageError(
                f"{store}: {NOT_YET[k]} is not available yet in this version of trajset"
            )
        if k == "agentsession-sqlite":
            units.extend(Unit("sqlite", str(store), sid) for sid in sqlite_session_ids(store))
        elif store.is_file():
            units.append(Unit("jsonl", str(store)))
        elif store.is_dir():
            units.extend(
                Unit("jsonl", str(p)) for p in sorted(store.rglob("*.jsonl")) if p.is_file()
            )
        else:
            raise UsageError(f"store {store} does not exist")
    seen: set[Unit] = set()
    return [u for u in units if not (u in seen or seen.add(u))]  # type: ignore[func-returns-value]


# --------------------------------------------------------------------------- sqlite


def _connect(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"file:{path}?mode=ro", uri=True)


def sqlite_session_ids(path: Path) -> list[str]:
    try:
        with _connect(path) as db:
            return [row[0] for row in db.execute("SELECT id FROM sessions ORDER BY created_at, id")]
    except sqlite3.Error as exc:
        raise UsageError(f"{path}: not an agentsession database ({exc})") from None


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


# --------------------------------------------------------------------------- subsessions


class SessionIndex:
    """Session id -> unit for every session of the given units (first line only)."""

    def __init__(self, units: Iterable[Unit]) -> None:
        self.units: dict[str, Unit] = {}
        for u in units:
            sid = u.key if u.kind == "sqlite" else _header_id(Path(u.path))
            if sid and sid not in self.units:
                self.units[sid] = u

    def resolve(self, session_id: str) -> Session | None:
        unit = self.units.get(session_id)
        if unit is None:
            return None
        try:
            return unit.load()
        except SessionReadError:
            return None


def _header_id(path: Path) -> str:
    try:
        with path.open("rb") as fh:
            for line in fh:
                if line.strip():
                    head = loads_strict(line.decode("utf-8"))
                    return head.get("id") or "" if isinstance(head, dict) else ""
    except (OSError, ValueError, UnicodeDecodeError):
        return ""
    return ""
