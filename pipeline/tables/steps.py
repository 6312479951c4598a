"""``steps``: one row per ATIF step of every exported trajectory."""

from __future__ import annotations

from collections import Counter
from typing import Any

from trajset.schemas.records import ExportedTrajectory, SessionExport
from trajset.schemas.tables import STEPS

from ..jsonio import dumps_compact
from .base import Row, Table
from .messages import text_of

#: a slice's observation lists by their results (source call ids and content objects), so
#: the steps of trajectories through one entry hold one list (``Table.shared``)
Observed = dict[tuple[tuple[Any, int], ...], list[dict[str, Any]]]


def _observations(step: dict[str, Any], held: Observed) -> list[dict[str, Any]]:
    results = (step.get("observation") or {}).get("results", [])
    key = tuple((r.get("source_call_id"), id(r.get("content"))) for r in results)
    if key not in held:  # the documents, and so each content object, live through the slice
        held[key] = [
            {"source_call_id": r.get("source_call_id"), "content": text_of(r.get("content"))}
            for r in results
        ]
    return held[key]


def step_row(
    session_id: str, leaf_id: str, step: dict[str, Any], held: Observed | None = None
) -> Row:
    metrics = step.get("metrics") or {}
    extra = dict(step.get("extra") or {})
    return {
        "session_id": session_id,
        "leaf_id": leaf_id,
        "step_id": step["step_id"],
        "entry_id": extra.get("agentsession", {}).get("entry_id"),
        "source": step["source"],
        "timestamp": step.get("timestamp"),
        "model_name": step.get("model_name"),
        "message": text_of(step["message"]),
        "reasoning_content": step.get("reasoning_content"),
        "tool_calls": [
            {
                "tool_call_id": c["tool_call_id"],
                "function_name": c["function_name"],
                "arguments": dumps_compact(c["arguments"]),
            }
            for c in step.get("tool_calls") or []
        ],
        "observations": _observations(step, {} if held is None else held),
        "prompt_tokens": metrics.get("prompt_tokens"),
        "completion_tokens": metrics.get("completion_tokens"),
        "cached_tokens": metrics.get("cached_tokens"),
        "cost_usd": metrics.get("cost_usd"),
        "is_copied_context": bool(step.get("is_copied_context")),
        "llm_call_count": step.get("llm_call_count"),
        "extra": dumps_compact(extra),
    }


def trajectory_steps(et: ExportedTrajectory, held: Observed | None = None) -> list[Row]:
    sid, leaf = et.trajectory.session.id, et.trajectory.leaf_id
    return [step_row(sid, leaf, step, held) for step in et.document["steps"]]


def rows(export: SessionExport, stats: Counter[str]) -> list[Row]:
    held: Observed = {}
    out = [r for et in export.kept for r in trajectory_steps(et, held)]
    stats["steps"] += len(out)
    return out


TABLE = Table(
    "steps", STEPS, "one row per ATIF step of every trajectory", rows, shared=("observations",)
)
