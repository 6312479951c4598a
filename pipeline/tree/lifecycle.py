"""Lifecycle records on a path: calls, runs and their reasons (spec §6).

Used by ``trajset verify`` to check what a writer promised in its header's
``records`` and what each run's ``end`` claims against the path itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from trajset.schemas.entries import DecisionEntry, DispatchEntry, ItemEntry, ResponseEntry, RunEntry
from trajset.schemas.session import Entry, Session


@dataclass
class Call:
    call_id: str
    target: str
    decisions: list[DecisionEntry] = field(default_factory=list)
    dispatch: Entry | None = None
    output: Entry | None = None

    @property
    def rejected(self) -> bool:
        return any(d.verdict == "reject" for d in self.decisions)

    @property
    def held(self) -> bool:
        return (
            self.dispatch is None and bool(self.decisions) and self.decisions[-1].verdict == "hold"
        )


def _item(e: Entry) -> dict[str, Any] | None:
    return e.body.item if isinstance(e.body, ItemEntry) else None


def calls_on(path: list[Entry]) -> dict[str, Call]:
    """Every function call on ``path`` with its decisions, dispatch and output."""
    calls: dict[str, Call] = {}
    for e in path:
        item = _item(e)
        if item and item.get("type") == "function_call":
            cid = item.get("call_id") or ""
            calls.setdefault(cid, Call(cid, e.id))
    for e in path:
        item, b = _item(e), e.body
        if isinstance(b, DecisionEntry) and b.call_id in calls:
            calls[b.call_id].decisions.append(b)
        elif isinstance(b, DispatchEntry) and b.call_id in calls:
            c = calls[b.call_id]
            c.dispatch = c.dispatch or e
        elif item and item.get("type") == "function_call_output" and item.get("call_id") in calls:
            c = calls[item["call_id"]]
            c.output = c.output or e
    return calls


def compute_reason(segment: list[Entry]) -> tuple[str, list[str]]:
    """The v0.0.5 end reason of a run segment and its pending call ids."""
    calls = calls_on(segment)
    pending = [cid for cid, c in calls.items() if c.output is None]
    responses = [e.body for e in segment if isinstance(e.body, ResponseEntry)]
    last = responses[-1] if responses else None
    if last is not None and last.error:
        return "error", pending
    if (
        pending
        and all(calls[c].held for c in pending)
        and not any(calls[c].dispatch for c in pending)
    ):
        return "input_required", pending
    if pending or last is None or last.status == "incomplete":
        return "aborted", pending
    for e in segment:
        b = e.body
        if (
            isinstance(b, ItemEntry)
            and b.item.get("type") == "function_call"
            and b.response == last.response_id
        ):
            return "stopped", pending
    return "done", pending


def _run_problems(path: list[Entry]) -> list[str]:
    problems: list[str] = []
    position = {e.id: i for i, e in enumerate(path)}
    for end in path:
        b = end.body
        if not (isinstance(b, RunEntry) and b.phase == "end"):
            continue
        start = next(
            (
                e
                for e in path[: position[end.id]]
                if isinstance(e.body, RunEntry)
                and e.body.phase == "start"
                and e.body.run_id == b.run_id
            ),
            None,
        )
        if start is None:
            continue
        reason, pending = compute_reason(path[position[start.id] : position[end.id]])
        if b.reason not in ("error", "interrupted") and b.reason != reason:
            problems.append(
                f"run {b.run_id} (entry {end.id}) ends with reason {b.reason!r}; its segment shows {reason!r}"
            )
        if set(b.pending or []) != set(pending):
            problems.append(
                f"run {b.run_id} (entry {end.id}) lists pending {sorted(b.pending or [])}; "
                f"its segment leaves {sorted(pending)} without output"
            )
    return problems


def verify_records(session: Session, path: list[Entry]) -> list[str]:
    """Problems with the record rules of §6.3 on ``path`` (empty when all hold)."""
    problems = _run_problems(path)
    position = {e.id: i for i, e in enumerate(path)}
    records = session.header.records or []
    for c in calls_on(path).values():
        if c.dispatch is not None and any(
            d.verdict == "reject" and position[d.id] < position[c.dispatch.id] for d in c.decisions
        ):
            problems.append(f"call {c.call_id}: dispatch {c.dispatch.id} follows a reject decision")
        if "dispatch" in records and c.output is not None and not c.rejected and c.dispatch is None:
            problems.append(
                f"call {c.call_id}: the header promises dispatch records but the call "
                f"has an output ({c.output.id}) and no dispatch"
            )
    return problems
