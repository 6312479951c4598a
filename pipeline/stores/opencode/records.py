"""OpenCode's records in one shape, whichever era stored them (specs/opencode.md §3).

A session is its ``Session.Info`` and its messages, each a message info and its
parts, as the database rows or the JSON files hold them once their ids are
taken from the columns or the file names.  Messages are ordered by
``(time.created, id)`` and parts by their id unwrapped: ids wrapped on
2026-08-14, so a newer id can sort before an older one (§3, "Ids and order").
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from trajset.schemas.session import Issue

JSON = Any
#: what an id's 12 hex digits count, and how often that field wraps (2^36 ms, 795 days)
_HEX = 12
_PERIOD_MS = 1 << 36
#: members that name where a record lives, not what it says
ID_KEYS = ("id", "sessionID", "messageID")


@dataclass
class Message:
    """One message: its info (without ids), creation time in ms and its parts (with ``id``)."""

    id: str
    created: int
    info: dict[str, JSON]
    parts: list[dict[str, JSON]] = field(default_factory=list)

    @property
    def role(self) -> str:
        return str(self.info.get("role") or "")


@dataclass(frozen=True)
class Overview:
    """What grouping a session needs: its project, parent session and first message's
    (role, creation ms), None when it has none."""

    id: str
    project: str
    parent: str
    first: tuple[str, int] | None
    created: int = 0


@dataclass(frozen=True)
class Group:
    """The sessions one unit reads: a project's sessions that a fork copy or a subagent
    ties together (``Unit.key`` is ``<project> <id>,<id>,…``)."""

    project: str
    sessions: tuple[str, ...]

    @property
    def key(self) -> str:
        return f"{self.project} {','.join(self.sessions)}"

    @classmethod
    def of(cls, key: str) -> Group:
        project, _, ids = key.rpartition(" ")  # session ids hold no space
        return cls(project, tuple(ids.split(",")) if ids else ())


@dataclass
class StoredSession:
    """One session as stored: ``origin`` is ``database`` or ``json``; ``source`` names it
    in error rows."""

    id: str
    info: dict[str, JSON]
    messages: list[Message]
    source: str
    origin: str
    todos: list[JSON] = field(default_factory=list)
    orphans: list[dict[str, JSON]] = field(default_factory=list)
    issues: list[Issue] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)

    @property
    def created(self) -> int:
        return as_ms(obj(self.info.get("time")).get("created"))

    @property
    def parent(self) -> str:
        p = self.info.get("parentID")
        return p if isinstance(p, str) else ""


def obj(value: JSON) -> dict[str, JSON]:
    """``value`` when it is a JSON object, else an empty one (stored shapes vary by era)."""
    return value if isinstance(value, dict) else {}


def as_ms(value: JSON) -> int:
    """An integer time in ms, else 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def unwrapped(record_id: str, near_ms: int) -> int:
    """The id's time-and-counter field, its epoch chosen to put its time nearest ``near_ms``
    (−1 when the id is not ``<prefix>_<12 hex>…``)."""
    _, _, rest = record_id.partition("_")
    try:
        value = int(rest[:_HEX], 16)
    except ValueError:
        return -1
    if len(rest) < _HEX:
        return -1
    ms = value >> 12
    epoch = round((near_ms - ms) / _PERIOD_MS) if near_ms else 0
    return ((ms + epoch * _PERIOD_MS) << 12) | (value & 0xFFF)


def ordered(messages: list[Message]) -> list[Message]:
    """Messages by ``(time.created, id)``, each one's parts by their unwrapped id."""
    for m in messages:
        m.parts.sort(key=lambda p: (unwrapped(str(p["id"]), m.created), str(p["id"])))
    return sorted(messages, key=lambda m: (m.created, m.id))


def record(data: JSON, record_id: str) -> dict[str, JSON]:
    """A part or message as OpenCode builds it: ``data`` without the ids it may repeat, and
    the id from its column or file name."""
    return {"id": record_id, **{k: v for k, v in data.items() if k not in ID_KEYS}}


def decoded(
    text: JSON, what: str, source: str, issues: list[Issue], of: type | tuple[type, ...] = dict
) -> JSON:
    """A ``data`` value or file text as a JSON object (or ``of``); else None and one issue
    naming it."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            issues.append(Issue("bad_json", None, f"{what}: not UTF-8 ({exc}); left out", source))
            return None
    if not isinstance(text, str):
        issues.append(Issue("bad_json", None, f"{what}: not text; left out", source))
        return None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError) as exc:
        pos = getattr(exc, "pos", 0)
        cut = str(exc).startswith("Unterminated string") or (
            isinstance(pos, int) and pos >= len(text.rstrip())
        )
        kind = "truncated" if cut else "bad_json"
        why = "cut short" if cut else "not JSON"
        issues.append(
            Issue(kind, None, f"{what}: {why} ({exc}); left out, the rest is read", source)
        )
        return None
    if not isinstance(value, of):
        issues.append(Issue("bad_json", None, f"{what}: not a JSON object; left out", source))
        return None
    return value
