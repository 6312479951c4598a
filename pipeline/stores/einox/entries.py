"""Entries of one converted session, in order, each the parent of the next."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from trajset.schemas.session import Issue
from trajset.schemas.timestamps import MAX_MS, ms_to_rfc3339

from ..numbers import note
from .record import Record

JSON = Any


@dataclass
class Entries:
    """Linear entries of one session: ids ``<sid>-NNNN``, each the parent of the next."""

    sid: str
    source: str = ""  # the session file (the problems noted name it)
    raws: list[dict[str, JSON]] = field(default_factory=list)
    times: list[int] = field(default_factory=list)  # each entry's time (ms), non-decreasing
    clock: int = 0  # last time used (ms); events without ts take it
    notes: list[Issue] = field(default_factory=list)  # values out of range met (``numbers``)

    def add(self, entry_type: str, ts: int | None, /, **body: JSON) -> str:
        usable = [0]
        for t in (self.clock, ts):  # a time no entry can carry is noted, not used
            if t is not None and 0 <= t <= MAX_MS:
                usable.append(t)
            elif t is not None:
                note(self.notes, t, f"{entry_type} time (ms)", self.source, None,
                     "a time in years 1970 to 9999", "the entry takes the time before it")  # fmt: skip
        self.clock = max(usable)
        eid = f"{self.sid}-{len(self.raws) + 1:04d}"
        parent = self.raws[-1]["id"] if self.raws else None
        raw = {"type": entry_type, "id": eid, "parent": parent, "ts": ms_to_rfc3339(self.clock)}
        raw.update(body)
        self.raws.append(raw)
        self.times.append(self.clock)
        return eid

    @property
    def last(self) -> str:
        return str(self.raws[-1]["id"]) if self.raws else ""


@dataclass
class Converted:
    """A session's entries and, per turn, how many entries existed when it ended."""

    record: Record
    entries: Entries
    turn_ends: list[int]  # turn_ends[k] = len(entries) after turn k (index 0: before any turn)
