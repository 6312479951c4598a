"""Steps made by entries (spec §7.4): model output, user and system items, summaries, configs.

Model output (assistant messages, reasoning, function calls, anything a
``response`` owns) is grouped and becomes one agent step per response when
the group is flushed; tool outputs become observation results of the step
that made the call; other items, compactions and branch summaries are
system or user steps.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from trajset.schemas.entries import (
    NOT_RESENT,
    RECORDED_COST,
    BranchSummaryEntry,
    CompactionEntry,
    ConfigEntry,
    ItemEntry,
    ResponseEntry,
)
from trajset.schemas.openresponses import encode_error, encode_usage
from trajset.schemas.session import Entry
from trajset.schemas.tools import tool_name

from .content import item_text, message_content, output_content
from .records import response_record, sorted_members
from .state import Walk
from .tools import parse_arguments

JSON = Any
CostFn = Callable[[str, JSON], "float | None"]


def is_agent_output(b: ItemEntry) -> bool:
    if b.response:
        return True
    kind = b.item.get("type")
    return kind in ("reasoning", "function_call") or (
        kind == "message" and b.item.get("role") == "assistant"
    )


def item_extra(b: ItemEntry, item: JSON) -> dict[str, JSON]:
    extra: dict[str, JSON] = {"openresponses": {"item": item}}
    if b.visible is False:
        extra["visible"] = False
    return extra


def _agent_message(items: list[JSON]) -> JSON:
    contents = [message_content(it) for it in items if it.get("type") == "message"]
    if any(isinstance(c, list) for c in contents):
        parts: list[JSON] = []
        for c in contents:
            parts.extend(c if isinstance(c, list) else [{"type": "text", "text": c}])
        return parts
    return "\n".join(c for c in contents if isinstance(c, str))


def token_metrics(usage: JSON) -> dict[str, int]:
    """ATIF's token counts of a usage (``encode_usage``'d): prompt, completion, cached."""
    return {
        "prompt_tokens": usage["input_tokens"],
        "completion_tokens": usage["output_tokens"],
        "cached_tokens": usage["input_tokens_details"]["cached_tokens"],
    }


def _metrics(
    w: Walk, model: str, usage_raw: JSON, cost: CostFn | None, recorded: JSON = None
) -> dict[str, JSON]:
    """A response's metrics; its cost is the one its store recorded (``RECORDED_COST``),
    else what ``cost`` prices its usage at, and is added to the trajectory's total."""
    usage = encode_usage(usage_raw)
    metrics: dict[str, JSON] = dict(token_metrics(usage))
    usd = recorded_dollars(recorded)
    if usd is None and cost is not None:
        usd = cost(model, usage_raw)
    if usd is not None:
        metrics["cost_usd"] = usd
        w.cost = (w.cost or 0.0) + usd
    reasoning_tokens = usage["output_tokens_details"]["reasoning_tokens"]
    if reasoning_tokens > 0:
        metrics["extra"] = {"reasoning_tokens": reasoning_tokens}
    w.totals[0] += metrics["prompt_tokens"]
    w.totals[1] += metrics["completion_tokens"]
    w.totals[2] += metrics["cached_tokens"]
    return metrics


def recorded_dollars(value: JSON) -> float | None:
    """A recorded cost: a finite number of at least 0 (a reader checked it; a file written
    by hand may hold anything, which is no cost)."""
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    return float(value) if ok and math.isfinite(value) and value >= 0 else None


def _response_extras(
    w: Walk, step: JSON, extra: JSON, e: Entry, rb: ResponseEntry, cost: CostFn | None
) -> None:
    extra["openresponses"]["response"] = response_record(e, rb)
    if rb.usage is not None:
        recorded = e.raw.get(RECORDED_COST)
        step["metrics"] = _metrics(w, step.get("model_name", ""), rb.usage, cost, recorded)
    if rb.status and rb.status != "completed":
        extra["status"] = rb.status
    if rb.error is not None:
        extra["error"] = encode_error(rb.error)
    if rb.incomplete is not None:
        extra["incomplete"] = rb.incomplete.get("reason") or ""
    if rb.latency_ms and rb.latency_ms > 0:
        extra["latency_ms"] = rb.latency_ms
    if isinstance(e.raw.get(NOT_RESENT), str):  # the agent left it out of later requests
        extra["not_resent"] = e.raw[NOT_RESENT]


