"""Turns: the events of one run of the agent and the slice of ``messages`` it owns (spec §6).

A turn starts with ``user_message`` (or with queued input injected while no
turn is open) and normally ends with ``session_end``.  With ``hist_len``
turn *k* owns ``messages[hist_len(k-1):hist_len(k)]``; a turn without it
owns the messages up to the next turn's first user message (or to the end).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .record import Event

JSON = Any
OPENERS = ("user_message",)
QUEUED = ("steer_injected", "notify_injected")


@dataclass
class Turn:
    events: list[Event] = field(default_factory=list)
    start: int = 0  # first message index owned
    end: int = 0  # one past the last

    @property
    def ended(self) -> bool:
        """Closed by ``session_end`` (a normal end, or an error while streaming)."""
        return any(e.event == "session_end" for e in self.events)

    def hist_len(self) -> int:
        for e in reversed(self.events):
            if e.event == "session_end" and isinstance(e.data, dict):
                n = e.data.get("hist_len")
                if isinstance(n, int) and n > 0:
                    return n
        return 0

    def opening_text(self) -> str:
        for e in self.events:
            if e.event in (*OPENERS, *QUEUED) and isinstance(e.data, dict):
                return str(e.data.get("text") or "")
        return ""


def split_events(events: list[Event]) -> tuple[list[Turn], list[Event]]:
    """(the turns, events after the last turn closed).  Events between a turn's end and the
    next opener (a fork note, a roster change) lead the next turn; queued input injected
    right before a ``user_message`` belongs to that turn."""
    turns: list[Turn] = []
    waiting: list[Event] = []
    open_turn = queued_only = False
    for e in events:
        starts = (e.event in OPENERS and not (open_turn and queued_only)) or (
            e.event in QUEUED and not open_turn
        )
        if starts:
            turns.append(Turn(events=waiting))
            waiting, open_turn, queued_only = [], True, e.event in QUEUED
        elif e.event not in QUEUED:
            queued_only = False
        if open_turn:
            turns[-1].events.append(e)
        else:
            waiting.append(e)
        if e.event == "session_end":
            open_turn = False
    return turns, waiting


def _next_user(messages: list[dict[str, JSON]], start: int, text: str) -> int:
    """Index of the first user message at or after ``start`` that carries ``text``."""
    for i in range(start, len(messages)):
        m = messages[i]
        if m.get("role") == "user" and text and text in str(m.get("content") or ""):
            return i
    return -1


def assign_messages(turns: list[Turn], messages: list[dict[str, JSON]], start: int) -> None:
    """Give each turn its slice of ``messages``, starting at ``start`` (inherited history before)."""
    pos = start
    for k, turn in enumerate(turns):
        turn.start = pos
        end = turn.hist_len()
        if not (pos < end <= len(messages)):
            end = len(messages)
            if k + 1 < len(turns):
                nxt = _next_user(messages, pos + 1, turns[k + 1].opening_text())
                end = nxt if nxt > pos else end
        turn.end = end
        pos = end
