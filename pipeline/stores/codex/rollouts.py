"""Codex rollout files: where they are, what their first line says, and their lines.

A rollout is ``rollout-<local time>-<thread id>[_<rollout id>].jsonl`` (or
``.jsonl.zst``) under ``sessions/YYYY/MM/DD/`` or ``archived_sessions/`` of a
``CODEX_HOME`` (specs/codex.md §1.1).  Its first line is ``session_meta``; its
lines are ``{timestamp, ordinal?, type, payload}``.  Files of the pre-2025-09
"direct" form (a bare header, bare items, ``record_type: state`` lines) are read
into the same shape.  ``session_index.jsonl``, ``history.jsonl``, the config and
the state database are never rollouts.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trajset.schemas.session import Issue

from ...errors import SessionReadError
from ..base import input_lines, read_input
from ..jsonl import objects
from ..regular import open_input, read_bytes

JSON = Any
SUFFIXES = (".jsonl", ".jsonl.zst")
#: ``rollout-2026-05-11T11-26-55-<uuid>[_<uuid>]``: the thread id, and the rollout id when reverted
_NAME = re.compile(
    r"rollout-.*?(?P<thread>[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})"
    r"(?:_(?P<rollout>[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}))?$"
)
#: how far the first line is read to learn a rollout's lineage (its instructions can be ~20 KB)
HEAD_BYTES = 1 << 20


def stem(path: Path) -> str:
    name = path.name
    for suffix in SUFFIXES[::-1]:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def is_rollout_name(path: Path) -> bool:
    return path.name.startswith("rollout-") and path.name.endswith(SUFFIXES)


def rollout_files(folder: Path) -> list[Path]:
    """Every rollout below ``folder``, sorted; of the same file name in ``sessions/`` and
    ``archived_sessions/``, the ``sessions/`` copy (an archive holds a thread's files too)."""
    found = sorted(p for p in folder.rglob("rollout-*") if p.is_file() and is_rollout_name(p))
    by_name: dict[str, Path] = {}
    for p in found:
        key = stem(p)
        kept = by_name.get(key)
        if kept is None or (
            "archived_sessions" in kept.parts and "archived_sessions" not in p.parts
        ):
            by_name[key] = p
    return sorted(by_name.values())


def decompressed(path: Path, data: bytes) -> bytes:
    """The file's bytes, ``.zst`` ones decompressed; ``SessionReadError`` when they do not."""
    if not path.name.endswith(".zst"):
        return data
    import zstandard  # only for compressed rollouts

    try:
        return zstandard.ZstdDecompressor().decompressobj().decompress(data)
    except zstandard.ZstdError as exc:
        raise SessionReadError(
            f"not a readable zstd file ({exc})", rule="io", source=str(path)
        ) from None


def rollout_lines(path: Path) -> bytes | Iterator[bytes]:
    """A ``.zst`` rollout's bytes decompressed; a plain one's lines as they are read
    (``input_lines``: a large rollout is never held whole)."""
    if path.name.endswith(".zst"):
        return decompressed(path, read_input(path))
    return input_lines(path)


def first_line(path: Path) -> dict[str, JSON] | None:
    """The first line's object, read cheaply; None when it does not decode."""
    try:
        if path.name.endswith(".zst"):
            data = decompressed(path, read_bytes(path))
        else:
            with open_input(path) as fh:
                data = fh.read(HEAD_BYTES)
        first = next((line for line in data.split(b"\n") if line.strip()), b"")
        value = json.loads(first)
    except (OSError, ValueError, UnicodeDecodeError, RecursionError, SessionReadError):
        return None
    return value if isinstance(value, dict) else None


def meta_of(first: dict[str, JSON] | None) -> dict[str, JSON] | None:
    """The ``session_meta`` payload a first line holds (the direct form's bare header too)."""
    if not first:
        return None
    if first.get("type") == "session_meta" and isinstance(first.get("payload"), dict):
        payload = first["payload"]
        return payload if isinstance(payload.get("id"), str) else None
    if isinstance(first.get("id"), str) and "timestamp" in first and "type" not in first:
        return _direct_meta(first)
    return None


def _direct_meta(head: dict[str, JSON]) -> dict[str, JSON]:
    meta = {k: v for k, v in head.items() if k != "instructions"}
    if isinstance(head.get("instructions"), str):
        meta["base_instructions"] = {"text": head["instructions"]}
    return meta


@dataclass(frozen=True)
class Head:
    """What a rollout's first line says of its place in a thread family."""

    path: str
    thread: str
    rollout: str
    meta: dict[str, JSON]

    @classmethod
    def read(cls, path: Path) -> Head | None:
        meta = meta_of(first_line(path))
        if meta is None:
            return None
        return cls(str(path), meta["id"], rollout_id(path, meta["id"]), meta)

    @property
    def parent_thread(self) -> str:
        """The thread that spawned this one (a subagent), else ""."""
        spawn = thread_spawn(self.meta)
        return str(spawn.get("parent_thread_id") or "") if spawn else ""

    @property
    def forked_from(self) -> str:
        value = self.meta.get("forked_from_id")
        return value if isinstance(value, str) and not self.parent_thread else ""

    @property
    def base(self) -> tuple[str, int] | None:
        """(rollout id, end ordinal exclusive) of the history this rollout continues."""
        base = self.meta.get("history_base")
        if isinstance(base, dict) and isinstance(base.get("thread_id"), str):
            end = base.get("end_ordinal_exclusive")
            if isinstance(end, int) and not isinstance(end, bool):
                return base["thread_id"], end
        return None

    def related(self) -> set[str]:
        """The thread and rollout ids this rollout must be read with."""
        out = {self.thread, self.rollout, self.parent_thread, self.forked_from}
        if self.base:
            out.add(self.base[0])
        return out - {""}


def thread_spawn(meta: dict[str, JSON]) -> dict[str, JSON] | None:
    """``source.subagent.thread_spawn`` of a subagent's ``session_meta``, else None."""
    source = meta.get("source")
    sub = source.get("subagent") if isinstance(source, dict) else None
    spawn = sub.get("thread_spawn") if isinstance(sub, dict) else None
    return spawn if isinstance(spawn, dict) else None


def rollout_id(path: Path, thread: str) -> str:
    """The id of this immutable file: the part after ``_`` of a reverted thread's file name,
    else the thread id."""
    m = _NAME.search(stem(path))
    return m.group("rollout") if m and m.group("rollout") else thread


@dataclass(eq=False)
class Line:
    """One rollout line: its envelope members, and its place in its file.

    ``key`` is the entry id: ``<rollout id>:<ordinal>`` (Paginated) or ``<rollout id>:<line>``
    (``:line<n>`` for a line that repeats an ordinal of its file); ``kind`` is ``<type>`` or
    ``<type>/<payload type>`` (``event_msg/token_count``)."""

    rollout: str
    n: int  # 1-based line number in the file
    ordinal: int | None
    ts: str
    type: str
    payload: JSON
    metadata: JSON = None
    key: str = ""
    kind: str = ""

    def __post_init__(self) -> None:
        if not self.key:
            self.key = f"{self.rollout}:{self.ordinal if self.ordinal is not None else self.n}"
        sub = self.payload.get("type") if isinstance(self.payload, dict) else None
        self.kind = (
            f"{self.type}/{sub}"
            if isinstance(sub, str) and self.type != "turn_context"
            else self.type
        )

    def same(self, other: Line) -> bool:
        """The same record (a copied line: its timestamp is new, its content not)."""
        return self.type == other.type and self.payload == other.payload


@dataclass
class Rollout:
    """One rollout file read: its first line's payload, its lines, what did not read."""

    path: str
    thread: str
    rollout: str
    meta: dict[str, JSON]
    lines: list[Line]
    issues: list[Issue] = field(default_factory=list)
    skipped: int = 0  # ``record_type: state`` lines of the direct form

    @property
    def ts(self) -> str:
        """When the file was created: its first line's write time."""
        return self.lines[0].ts if self.lines else ""

    @property
    def paginated(self) -> bool:
        return self.meta.get("history_mode") == "paginated"

    def head(self) -> Head:
        return Head(self.path, self.thread, self.rollout, self.meta)


def read_rollout(path: Path, taken: set[str] | None = None) -> Rollout:
    """The rollout's lines; ``SessionReadError`` when it does not start with ``session_meta``
    (nor the direct form's header).  ``taken``: the rollout ids already read in the unit; a
    copy of a file under another name gets ``<id>~<n>``, so its lines keep their own ids."""
    found, issues = objects(rollout_lines(path), path.name)
    meta = meta_of(found[0][1]) if found else None
    if meta is None and not found and issues and issues[0].kind == "truncated":
        raise SessionReadError(
            "the first line (session_meta) is cut short; nothing of the rollout can be read",
            rule="truncated",
            source=str(path),
            line=issues[0].line,
        )
    if meta is None:
        raise SessionReadError(
            "not a Codex rollout: its first line is neither session_meta nor a direct-form "
            "header; pass a rollout-*.jsonl file or a CODEX_HOME folder",
            rule="format",
            source=str(path),
            line=found[0][0] if found else None,
        )
    rid = rollout_id(path, meta["id"])
    if taken is not None:
        base, n = rid, 1
        while rid in taken:
            rid, n = f"{base}~{n}", n + 1
        taken.add(rid)
    out = Rollout(str(path), meta["id"], rid, meta, [], issues)
    direct = found[0][1].get("type") != "session_meta"
    keys: set[str] = set()
    default_ts = str(meta.get("timestamp") or "")
    for n, found_raw in found:
        raw = (
            _enveloped(found_raw, meta if n == found[0][0] else None, default_ts)
            if direct
            else found_raw
        )
        if raw is None:
            out.skipped += 1
            continue
        ordinal = raw.get("ordinal")
        if not isinstance(ordinal, int) or isinstance(ordinal, bool):
            ordinal = None
        key = f"{out.rollout}:{ordinal if ordinal is not None else n}"
        repeated = key in keys  # a hostile file: its own line number, never a number again
        keys.add(key)
        out.lines.append(
            Line(
                out.rollout,
                n,
                None if repeated else ordinal,
                str(raw.get("timestamp") or default_ts),
                str(raw.get("type") or ""),
                raw.get("payload"),
                raw.get("metadata"),
                key=f"{out.rollout}:line{n}" if repeated else "",
            )
        )
    return out


def _enveloped(raw: dict[str, JSON], meta: JSON, ts: str) -> dict[str, JSON] | None:
    """A direct-form line as an envelope: the header as ``session_meta``, a bare item as a
    ``response_item``; None for a ``record_type: state`` line."""
    if meta is not None:
        return {"timestamp": ts, "type": "session_meta", "payload": meta}
    if raw.get("record_type") == "state":
        return None
    return {"timestamp": ts, "type": "response_item", "payload": raw}
