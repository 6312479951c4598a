"""Outcome entries (spec §8-§9): session state, turn errors, aborts, timeouts, quality gates.

einox records no score; ``pass`` says what is known: a quality-gate failure,
an error, an abort or a timeout fails; a session that ended after a normal
turn passes; a running or suspended one has no verdict yet (``pass`` absent).
"""

from __future__ import annotations

from typing import Any

from . import texts
from .decisions import Decisions
from .entries import Entries
from .record import Record
from .turns import Turn

JSON = Any
PENDING = ("pending_kind", "pending_app_id", "pending_due")


def _failed(
    out: Entries, ts: int | None, kind: str, target: str | None, label: str, details: JSON
) -> None:
    body: dict[str, JSON] = {"kind": kind, "target": target, "pass": False, "label": label}
    if details is not None:
        body["details"] = details
    out.add("outcome", ts, **body)


def gate_failed(out: Entries, feedback: str) -> None:
    """The attempt before quality-gate feedback failed the gate (a ``test`` outcome on it)."""
    target = next((r["id"] for r in reversed(out.raws) if r["type"] == "response"), None)
    _failed(out, None, "test", target, "quality_gate", {"feedback": feedback})


def turn_outcomes(out: Entries, turn: Turn, decisions: Decisions) -> None:
    """Errors, interruptions and human-step timeouts of one turn, on its last entry."""
    for e in turn.events:
        if e.event == "error" and isinstance(e.data, dict):
            gate = texts.GATE_EXHAUSTED in str(e.data.get("message") or "")
            code = str(e.data.get("code") or "ERROR").lower()
            kind, label = ("test", "quality_gate") if gate else ("task", code)
            _failed(out, e.ts, kind, out.last, label, e.data)
        elif e.event == "interrupted":
            _failed(out, e.ts, "task", out.last, "interrupted", e.data)
    for name, ts in decisions.timeouts:
        _failed(out, ts, "task", out.last, name, None)


def session_outcome(out: Entries, r: Record, turns: list[Turn]) -> None:
    """The session's state at the end of its branch."""
    last = turns[-1] if turns else None
    timed_out = last is not None and any(e.event.endswith("_timeout") for e in last.events)
    details: dict[str, JSON] = {"state": r.state, "sid": r.sid}
    if r.raw.get("pending_kind"):
        details |= {k: r.raw[k] for k in PENDING if r.raw.get(k)}
    body: dict[str, JSON] = {
        "kind": "task",
        "target": out.last or None,
        "label": r.state or "unknown",
        "details": details,
    }
    if r.state == "error" or timed_out:
        body["pass"] = False
    elif r.state == "ended" and last is not None and last.ended:
        body["pass"] = True
    out.add("outcome", r.updated_ms() or None, **body)
