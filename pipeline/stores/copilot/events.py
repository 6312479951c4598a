"""A Copilot CLI events file read event by event (specs/copilot-cli.md §2.1, §2.5, §3 "Damage").

Lines are split on ``\\n`` only (a raw U+2028 inside a string is legal JSON).  NUL bytes a
crash left at the end of the file are one ``truncated`` issue; a cut last line too, and the
events before it are kept.  A middle line that holds the first half of an event followed by
the complete event (github/copilot-cli#4098) gives that complete event, counted; any other
line that does not decode is a ``bad_line`` issue.  The pre-0.0.342 JSON session is read
whole (``read_legacy``).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trajset.schemas.session import Issue

from ...errors import SessionReadError
from ..base import input_lines, read_input
from ..jsonl import BOM, decoded, json_kind

JSON = Any
#: where an event starts (Copilot writes ``type`` first)
EVENT_START = b'{"type":'


@dataclass
class Events:
    """A file's events as (line, event), its problems and its counts."""

    path: Path
    events: list[tuple[int, dict[str, JSON]]] = field(default_factory=list)
    issues: list[Issue] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)
    legacy: dict[str, JSON] | None = None  # a pre-0.0.342 JSON session


def read_events(path: Path) -> Events:
    """Every event of an ``events.jsonl`` (or flat ``<id>.jsonl``) file."""
    out = Events(path)
    lines = iter(input_lines(path))
    following, i = next(lines, None), 0
    while following is not None:
        raw, following, i = following, next(lines, None), i + 1
        last = following is None or following == b""
        chunk = raw.removesuffix(b"\n").removeprefix(BOM if i == 1 else b"")
        if chunk.endswith(b"\0"):
            nuls = len(chunk) - len(chunk.rstrip(b"\0"))
            chunk = chunk.rstrip(b"\0")
            out.issues.append(Issue("truncated", i, f"{path.name}: the file ends in {nuls} NUL "
                                    "bytes (Copilot was stopped while writing); the events "
                                    "before them were read"))  # fmt: skip
        if chunk.strip():
            _line(out, chunk, i, last and not chunk.endswith(b"}"))
    return out


def _line(out: Events, chunk: bytes, i: int, cut: bool) -> None:
    name = out.path.name
    values, exc = decoded(chunk, False)
    if exc is not None:
        values = _recovered(chunk)
        if values:  # a cut event and then the whole one (#4098)
            out.counts["lines_recovered"] += 1
        else:
            kind, what = ("truncated", "is cut short") if cut else ("bad_line", "does not decode")
            out.issues.append(Issue(kind, i, f"{name}: line {i} {what} ({type(exc).__name__}: "
                                    f"{str(exc)[:80]}); the other lines were read"))  # fmt: skip
            return
    [value] = values
    if not isinstance(value, dict) or not isinstance(value.get("type"), str):
        what = json_kind(value.get("type")) if isinstance(value, dict) else json_kind(value)
        out.issues.append(Issue("bad_line", i, f"{name}: line {i} holds no event (its type is "
                                f"{what}); the other lines were read"))  # fmt: skip
        return
    if value.get("ephemeral") is True:  # the writer drops these: an SDK dump's
        out.counts["ephemeral_events"] += 1
        return
    for key in ("id", "agentId"):
        if value.get(key) is not None and not isinstance(value[key], str):
            out.issues.append(Issue("bad_field", i, f"{name}: line {i}: {key} is "
                                    f"{json_kind(value[key])}, not a string; read without "
                                    "it"))  # fmt: skip
            value = {k: v for k, v in value.items() if k != key}
    if not isinstance(value.get("data"), dict):
        out.issues.append(Issue("bad_field", i, f"{name}: line {i}: data is "
                                f"{json_kind(value.get('data'))}, not an object; read as "
                                "empty"))  # fmt: skip
        value = {**value, "data": {}}
    out.events.append((i, {**value, "data": _typed(value["type"], value["data"], out, i)}))


#: the members of an event's data the reader reads, and their types (``bool`` before ``int``:
#: a JSON true is no count)
TYPES: dict[str, dict[str, type | tuple[type, ...]]] = {
    "session.start": {"sessionId": str, "startTime": str, "copilotVersion": str, "context": dict},
    "session.model_change": {"newModel": str},
    "system.message": {"role": str, "content": str},
    "user.message": {"content": str, "transformedContent": str, "attachments": list},
    "system.notification": {"content": str},
    "assistant.message": {"content": str, "toolRequests": list, "reasoningText": str,
                          "outputTokens": int, "apiCallId": str, "messageId": str,
                          "chunkIndex": int, "chunkCount": int, "model": str},
    "tool.execution_complete": {"toolCallId": str, "success": bool, "result": dict,
                                "error": dict},
    "session.compaction_complete": {"summaryContent": str, "success": bool,
                                    "preCompactionTokens": int},
    "session.binary_asset": {"assetId": str, "data": str, "mimeType": str},
}  # fmt: skip
#: a tool request's members, likewise
REQUEST: dict[str, type] = {"toolCallId": str, "name": str}


def _typed(kind: str, data: dict[str, JSON], out: Events, i: int) -> dict[str, JSON]:
    """``data`` without the members of another type than the reader reads (each an issue:
    read as missing)."""
    wants = TYPES.get(kind, {})
    bad = [k for k, t in wants.items() if data.get(k) is not None and not _is(data[k], t)]
    requests = data.get("toolRequests") if "toolRequests" not in bad else None
    for n, r in enumerate(requests if isinstance(requests, list) else []):
        if not isinstance(r, dict) or any(r.get(k) is not None and not isinstance(r[k], t)
                                          for k, t in REQUEST.items()):  # fmt: skip
            bad.append(f"toolRequests[{n}]")
    for k in bad:
        out.issues.append(Issue("bad_field", i, f"{out.path.name}: line {i}: a {kind}'s {k} is "
                                "of another type than Copilot writes; read without it"))  # fmt: skip
    if not bad:
        return data
    kept = {k: v for k, v in data.items() if k not in bad}
    if any(b.startswith("toolRequests[") for b in bad):
        drop = {int(b[13:-1]) for b in bad if b.startswith("toolRequests[")}
        kept["toolRequests"] = [r for n, r in enumerate(data["toolRequests"]) if n not in drop]
    return kept


def _is(value: JSON, kind: type | tuple[type, ...]) -> bool:
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, kind)


def _recovered(chunk: bytes) -> list[JSON]:
    """The whole event a line holds after a cut copy of it: the first event start past the
    line's own from which the rest decodes ([] when none does)."""
    at = chunk.find(EVENT_START, 1)
    while at > 0:
        values, exc = decoded(chunk[at:], False)
        if exc is None:
            return values
        at = chunk.find(EVENT_START, at + 1)
    return []


def read_legacy(path: Path) -> Events:
    """A ``history-session-state/session_<id>_<ms>.json`` session; ``SessionReadError`` when
    it does not parse (it is written whole)."""
    try:
        value = json.loads(read_input(path))
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise SessionReadError(f"the legacy session does not parse: {str(exc)[:120]}",
                               rule="format", source=str(path)) from None  # fmt: skip
    if not isinstance(value, dict) or not isinstance(value.get("chatMessages"), list):
        raise SessionReadError("the legacy session has no chatMessages list", rule="format",
                               source=str(path))  # fmt: skip
    return Events(path, legacy=value)
