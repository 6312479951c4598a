"""A Claude Code JSONL file read line by line: a cut final line is reported, not fatal."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trajset.schemas.session import Issue

from ..base import read_input

JSON = Any


@dataclass
class Record:
    """One line: its object, file and line number, and its position across the unit's files."""

    raw: dict[str, JSON]
    file: str
    line: int
    order: int

    @property
    def uuid(self) -> str:
        return str(self.raw.get("uuid") or "")

    @property
    def kind(self) -> str:
        return str(self.raw.get("type") or "")

    @property
    def ts(self) -> str:
        return str(self.raw.get("timestamp") or "")


def read_lines(path: Path, start: int) -> tuple[list[Record], list[Issue]]:
    """Every decodable line; a line that does not decode is an issue, the rest is kept
    (a crashed writer leaves a cut last line, a partial character included)."""
    data = read_input(path)
    records: list[Record] = []
    issues: list[Issue] = []
    lines = data.split(b"\n")
    for i, chunk in enumerate(lines, 1):
        if not chunk.strip():
            continue
        try:
            raw = json.loads(chunk.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError) as exc:
            last = i == len(lines) or (i == len(lines) - 1 and not lines[-1])
            what = "the final line is cut short" if last else "a line does not decode"
            issues.append(
                Issue(
                    "truncated" if last else "bad_line",
                    i,
                    f"{path.name}: {what} ({type(exc).__name__}); the other lines were read",
                )
            )
            continue
        if isinstance(raw, dict):
            records.append(Record(raw, str(path), i, start + len(records)))
    return records, issues
