"""Table rows from the exported ATIF documents (DESIGN §5).

Tables are derived from the same per-trajectory data as the documents,
never by re-reading inputs: ``messages`` (TRL conversational, with tool
calls) from a document's steps, one ``steps`` row per step, ``outcomes``
with the trajectories they apply to, and preference pairs built from the
abandoned branches at every fork (``pairs``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .atif import to_atif, tool_definition
from .context import Settings, build_context
from .errors import ContextError
from .jsonio import content_hash, dumps_compact
from .preferences import Policy, TreeIndex
from .session import Session
from .trajectories import Trajectory, choose

JSON = Any


# --------------------------------------------------------------------------- messages


def text_of(content: JSON) -> str | None:
    """ATIF message/observation content as one string; media as ``[image: path]``."""
    if content is None:
        return None
    if isinstance(content, str):
        return content
    out = []
    for part in content:
        if part.get("type") == "text":
            out.append(part.get("text") or "")
        else:
            out.append(f"[{part.get('type')}: {part['source']['path']}]")
    return "".join(out)


def _message(
    role: str,
    content: str | None,
    *,
    tool_calls: list[JSON] | None = None,
    tool_call_id: str | None = None,
    name: str | None = None,
    reasoning: str | None = None,
    trainable: bool = False,
) -> dict[str, JSON]:
    return {
        "role": role,
        "content": content if content is not None else "",
        "tool_calls": tool_calls,
        "tool_call_id": tool_call_id,
        "name": name,
        "reasoning_content": reasoning,
        "trainable": trainable,
    }


def step_messages(step: dict[str, JSON]) -> list[dict[str, JSON]]:
    """The chat messages one ATIF step stands for."""
    extra = step.get("extra") or {}
    results = (step.get("observation") or {}).get("results", [])
    source = step["source"]
    if source == "agent":
        calls = step.get("tool_calls") or []
        names = {c["tool_call_id"]: c["function_name"] for c in calls}
        trainable = not step.get("is_copied_context") and step.get("llm_call_count") != 0
        out = [
            _message(
                "assistant",
                text_of(step["message"]),
                tool_calls=[
                    {
                        "id": c["tool_call_id"],
                        "type": "function",
                        "function": {
                            "name": c["function_name"],
                            "arguments": dumps_compact(c["arguments"]),
                        },
                    }
                    for c in calls
                ]
                or None,
                reasoning=step.get("reasoning_content"),
                trainable=trainable,
            )
        ]
        for r in results:
            if r.get("source_call_id"):
                out.append(
                    _message(
                        "tool",
                        text_of(r.get("content")),
                        tool_call_id=r["source_call_id"],
                        name=names.get(r["source_call_id"]),
                    )
                )
        return out
    if "orphan_call_id" in extra:
        # A tool output whose call is not in this context (e.g. compacted away).
        return [
            _message(
                "tool",
                text_of(results[0].get("content")) if results else "",
                tool_call_id=extra["orphan_call_id"],
            )
        ]
    role = "user" if source == "user" else "system"
    return [_message(role, text_of(step["message"]))]


def document_messages(
    doc: dict[str, JSON], instructions: str | None
) -> list[tuple[dict[str, JSON], str]]:
    """(message, anchor entry id) for a whole document; instructions first as a system message."""
    out: list[tuple[dict[str, JSON], str]] = []
    if instructions:
        out.append((_message("system", instructions), ""))
    for step in doc["steps"]:
        anchor = step["extra"]["agentsession"]["entry_id"]
        out.extend((m, anchor) for m in step_messages(step))
    return out


def function_tools(settings: Settings) -> str:
    """The function tools in force, as JSON text in the ``tools`` shape TRL reads."""
    return dumps_compact(
        [
            tool_definition(t)
            for t in settings.tools
            if isinstance(t, dict) and t.get("type") == "function"
        ]
    )


# --------------------------------------------------------------------------- outcomes


@dataclass(frozen=True)
class OutcomeInfo:
    row: dict[str, JSON]
    leaf_ids: frozenset[str]


def outcome_infos(session: Session) -> list[OutcomeInfo]:
    """Every outcome entry with the leaves whose path holds its target (all leaves when it has none)."""
    leaves = session.leaves()
    out = []
    for e in session.entries:
        if e.type != "outcome":
            continue
        b = e.body
        target = b.target or ""  # type: ignore[attr-defined]
        if target:
            under = set(session.subtree_ids(target)) if target in session.by_id else set()
            applies = [leaf for leaf in leaves if leaf in under]
        else:
            applies = list(leaves)
        details = e.raw.get("details")
        row = {
            "session_id": session.id,
            "entry_id": e.id,
            "kind": b.kind,
            "target": target or None,  # type: ignore[attr-defined]
            "score": float(b.score) if b.score is not None else None,
            "pass": b.pass_,  # type: ignore[attr-defined]
            "label": b.label or None,
            "details": dumps_compact(details) if "details" in e.raw else None,  # type: ignore[attr-defined]
            "leaf_ids": applies,
        }
        out.append(OutcomeInfo(row, frozenset(applies)))
    return out


def outcome_columns(leaf: str, infos: Iterable[OutcomeInfo]) -> dict[str, JSON]:
    """The latest outcome (file order) that applies to ``leaf`` decides each column."""
    score = passed = label = None
    for info in infos:
        if leaf in info.leaf_ids:
            r = info.row
            score = r["score"] if r["score"] is not None else score
            passed = r["pass"] if r["pass"] is not None else passed
            label = r["label"] if r["label"] is not None else label
    return {"outcome_score": score, "outcome_pass": passed, "outcome_label": label}


# --------------------------------------------------------------------------- trajectories and steps


def trajectory_row(
    traj: Trajectory,
    doc: dict[str, JSON],
    atif_path: str,
    infos: list[OutcomeInfo],
    anchored: list[tuple[dict[str, JSON], str]],
    source_format: str = "agentsession",
) -> dict[str, JSON]:
    """One ``trajectories`` row; ``anchored`` is ``document_messages(doc, ...)``, shared with the pairs."""
    settings = traj.context.settings
    messages = [m for m, _ in anchored]
    tools = function_tools(settings)
    fm = doc.get("final_metrics") or {}
    agent = doc["agent"]
    return {
        "session_id": traj.session.id,
        "leaf_id": traj.leaf_id,
        "source_format": source_format,
        "is_main": traj.main,
        "is_preferred": traj.is_preferred,
        "abandoned_at": traj.abandoned_at or None,
        "preferred_over": list(traj.preferred_over),
        "n_steps": len(doc["steps"]),
        "agent_name": agent.get("name"),
        "agent_version": agent.get("version"),
        "model_name": agent.get("model_name"),
        "total_prompt_tokens": fm.get("total_prompt_tokens"),
        "total_completion_tokens": fm.get("total_completion_tokens"),
        "total_cached_tokens": fm.get("total_cached_tokens"),
        "total_cost_usd": fm.get("total_cost_usd"),
        **outcome_columns(traj.leaf_id, infos),
        "messages": messages,
        "tools": tools,
        "atif_path": atif_path,
        "content_hash": content_hash({"messages": messages, "tools": tools}),
    }


def step_rows(traj: Trajectory, doc: dict[str, JSON]) -> list[dict[str, JSON]]:
    rows = []
    for step in doc["steps"]:
        metrics = step.get("metrics") or {}
        extra = dict(step.get("extra") or {})
        entry_id = extra.get("agentsession", {}).get("entry_id")
        rows.append(
            {
                "session_id": traj.session.id,
                "leaf_id": traj.leaf_id,
                "step_id": step["step_id"],
                "entry_id": entry_id,
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
                "observations": [
                    {
                        "source_call_id": r.get("source_call_id"),
                        "content": text_of(r.get("content")),
                    }
                    for r in (step.get("observation") or {}).get("results", [])
                ],
                "prompt_tokens": metrics.get("prompt_tokens"),
                "completion_tokens": metrics.get("completion_tokens"),
                "cached_tokens": metrics.get("cached_tokens"),
                "cost_usd": metrics.get("cost_usd"),
                "is_copied_context": bool(step.get("is_copied_context")),
                "llm_call_count": step.get("llm_call_count"),
                "extra": dumps_compact(extra),
            }
        )
    return rows


# --------------------------------------------------------------------------- preference pairs


def preferred_leaf(index: TreeIndex, start: str, choices: dict[str, str]) -> str:
    """Follow preferred children from ``start`` down to a leaf."""
    session = index.session
    cur = start
    while children := session.children(cur):
        cur = children[0] if len(children) == 1 else choices[cur]
    return cur


def _continuation(
    doc_msgs: list[tuple[dict[str, JSON], str]], after: set[str]
) -> list[dict[str, JSON]]:
    return [m for m, anchor in doc_msgs if anchor in after]


def _turn(messages: list[dict[str, JSON]]) -> list[dict[str, JSON]]:
    """A side up to (not including) the next user input after its start."""
    for i, m in enumerate(messages):
        if i > 0 and m["role"] == "user":
            return messages[:i]
    return messages


@dataclass
class PairStats:
    built: int = 0
    dropped_identical: int = 0
    dropped_unexported: int = 0


def preference_rows(
    session: Session,
    index: TreeIndex,
    policies: Sequence[Policy],
    leaf_msgs: dict[str, list[tuple[dict[str, JSON], str]]],
    prompt_doc: Any,
    stats: PairStats,
) -> list[dict[str, JSON]]:
    """Pairs at every fork: each abandoned child against the preferred one, at turn and trajectory level.

    ``leaf_msgs`` holds the messages of every exported leaf; ``prompt_doc(fork)``
    returns (messages, settings) of the context at the fork.
    """
    rows: list[dict[str, JSON]] = []
    decided = {f: choose(index, f, policies) for f in session.forks()}
    preferred = {f: p for f, (p, _) in decided.items()}
    best = index.best_score()
    for fork, (chosen_child, policy) in decided.items():
        try:
            prompt, settings = prompt_doc(fork)
        except ContextError:
            stats.dropped_unexported += 2 * (len(session.children(fork)) - 1)
            continue
        tools = function_tools(settings)
        tools = function_tools(settings)
        pos = {e.id for e in session.path(fork)}
        sides: dict[str, tuple[str, list[dict[str, JSON]] | None]] = {}
        for child in session.children(fork):
            leaf = preferred_leaf(index, child, preferred)
            msgs = leaf_msgs.get(leaf)
            if msgs is None:
                sides[child] = (leaf, None)
                continue
            after = {e.id for e in session.path(leaf)} - pos
            sides[child] = (leaf, _continuation(msgs, after))
        chosen_leaf, chosen = sides[chosen_child]
        for child in session.children(fork):
            if child == chosen_child:
                continue
            rejected_leaf, rejected = sides[child]
            for granularity in ("turn", "trajectory"):
                if chosen is None or rejected is None:
                    stats.dropped_unexported += 1
                    continue
                c = _turn(chosen) if granularity == "turn" else chosen
                r = _turn(rejected) if granularity == "turn" else rejected
                if c == r:
                    stats.dropped_identical += 1
                    continue
                kind = (
                    "response"
                    if c and r and c[0]["role"] == r[0]["role"] == "assistant"
                    else "prompt"
                )
                cs, rs = best.get(chosen_child), best.get(child)
                rows.append(
                    {
                        "pair_id": content_hash(
                            [session.id, fork, chosen_child, child, granularity]
                        )[7:39],
                        "session_id": session.id,
                        "fork_entry_id": fork,
                        "granularity": granularity,
                        "kind": kind,
                        "prompt": prompt,
                        "chosen": c,
                        "rejected": r,
                        "chosen_leaf_id": chosen_leaf,
                        "rejected_leaf_id": rejected_leaf,
                        "chosen_score": cs,
                        "rejected_score": rs,
                        "margin": cs - rs if cs is not None and rs is not None else None,
                        "policy": policy,
                        "tools": tools,
                    }
                )
                stats.built += 1
    return rows


def fork_prompt(session: Session, fork: str) -> tuple[dict[str, JSON], Settings]:
    """The context at ``fork`` as a document (media not yet spilled) and its settings."""
    ctx = build_context(session.path(fork))
    return to_atif(Trajectory(session, fork, ctx, main=False)), ctx.settings
