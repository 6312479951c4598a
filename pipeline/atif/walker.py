"""The walk over one trajectory's context that builds the ATIF steps (spec §7.4-§7.5).

``walk`` visits the
context's entries in order: items, compactions, branch summaries, responses
and configs make or extend steps (``steps.py``); every other entry is a
record placed by ``place_record``.
"""

from __future__ import annotations

from typing import Any

from trajset.schemas.context import Settings
from trajset.schemas.entries import (
    BranchSummaryEntry,
    CompactionEntry,
    ConfigEntry,
    DecisionEntry,
    DispatchEntry,
    EnvEntry,
    ItemEntry,
    LinkEntry,
    OutcomeEntry,
    ResponseEntry,
    RunEntry,
)
from trajset.schemas.records import Trajectory
from trajset.schemas.session import Entry

from . import steps
from .records import BUILDERS
from .state import Walk

JSON = Any

#: record types whose record waits in ``pending`` under this extra key
PENDING_KEYS = {"label": "labels", "info": "info", "custom": "custom"}


def start(traj: Trajectory) -> Walk:
    ctx = traj.context
    first = ctx.entries[0] if ctx.entries else None
    copied = first is not None and first.type == "compaction"
    return Walk(
        traj,
        ctx.checkpoint.copy() if ctx.checkpoint is not None else Settings(),
        copied=copied,
        compaction_id=first.id if copied and first is not None else "",
    )


def walk(traj: Trajectory, cost: steps.CostFn | None = None) -> Walk:
    """Build every step of ``traj``; links and calls are resolved later (``document.py``)."""
    w = start(traj)
    for e in traj.context.entries:
        if w.copied and e.parent == w.compaction_id:
            w.copied = False
        match e.body:
            case ItemEntry() as b:
                steps.on_item(w, e, b, cost)
            case CompactionEntry() as b:
                steps.flush(w, cost)
                steps.on_compaction(w, e, b)
            case BranchSummaryEntry() as b:
                steps.flush(w, cost)
                steps.on_branch_summary(w, e, b)
            case ResponseEntry() as b:
                if w.group_rid and w.group_rid != b.response_id:
                    steps.flush(w, cost)
                steps.flush(w, cost, response=(e, b))
            case ConfigEntry() as b:
                steps.on_config(w, e, b)
            case _:
                place_record(w, e)
    steps.flush(w, cost)
    return w


def place_record(w: Walk, e: Entry) -> None:
    """Put a record entry where the reference puts it (spec §7.5)."""
    b = e.body
    builder = BUILDERS.get(type(b))
    match b:
        case EnvEntry():
            rec = BUILDERS[EnvEntry](e, b)
            if w.root_env is None:
                w.root_env = rec
            else:
                w.pending["environment"] = rec
        case OutcomeEntry():
            rec = BUILDERS[OutcomeEntry](e, b)
            w.outcomes.append(rec)
            step = w.entry_step.get(b.target or "")
            if step is not None:
                step["extra"].setdefault("outcome", []).append(rec)
        case DecisionEntry():
            w.calls.setdefault(b.call_id, {}).setdefault("decisions", []).append(
                BUILDERS[DecisionEntry](e, b)
            )
        case DispatchEntry():
            w.calls.setdefault(b.call_id, {})["dispatch"] = {"entry_id": e.id}
        case LinkEntry():
            w.links.append((e, b))
        case RunEntry():
            place_run(w, e, b)
        case _ if builder is not None and b.type in PENDING_KEYS:
            w.pending.setdefault(PENDING_KEYS[b.type], []).append(builder(e, b))
        case _:  # extension or unknown entry: the raw line, original order
            w.pending.setdefault("extensions", []).append(e.raw)


def place_run(w: Walk, e: Entry, b: RunEntry) -> None:
    """A run start opens a record in the next step's extras; its end completes it."""
    if b.phase == "start":
        rec: dict[str, JSON] = {"run_id": b.run_id, "source": b.source, "start_entry_id": e.id}
        if b.ref:
            rec["trigger"] = b.ref
        w.open_run = rec
        w.pending.setdefault("run", []).append(rec)
        return
    if w.open_run is not None and w.open_run["run_id"] == b.run_id:
        rec = w.open_run
    else:
        rec = {"run_id": b.run_id}
        w.pending.setdefault("run", []).append(rec)
    rec["reason"] = b.reason
    rec["end_entry_id"] = e.id
    if b.ref:
        rec["cause"] = b.ref
    rec["pending"] = list(b.pending or [])
    w.open_run = None
