"""A Claude Code JSONL file read line by line: a cut final line is reported, not fatal."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from trajset.schemas.session import Issue

from ..base import input_lines
from ..jsonl import json_kind, objects
from ..uuid_tree import Record

JSON = Any


def read_lines(path: Path, start: int) -> tuple[list[Record], list[Issue]]:
    """Every decodable line; a line that does not decode is an issue, the rest is kept
    (a crashed writer leaves a cut last line, a partial character included)."""
    found, issues = objects(input_lines(path), path.name)  # never held whole
    records = [Record(raw, str(path), i, start + n) for n, (i, raw) in enumerate(found)]
    seen: set[str] = set()
    for r in records:
        if r.kind in ("user", "assistant") and not r.uuid:
            got = r.raw.get("uuid")
            what = "without its uuid" if got is None else f"whose uuid is {json_kind(got)}"
            issues.append(Issue("bad_field", r.line, f"{path.name}: line {r.line}: a {r.kind} "
                                f"record {what}; kept in the header's claude:meta, in no step"))  # fmt: skip
        elif r.uuid and r.uuid in seen:
            issues.append(Issue("bad_field", r.line, f"{path.name}: line {r.line}: uuid "
                                f"{r.uuid} again; the record is read as the earlier one's "
                                "repeat"))  # fmt: skip
        seen.add(r.uuid)
        m = r.raw.get("message")
        content = m.get("content") if isinstance(m, dict) else None
        for i, block in enumerate(content if isinstance(content, list) else []):
            if not isinstance(block, dict):
                issues.append(Issue("bad_field", r.line, f"{path.name}: line {r.line}: content "
                                    f"block {i} is {json_kind(block)}, not an object; left out"))  # fmt: skip
        if m is not None and not isinstance(m, dict):  # the record is kept: its tree holds
            issues.append(Issue("bad_field", r.line, f"{path.name}: line {r.line}: message is "
                                f"a {type(m).__name__}, not an object; read as empty"))  # fmt: skip
            r.raw = {**r.raw, "message": {}}
    return records, issues
