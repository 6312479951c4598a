"""Human verdicts of one turn as decision entries (spec §4.2): approvals, questions, plans.

A request suspends a call (``hold``); a decision lets it ``proceed`` or
``reject``s it; a timeout or a dismissed question rejects it.  A request
names a tool, not a call: it belongs to the latest call of that tool made
before it (``plan_request``/``ask_user_request``: the latest call).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from .record import Event

JSON = Any
REQUESTS = {
    "approval_request": "approval_id",
    "ask_user_request": "ask_id",
    "plan_request": "plan_id",
}
DECISIONS = {
    "approval_decision": "approval_id",
    "ask_decision": "ask_id",
    "plan_decision": "plan_id",
}
REJECTS = {
    "approval_timeout": "approval_id",
    "ask_timeout": "ask_id",
    "ask_ignored": "ask_id",
    "plan_timeout": "plan_id",
}


@dataclass(frozen=True)
class Verdict:
    ts: int | None
    body: dict[str, JSON]  # verdict, by?, reason?, einox:* members


@dataclass
class Decisions:
    by_call: dict[str, list[Verdict]] = field(default_factory=lambda: defaultdict(list))
    timeouts: list[tuple[str, int | None]] = field(default_factory=list)

    def of_call(self, call_id: str) -> list[Verdict]:
        return self.by_call.get(call_id, [])

    @classmethod
    def of(cls, events: list[Event]) -> Decisions:
        out = cls()
        calls: list[tuple[str, str]] = []  # (tool, call id) in order
        taken: set[str] = set()
        latest = ""
        request_calls: dict[str, list[tuple[str, str]]] = {}  # request id -> [(item id, call id)]
        for e in events:
            d = e.data if isinstance(e.data, dict) else {}
            if e.event == "tool_call":
                latest = str(d.get("call_id") or "")
                calls.append((str(d.get("tool") or ""), latest))
            elif e.event in REQUESTS:
                suspended = _request_calls(e.event, d, calls, taken, latest)
                request_calls[str(d.get(REQUESTS[e.event]) or "")] = suspended
                for _, cid in suspended:
                    out.by_call[cid].append(
                        Verdict(
                            e.ts,
                            {
                                "verdict": "hold",
                                "by": "einox",
                                "einox:request": {"event": e.event, **d},
                            },
                        )
                    )
            elif e.event in DECISIONS:
                out._decided(e, d, request_calls.get(str(d.get(DECISIONS[e.event]) or ""), []))
            elif e.event in REJECTS:
                reason = str(d.get("reason") or e.event)
                for _, cid in request_calls.get(str(d.get(REJECTS[e.event]) or ""), []):
                    out.by_call[cid].append(
                        Verdict(
                            e.ts,
                            {
                                "verdict": "reject",
                                "by": "einox",
                                "reason": reason,
                                "einox:event": e.event,
                            },
                        )
                    )
                if e.event != "ask_ignored":
                    out.timeouts.append((e.event, e.ts))
        return out

    def _decided(self, e: Event, d: dict[str, JSON], calls: list[tuple[str, str]]) -> None:
        items = {str(i.get("item_id")): i for i in d.get("items") or [] if isinstance(i, dict)}
        by = str(d.get("decider_name") or d.get("decider_id") or "human")
        for item_id, cid in calls:
            item = items.get(item_id, d)
            approve = item.get("approve", d.get("approve", True))
            body: dict[str, JSON] = {
                "verdict": "proceed" if approve is not False else "reject",
                "by": by,
            }
            reason = item.get("reason") or d.get("reason")
            if body["verdict"] == "reject":
                body["reason"] = str(reason or "rejected by the user")
            elif reason:
                body["reason"] = str(reason)
            if e.event == "ask_decision":
                body["einox:answers"] = {
                    "answers": d.get("answers"),
                    "free_text": d.get("free_text"),
                }
            self.by_call[cid].append(Verdict(e.ts, body))


def _request_calls(
    event: str, d: dict[str, JSON], calls: list[tuple[str, str]], taken: set[str], latest: str
) -> list[tuple[str, str]]:
    """(item id, call id) for every call a request suspends: per item, the first call of its
    tool not yet suspended; without items, the latest call of the tool (or the latest call)."""
    items = (
        [i for i in d.get("items") or [] if isinstance(i, dict)]
        if event == "approval_request"
        else []
    )
    if not items:
        tool = str(d.get("tool") or "")
        cid = next((c for t, c in reversed(calls) if t == tool), latest) if tool else latest
        taken.add(cid)
        return [("", cid)] if cid else []
    out = []
    for i in items:
        tool = str(i.get("tool") or "")
        cid = next((c for t, c in calls if t == tool and c not in taken), "")
        if cid:
            taken.add(cid)
            out.append((str(i.get("item_id") or ""), cid))
    return out
