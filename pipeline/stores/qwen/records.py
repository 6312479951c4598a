"""A Qwen Code session file read record by record (specs/qwen-code.md §2, §4.1).

Two records glued on one line (``}{``, upstream #3606) are both read, as upstream's
loader does; a cut last line is a ``truncated`` issue and the records before it are
kept.  A member of another type than Qwen Code writes is an issue of its line, and
the record is read without it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from trajset.schemas.session import Issue

from ..base import input_lines
from ..jsonl import json_kind, objects
from ..uuid_tree import Record

JSON = Any
#: the record kinds that hold a message the model saw or wrote
MESSAGES = ("user", "assistant", "tool_result")


def read_records(path: Path, start: int) -> tuple[list[Record], list[Issue]]:
    """Every record of the file, numbered from ``start``; what does not read is an issue."""
    found, issues = objects(input_lines(path), path.name, glued=True)
    records = [Record(raw, str(path), i, start + n) for n, (i, raw) in enumerate(found)]
    seen: set[str] = set()
    for r in records:
        where = f"{path.name}: line {r.line}"
        if not r.uuid:
            got = r.raw.get("uuid")
            what = "without its uuid" if got is None else f"whose uuid is {json_kind(got)}"
            issues.append(Issue("bad_field", r.line, f"{where}: a {r.kind or 'untyped'} record "
                                f"{what}; kept in the header's qwen:meta, in no step"))  # fmt: skip
        elif r.uuid in seen:
            issues.append(Issue("bad_field", r.line, f"{where}: uuid {r.uuid} again; the "
                                "record is read as the earlier one's repeat"))  # fmt: skip
        seen.add(r.uuid)
        r.raw = _typed(r.raw, where, r.line, issues)
    return records, issues


def _typed(raw: dict[str, JSON], where: str, line: int, issues: list[Issue]) -> dict[str, JSON]:
    """``raw`` without the members of another type than Qwen Code writes (a message that is
    no object, parts that are no list, a part that is no object), each an issue."""
    for key in ("message", "systemPayload", "toolCallResult", "usageMetadata"):
        if raw.get(key) is not None and not isinstance(raw[key], dict):
            issues.append(Issue("bad_field", line, f"{where}: {key} is {json_kind(raw[key])}, "
                                "not an object; read as empty"))  # fmt: skip
            raw = {**raw, key: {}}
    m = raw.get("message")
    if not isinstance(m, dict) or m.get("parts") is None:
        return raw
    parts = m["parts"]
    if not isinstance(parts, list):
        issues.append(Issue("bad_field", line, f"{where}: message.parts is {json_kind(parts)}, "
                            "not an array; read as empty"))  # fmt: skip
        return {**raw, "message": {**m, "parts": []}}
    kept = [_part(p, f"{where}: message.parts[{i}]", line, issues) for i, p in enumerate(parts)]
    if kept == parts:
        return raw
    return {**raw, "message": {**m, "parts": [p for p in kept if p is not None]}}


#: the members of a part Qwen Code writes, and their types
PART: dict[str, type | tuple[type, ...]] = {
    "text": str,
    "thought": (bool, str),
    "functionCall": dict,
    "functionResponse": dict,
    "inlineData": dict,
    "fileData": dict,
}


#: the members of a call and of its response, and their types
CALL_MEMBERS: tuple[tuple[str, str, type], ...] = (
    ("functionCall", "args", dict),
    ("functionCall", "id", str),
    ("functionCall", "name", str),
    ("functionResponse", "response", dict),
    ("functionResponse", "id", str),
    ("functionResponse", "name", str),
)


def _part(p: JSON, where: str, line: int, issues: list[Issue]) -> dict[str, JSON] | None:
    """``p`` without its members of another type (each an issue); None (an issue) when it is
    no object."""
    if not isinstance(p, dict):
        issues.append(Issue("bad_field", line, f"{where} is {json_kind(p)}, not an object; "
                            "left out"))  # fmt: skip
        return None
    bad = [k for k, t in PART.items() if k in p and not isinstance(p[k], t)]
    for k in bad:
        issues.append(Issue("bad_field", line, f"{where}.{k} is {json_kind(p[k])}; left "
                            "out"))  # fmt: skip
    for key, member, want in CALL_MEMBERS:
        got = p[key].get(member) if isinstance(p.get(key), dict) else None
        if got is not None and not isinstance(got, want):
            issues.append(Issue("bad_field", line, f"{where}.{key}.{member} is {json_kind(got)}, "
                                f"not {json_kind(want())}; kept as written"))  # fmt: skip
    response = (
        p["functionResponse"].get("response")
        if isinstance(p.get("functionResponse"), dict)
        else None
    )
    for k in ("output", "error"):
        got = response.get(k) if isinstance(response, dict) else None
        if got is not None and not isinstance(got, str):
            issues.append(Issue("bad_field", line, f"{where}.functionResponse.response.{k} is "
                                f"{json_kind(got)}, not text; the model was sent its JSON"))  # fmt: skip
    return {k: v for k, v in p.items() if k not in bad} if bad else p
