"""Lifecycle records on a path: calls, runs and their reasons (spec §6).

Used by ``trajset verify`` to check what a writer promised in its header's
``records`` and what each run's ``end`` claims against the path itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .session import Entry, Session


@dataclass
class Call:
    call_id: str
    target: str
    decisions: list[Entry] = field(default_factory=list)
    dispatch: Entry | None = None
    output: Entry | None = None

    @property
    def rejected(self) -> bool:
        return any(d.body.verdict == "reject" for d in self.decisions)  # type: ignore[attr-defined]

    @property
    def held(self) -> bool:
        return (
            self.dispatch is None
            and bool(self.decisions)
            and self.decisions[-1].body.verdict == "hold"
        )  # type: ignore[attr-defined]

    def state(self, records: list[str]) -> str:
        if self.output is not None:
            return "completed"
        if self.held:
            return "held"
        if self.dispatch is not None:
            return "in_flight"
        if "dispatch" in records:
            return "never_started"
        return "unknown"


def _item(e: Entry) -> dict | None:
    return e.body.item if e.type == "item" else None  # type: ignore[attr-defined]


def calls_on(path: list[Entry]) -> dict[str, Call]:
    """Every function call on ``path`` with its decisions, dispatch and output."""
    calls: dict[str, Call] = {}
    for e in path:
        item = _item(e)
        if item and item.get("type") == "function_call":
            cid = item.get("call_id") or ""
            calls.setdefault(cid, Call(cid, e.id))
    for e in path:
        item = _item(e)
        if e.type == "decision" and e.body.call_id in calls:  # type: ignore[attr-defined]
            calls[e.body.call_id].decisions.append(e)  # type: ignore[attr-defined]
        elif e.type == "dispatch" and e.body.call_id in calls:  # type: ignore[attr-defined]
            c = calls[e.body.call_id]  # type: ignore[attr-defined]
            c.dispatch = c.dispatch or e
        elif item and item.get("type") == "function_call_output" and item.get("call_id") in calls:
            c = calls[item["call_id"]]
            c.output = c.output or e
    return calls


def compute_reason(segment: list[Entry]) -> tuple[str, list[str]]:
    """The v0.0.5 end reason of a run segment and its pending call ids."""
    calls = calls_on(segment)
    pending = [cid for cid, c in calls.items() if c.output is None]
    responses = [e for e in segment if e.type == "response"]
    last = responses[-1] if responses else None
    if last is not None and last.body.error:  # type: ignore[attr-defined]
        return "error", pending
    if (
        pending
        and all(calls[c].held for c in pending)
        and not any(calls[c].dispatch for c in pending)
    ):
        return "input_required", pending
    if pending or last is None or last.body.status == "incomplete":  # type: ignore[attr-defined]
        return "aborted", pending
    rid = last.body.response_id  # type: ignore[attr-defined]
    for e in segment:
        item = _item(e)
        if item and item.get("type") == "function_call" and e.body.response == rid:  # type: ignore[attr-defined]
            return "stopped", pending
    return "done", pending


def verify_records(session: Session, path: list[Entry]) -> list[str]:
    """Problems with the record rules of §6.3 on ``path`` (empty when all hold)."""
    problems: list[str] = []
    position = {e.id: i for i, e in enumerate(path)}
    for end in (e for e in path if e.type == "run" and e.body.phase == "end"):  # type: ignore[attr-defined]
        run_id = end.body.run_id  # type: ignore[attr-defined]
        start = next(
            (
                e
                for e in path[: position[end.id]]
                if e.type == "run" and e.body.phase == "start" and e.body.run_id == run_id
            ),
            None,
        )  # type: ignore[attr-defined]
        if start is None:
            continue
        segment = path[position[start.id] : position[end.id]]
        reason, pending = compute_reason(segment)
        written = end.body.reason  # type: ignore[attr-defined]
        if written not in ("error", "interrupted") and written != reason:
            problems.append(
                f"run {run_id} (entry {end.id}) ends with reason {written!r}; its segment shows {reason!r}"
            )
        if set(end.body.pending or []) != set(pending):  # type: ignore[attr-defined]
            problems.append(
                f"run {run_id} (entry {end.id}) lists pending {sorted(end.body.pending or [])}; "  # type: ignore[attr-defined]
                f"its segment leaves {sorted(pending)} without output"
            )
    calls = calls_on(path)
    records = session.header.records or []
    for c in calls.values():
        if c.dispatch is not None and any(
            d.body.verdict == "reject" and position[d.id] < position[c.dispatch.id]
            for d in c.decisions  # type: ignore[attr-defined]
        ):
            problems.append(f"call {c.call_id}: dispatch {c.dispatch.id} follows a reject decision")
        if "dispatch" in records and c.output is not None and not c.rejected and c.dispatch is None:
            problems.append(
                f"call {c.call_id}: the header promises dispatch records but the call "
                f"has an output ({c.output.id}) and no dispatch"
            )
    return problems
