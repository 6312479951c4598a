"""``session.json``: one einox session record, read and checked (spec §2-§3, §5).

Only what the conversion needs is typed; the whole record stays in ``raw``
so members without an Agent Session Format equivalent are kept.  A record
that does not decode (a partly written file, a member of the wrong type)
raises ``SessionReadError`` naming the file, the line and the rule.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trajset.schemas.session import Issue
from trajset.schemas.timestamps import parse_rfc3339

from ...errors import SessionReadError
from ..base import read_input
from ..jsonl import json_kind

JSON = Any


@dataclass(frozen=True)
class Event:
    """One element of ``events``: ``ts`` is Unix milliseconds, None when omitted (recovery)."""

    id: int
    event: str
    data: JSON
    ts: int | None


@dataclass
class Record:
    """A parsed ``session.json`` and where it lives (``ws`` holds spill/ and compact/)."""

    path: Path
    raw: dict[str, JSON]
    events: list[Event]
    messages: list[dict[str, JSON]]
    issues: list[Issue] = field(default_factory=list)  # values of the wrong type, read as text

    @property
    def sid(self) -> str:
        return str(self.raw["sid"])

    @property
    def parent_sid(self) -> str:
        return str(self.raw.get("parent_sid") or "")

    @property
    def state(self) -> str:
        return str(self.raw.get("state") or "")

    @property
    def ws(self) -> Path:
        """``sessions/<ws>``: the session's own folder, the parent's for a side chat."""
        return self.path.parent.parent / (self.parent_sid or self.sid)

    def started_ms(self) -> int:
        return iso_ms(self.raw.get("started_at"))

    def updated_ms(self) -> int:
        return iso_ms(self.raw.get("updated_at"))


def iso_ms(value: JSON) -> int:
    """An RFC 3339 time as Unix milliseconds (0 when absent or unreadable)."""
    try:
        return int(parse_rfc3339(value).timestamp() * 1000)
    except (TypeError, ValueError, OverflowError):
        return 0


def _fail(path: Path, message: str, line: int | None = None) -> SessionReadError:
    return SessionReadError(message, rule="bad_record", source=str(path), line=line)


def _events(path: Path, value: JSON, issues: list[Issue]) -> list[Event]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise _fail(path, "events is not an array")
    out = []
    for i, e in enumerate(value):
        if not (
            isinstance(e, dict) and isinstance(e.get("id"), int) and isinstance(e.get("event"), str)
        ):
            raise _fail(path, f"events[{i}] is not an event object with an integer id and a name")
        ts = e.get("ts")
        if ts is not None and (not isinstance(ts, int) or isinstance(ts, bool) or ts <= 0):
            issues.append(Issue("bad_field", None, f"events[{i}].ts is {json_kind(ts)}, not a "
                                "time in ms; read as unknown"))  # fmt: skip
        out.append(
            Event(
                e["id"], e["event"], e.get("data"), ts if isinstance(ts, int) and ts > 0 else None
            )
        )
    return out


def _messages(path: Path, value: JSON) -> list[dict[str, JSON]]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(m, dict) for m in value):
        raise _fail(path, "messages is not an array of objects")
    for i, m in enumerate(value):
        if m.get("role") not in ("system", "user", "assistant", "tool"):
            raise _fail(path, f"messages[{i}] has no known role ({m.get('role')!r})")
    return value


def _texts(messages: list[dict[str, JSON]]) -> list[Issue]:
    """Each message ``content`` and call ``arguments`` that is no string (the format's only
    type for them) made its JSON text, in place: one issue each."""
    issues = []
    for i, m in enumerate(messages):
        fields = [(m, "content", f"messages[{i}].content")]
        calls = m.get("tool_calls")
        for j, c in enumerate(calls if isinstance(calls, list) else []):
            fn = c.get("function") if isinstance(c, dict) else None
            if isinstance(fn, dict):
                fields.append(
                    (fn, "arguments", f"messages[{i}].tool_calls[{j}].function.arguments")
                )
        for holder, key, where in fields:
            got = holder.get(key)
            if got is not None and not isinstance(got, str):
                holder[key] = json.dumps(got)
                issues.append(Issue("bad_field", None, f"{where} is {json_kind(got)}, not a "
                                    "string; read as its JSON text"))  # fmt: skip
    return issues


def read_record(path: Path) -> Record:
    """Read and check one ``session.json``."""
    data = read_input(path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        if exc.end >= len(data):  # a multi-byte character cut off
            raise _fail(
                path, "ends in the middle of a character: a partly written file", line
            ) from None
        raise SessionReadError(
            "file is not UTF-8", rule="encoding", source=str(path), line=line
        ) from None
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _fail(
            path,
            f"does not decode ({exc.msg}, column {exc.colno}); a partly written "
            "file is reported and the rest of the store goes on",
            exc.lineno,
        ) from None
    except RecursionError:
        raise _fail(path, "nested too deeply") from None
    if not isinstance(raw, dict) or not isinstance(raw.get("sid"), str) or not raw["sid"]:
        raise _fail(path, "not a session record (no sid)")
    issues: list[Issue] = []
    events = _events(path, raw.get("events"), issues)
    messages = _messages(path, raw.get("messages"))
    return Record(path, raw, events, messages, [*issues, *_texts(messages)])
