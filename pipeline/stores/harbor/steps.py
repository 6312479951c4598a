"""ATIF steps as Agent Session Format entries (specs/harbor-jobs.md, mapping table).

The reverse of trajset's own export, sharing its item mapping
(``atif.items.step_items``), with nothing dropped: a result not linked to a
call is the output of the step's last call, or a user message when the step
made none.  Each step becomes a ``Step``: its entry bodies (ids and parents
are the tree's to give) and the key that says whether two trials' steps are
the same (spec §6: byte-identical content; step ids and timestamps aside).
Every ATIF member without an equivalent is kept in a ``harbor:`` member.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from trajset.schemas.entries import RECORDED_COST
from trajset.schemas.openresponses import text_message
from trajset.schemas.session import Issue
from trajset.schemas.timestamps import RFC3339_RE

from ...atif.items import CallIds, step_items
from ...jsonio import dumps_compact
from .. import numbers
from ..numbers import cost, counts

JSON = Any
#: step members that have an equivalent in the entries; the rest go in ``harbor:step``
MAPPED = ("source", "message", "reasoning_content", "tool_calls", "observation", "metrics")
USAGE = ("prompt_tokens", "completion_tokens", "cached_tokens")
#: a subagent ref -> the id of the session it names ("" when it names none)
SessionOf = Callable[[JSON], str]


@dataclass
class Step:
    """One ATIF step as entry bodies; ``label`` names it in entry ids (``s<step_id>``)."""

    label: str
    key: str
    bodies: list[dict[str, JSON]] = field(default_factory=list)
    links: int = 0  # subsession links made
    observations: int = 0  # results kept as user messages (no call to answer)


def step_key(step: JSON) -> str:
    """What two trials must share for their steps to be one entry: everything but the
    step id and timestamp (call ids included: a step is merged only when byte-identical)."""
    return dumps_compact({k: v for k, v in step.items() if k not in ("step_id", "timestamp")})


def said_key(step: JSON) -> str:
    """What a step said, for a continuation's copied steps (which drop metrics and ``extra``
    and are marked ``is_copied_context``): its source, message, reasoning, calls, results."""
    return dumps_compact(
        [
            step.get(k)
            for k in ("source", "message", "reasoning_content", "tool_calls", "observation")
        ]
    )


def usage(notes: list[Issue], metrics: JSON, source: str, where: str) -> dict[str, JSON] | None:
    """ATIF metrics as Open Responses usage (``prompt_tokens`` includes the cached ones);
    None when there are none, or a count there is out of range (noted in ``notes``)."""
    if not isinstance(metrics, dict) or not any(k in metrics for k in USAGE):
        return None
    got = counts(notes, metrics, USAGE, where, source, None)
    if got is None:
        return None
    inp, out, cached = got
    return numbers.usage(inp, out, cached)


def _result_notes(notes: dict[str, JSON]) -> dict[str, JSON]:
    """The ``harbor:`` members of an item made from observation results: ``unlinked`` when
    no ``source_call_id`` named its call, and the raw results when they hold more than a
    call id and a text (images, ``extra``)."""
    out: dict[str, JSON] = {}
    if notes.get("observation"):
        out["harbor:observation"] = True
    if "output_with" in notes:
        out["harbor:output_with"] = notes["output_with"]
    results = notes.get("results") or ([notes["result"]] if "result" in notes else [])
    if any(not r.get("source_call_id") for r in results):
        out["harbor:unlinked"] = True
    if any(set(r) - {"source_call_id", "content"} or not isinstance(r.get("content"), str | None)
           for r in results):  # fmt: skip
        out["harbor:results"] = results
    return out


def _item_body(item: JSON, notes: dict[str, JSON], ts: str, call: JSON) -> dict[str, JSON]:
    body: dict[str, JSON] = {"type": "item", "ts": ts, "item": item}
    more = {
        k: v
        for k, v in (call or {}).items()
        if k not in ("tool_call_id", "function_name", "arguments")
    }
    if more:
        body["harbor:call"] = more
    return body | _result_notes(notes)


def convert(
    step: JSON,
    ids: CallIds,
    ts: str,
    model: str,
    session_of: SessionOf,
    problems: list[Issue],
    copied: bool = False,
    source: str = "",
) -> Step:
    """One step as entry bodies: its items (an agent step's output owned by a ``response``
    carrying the step's usage, its results after it), then its subsession links.
    ``copied`` marks a subagent's copied context; ``source`` is the document's file; a count
    out of range is noted in ``problems``."""
    sid = step.get("step_id")
    out = Step(f"s{sid}" if isinstance(sid, int) else "s", step_key(step))
    agent = step.get("source") == "agent"
    calls = iter(step.get("tool_calls") or [])
    said: list[dict[str, JSON]] = []  # the model's output (agent steps)
    for item, notes in step_items(step, ids, unlinked=True):
        call: JSON = next(calls, {}) if item.get("type") == "function_call" else None
        body = _item_body(item, notes, ts, call)
        out.observations += bool(notes.get("observation"))
        if agent and not notes:
            body["response"] = f"step-{sid}"
            said.append(body)
        else:
            out.bodies.append(body)
    if agent:
        out.bodies = [
            *said,
            _response(step, f"step-{sid}", ts, model, source, problems),
            *out.bodies,
        ]
    if (boundary := _boundary(step)) is not None:
        out.bodies = [boundary | {"ts": ts}]
    elif not agent and isinstance(step.get("metrics"), dict) and out.bodies:
        out.bodies[0]["harbor:metrics"] = step["metrics"]
    for ref in _refs(step):
        session = session_of(ref)
        if session:
            out.bodies.append({"type": "link", "ts": ts, "rel": "subsession", "session": session,
                               "harbor:ref": ref})  # fmt: skip
            out.links += 1
    if not out.bodies:  # a step with nothing in context (an empty system step): kept as a record
        out.bodies.append({"type": "custom", "ts": ts, "ns": "harbor:step"})
    out.bodies[0]["harbor:step"] = {k: v for k, v in step.items() if k not in MAPPED}
    if copied:
        for b in out.bodies:
            b["harbor:copied_context"] = True
    return out


def _response(
    step: JSON, rid: str, ts: str, model: str, source: str, notes: list[Issue]
) -> dict[str, JSON]:
    body: dict[str, JSON] = {
        "type": "response",
        "ts": ts,
        "response_id": rid,
        "status": "completed",
    }
    name = step.get("model_name") or model
    if isinstance(name, str) and name:
        body["model"] = name
    metrics = step.get("metrics")
    where = f"step {step.get('step_id')} metrics"
    if (u := usage(notes, metrics, source, where)) is not None:
        body["usage"] = u
        spent = metrics.get("cost_usd") if isinstance(metrics, dict) else None
        if (usd := cost(notes, spent, f"{where}.cost_usd", source, None)) is not None:
            body[RECORDED_COST] = usd
    if isinstance(metrics, dict) and (rest := {k: v for k, v in metrics.items() if k not in USAGE}):
        body["harbor:metrics"] = rest
    return body


def _boundary(step: JSON) -> dict[str, JSON] | None:
    """A ``replace`` context-management step as a compaction: the model's context after it is
    the step's observation content (atif.md §2.12).  ``first_kept`` is the tree's to set."""
    cm = (
        (step.get("extra") or {}).get("context_management")
        if isinstance(step.get("extra"), dict)
        else None
    )
    if not isinstance(cm, dict) or cm.get("boundary") != "replace":
        return None
    results = (step.get("observation") or {}).get("results") or []
    text = "\n".join(str(r.get("content")) for r in results if isinstance(r.get("content"), str))
    return {"type": "compaction", "first_kept": None, "summary": text_message("user", text), "config": {},
            "harbor:message": step.get("message"), "harbor:observation": step.get("observation")}  # fmt: skip


def _refs(step: JSON) -> list[JSON]:
    results = (step.get("observation") or {}).get("results") or []
    return [
        ref
        for r in results
        if isinstance(r, dict)
        for ref in r.get("subagent_trajectory_ref") or []
        if isinstance(ref, dict)
    ]


def timestamp(step: JSON, last: str) -> str:
    """The step's timestamp when it is RFC 3339, else ``last`` (the one before it)."""
    ts = step.get("timestamp")
    return ts if isinstance(ts, str) and RFC3339_RE.match(ts) else last
