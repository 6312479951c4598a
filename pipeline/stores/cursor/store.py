"""A Cursor CLI ``store.db`` read (specs/cursor.md §2): its meta, its blobs and its roots.

Blobs are content addressed (``id`` = hex SHA-256 of ``data``): JSON message blobs, and
protobuf roots (``ConversationStateStructure``) whose field 1 lists the ordered history
sent to the model.  Every checkpoint writes a new root and none is rewritten, so the
roots in ``rowid`` order are the history of the conversation's states.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trajset.schemas.session import Issue

from ...errors import SessionReadError
from ..snapshot import read_snapshot
from .proto import WireError, fields

JSON = Any


@dataclass(frozen=True)
class Root:
    """One checkpoint: its ordered message blob ids, its summary blob (compaction), the
    calls it waits on and its context meter, and its other fields as read."""

    id: str
    messages: tuple[str, ...]
    summary: str = ""
    pending: tuple[str, ...] = ()
    context: tuple[int, int] | None = None
    workspace: str = ""


@dataclass
class Store:
    path: Path
    meta: dict[str, JSON]
    blobs: dict[str, bytes] = field(default_factory=dict)
    roots: list[Root] = field(default_factory=list)
    issues: list[Issue] = field(default_factory=list)

    def message(self, blob: str) -> dict[str, JSON] | None:
        """The JSON message a blob holds, or None."""
        data = self.blobs.get(blob, b"")
        if not data.lstrip().startswith(b"{"):
            return None
        try:
            value = json.loads(data)
        except (ValueError, UnicodeDecodeError, RecursionError):
            return None
        return value if isinstance(value, dict) else None


def read_store_db(path: Path) -> Store:
    """The store at ``path``; ``SessionReadError`` when it is no Cursor store."""

    def read(db: sqlite3.Connection) -> tuple[list[Any], list[Any]]:
        return (db.execute("SELECT key, value FROM meta").fetchall(),
                db.execute("SELECT id, data FROM blobs ORDER BY rowid").fetchall())  # fmt: skip

    try:
        meta_rows, blob_rows = read_snapshot(path, read)
    except sqlite3.Error as exc:
        raise SessionReadError(f"the store does not read as Cursor's store.db: {exc}",
                               rule="unreadable", source=str(path)) from None  # fmt: skip
    store = Store(path, _meta(meta_rows, path))
    for blob_id, data in blob_rows:
        if isinstance(blob_id, str) and isinstance(data, bytes | str):
            store.blobs[blob_id] = data if isinstance(data, bytes) else data.encode()
    store.roots = [r for blob_id, data in store.blobs.items() if (r := _root(blob_id, data, store))]
    return store


def _meta(rows: list[Any], path: Path) -> dict[str, JSON]:
    """``meta["0"]``: hex-encoded JSON (plain JSON accepted)."""
    value = next((v for k, v in rows if k == "0"), None)
    if isinstance(value, bytes):
        value = value.decode("utf-8", errors="replace")
    if not isinstance(value, str):
        raise SessionReadError("the store has no meta row 0", rule="format", source=str(path))
    for text in (_unhex(value), value):
        try:
            got = json.loads(text) if text else None
        except ValueError:
            continue
        if isinstance(got, dict):
            return got
    raise SessionReadError("meta row 0 is no JSON object (hex-encoded or plain)",
                           rule="format", source=str(path))  # fmt: skip


def _unhex(value: str) -> str:
    try:
        return bytes.fromhex(value).decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        return ""


def _root(blob_id: str, data: bytes, store: Store) -> Root | None:
    """The root a protobuf blob is: its field 1 lists 32-byte ids of blobs of the store."""
    if data.lstrip().startswith(b"{"):
        return None
    try:
        got = fields(data)
    except WireError:
        return None
    ids = [v for n, v in got if n == 1]
    if not ids or not all(isinstance(v, bytes) and len(v) == 32 for v in ids):
        return None
    messages = tuple(v.hex() for v in ids if isinstance(v, bytes))
    if not all(m in store.blobs for m in messages):
        return None
    summary = next(
        (v.hex() for n, v in got if n == 6 and isinstance(v, bytes) and len(v) == 32), ""
    )
    pending = tuple(v.decode("utf-8", "replace") for n, v in got if n == 4 and isinstance(v, bytes))
    meter = next((v for n, v in got if n == 5 and isinstance(v, bytes)), None)
    context = None
    if meter is not None:
        try:
            parts = dict(fields(meter))
            used, window = parts.get(1, 0), parts.get(2, 0)
            context = (used, window) if isinstance(used, int) and isinstance(window, int) else None
        except WireError:
            context = None
    space = next((v for n, v in got if n == 9 and isinstance(v, bytes)), b"")
    workspace = space.decode("utf-8", "replace") if space.startswith(b"file://") else ""
    return Root(blob_id, messages, summary, pending, context, workspace)
