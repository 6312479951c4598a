"""Compaction summaries from ``compact/`` (spec §1, §7.4) as compaction entries."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ..regular import read_text
from .record import Record
from .turns import Turn

JSON = Any


@dataclass
class Compaction:
    """The compaction cache (``compact/<sid>-state.json``, ``-summary-<n>.md``): the latest
    generation, placed in the turn of the last compaction note."""

    state: dict[str, JSON]
    watermark: int
    summary: str
    note_id: int
    ts: int | None

    @classmethod
    def of(cls, r: Record) -> Compaction | None:
        notes = [
            e for e in r.events
            if e.event == "harness_note" and isinstance(e.data, dict) and e.data.get("kind") == "compaction"
        ]  # fmt: skip
        folder = r.ws / "compact"
        try:
            state = json.loads(read_text(folder / f"{r.sid}-state.json"))
            summary = read_text(folder / f"{r.sid}-summary-{int(state['n'])}.md")
            watermark = int(state["watermark"])
        except (OSError, ValueError, KeyError, TypeError):
            return None
        if not notes or not 0 < watermark < len(r.messages):
            return None
        return cls(state, watermark, summary, notes[-1].id, notes[-1].ts)

    def due(self, turn: Turn) -> bool:
        return any(e.id == self.note_id for e in turn.events)