def flush(
    w: Walk, cost: CostFn | None, response: tuple[Entry, ResponseEntry] | None = None
) -> None:
    """Close the open model-output group (and ``response``, if given) into one agent step."""
    group, rid = w.group, w.group_rid
    w.group, w.group_rid = [], ""
    if not group and response is None:
        return
    items = [e.encoded_item() for e in group if isinstance(e.body, ItemEntry)]
    model = response[1].model if response is not None and response[1].model else w.settings.model
    step: dict[str, JSON] = {"source": "agent"}
    if model:
        step["model_name"] = model
    if w.settings.reasoning_effort:
        step["reasoning_effort"] = w.settings.reasoning_effort
    step["message"] = _agent_message(items)
    reasoning = [r for r in (item_text(it) for it in items if it.get("type") == "reasoning") if r]
    if reasoning:
        step["reasoning_content"] = "\n".join(reasoning)
    calls = [it for it in items if it.get("type") == "function_call"]
    if calls:
        step["tool_calls"] = [
            {
                "tool_call_id": c["call_id"],
                "function_name": c["name"],
                "arguments": parse_arguments(c["arguments"]),
            }
            for c in calls
        ]
    extra: dict[str, JSON] = {"openresponses": {"items": items}}
    phases = [it["phase"] for it in items if it.get("type") == "message" and it.get("phase")]
    if phases:
        extra["phases"] = phases
    if group:
        extra["item_entry_ids"] = [e.id for e in group]
    if response is not None:
        _response_extras(w, step, extra, *response, cost)
        anchor = response[0]
    else:
        if rid:
            extra["response_id"] = rid
        anchor = group[0]
    step["llm_call_count"] = 1
    step["extra"] = extra
    w.append(step, anchor)
    for e in group:
        w.entry_step[e.id] = step
    for c in calls:
        w.call_step[c["call_id"]] = step


def on_item(w: Walk, e: Entry, b: ItemEntry, cost: CostFn | None) -> None:
    """Model output joins the open group; any other item flushes it and makes its own step."""
    if is_agent_output(b):
        resp = b.response or ""
        if w.group and w.group_rid and resp and resp != w.group_rid:
            flush(w, cost)
        if not w.group_rid and resp:
            w.group_rid = resp
        w.group.append(e)
        return
    flush(w, cost)
    item = e.encoded_item()
    kind = item.get("type")
    if kind == "message":
        role = item.get("role") or ""
        extra = item_extra(b, item)
        if role != "user":
            extra["role"] = role
        source = "user" if role == "user" else "system"
        w.append({"source": source, "message": message_content(item), "extra": extra}, e)
    elif kind == "function_call_output":
        on_tool_output(w, e, b, item)
    else:
        extra = item_extra(b, item)
        extra["item_type"] = kind
        user = b.item.get("role") == "user" and kind not in ("compaction", "item_reference")
        w.append(
            {"source": "user" if user else "system", "message": item_text(item), "extra": extra}, e
        )


def on_tool_output(w: Walk, e: Entry, b: ItemEntry, item: JSON) -> None:
    """An observation result of the step that made the call, or a system step of its own."""
    call_id = item.get("call_id") or ""
    content = output_content(item.get("output"))
    target = w.call_step.get(call_id)
    if target is not None:
        result: dict[str, JSON] = {"source_call_id": call_id}
        if content != "":
            result["content"] = content
        result["extra"] = item_extra(b, item)
        target.setdefault("observation", {"results": []})["results"].append(result)
        w.entry_step[e.id] = target
        return
    extra = item_extra(b, item)
    extra["orphan_call_id"] = call_id
    res: dict[str, JSON] = {"content": content} if content != "" else {}
    w.append(
        {"source": "system", "message": "", "observation": {"results": [res]}, "extra": extra}, e
    )


def on_compaction(w: Walk, e: Entry, b: CompactionEntry) -> None:
    summary = e.encoded_item()
    text = item_text(summary)
    extra: dict[str, JSON] = {
        "context_management": {"boundary": "replace", "type": "compaction"},
        "openresponses": {"item": summary},
        "first_kept": b.first_kept,
    }
    if b.tokens_before and b.tokens_before > 0:
        extra["tokens_before"] = b.tokens_before
    if b.usage is not None:
        extra["usage"] = b.usage
    step = {
        "source": "system",
        "message": text,
        "observation": {"results": [{"content": text} if text else {}]},
        "is_copied_context": True,
        "extra": extra,
    }
    w.append(step, e)


def on_branch_summary(w: Walk, e: Entry, b: BranchSummaryEntry) -> None:
    summary = e.encoded_item()
    message = message_content(summary) if summary.get("type") == "message" else item_text(summary)
    extra: dict[str, JSON] = {"branch_from": b.from_, "openresponses": {"item": summary}}
    if b.usage is not None:
        extra["usage"] = b.usage
    w.append({"source": "system", "message": message, "is_copied_context": True, "extra": extra}, e)


def on_config(w: Walk, e: Entry, b: ConfigEntry) -> None:
    """Settings change; tool changes and unknown members ride on the next step."""
    before = {tool_name(t) for t in w.settings.tools}
    w.settings = w.settings.apply(b)
    after = {tool_name(t) for t in w.settings.tools}
    if before != after:
        change: dict[str, JSON] = {}
        if after - before:
            change["added"] = sorted(after - before)
        if before - after:
            change["removed"] = sorted(before - after)
        w.pending["tool_changes"] = change
    w.pending.setdefault("config_entries", []).append(e.id)
    unknown = b.unknown_members()
    if unknown:
        w.pending.setdefault("config_extensions", []).append(
            sorted_members({**unknown, "entry_id": e.id})
        )
