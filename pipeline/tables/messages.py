"""Chat messages in TRL's conversational shape, from ATIF steps (DESIGN §5, ``messages``).

Each ATIF step stands for one or more messages: an agent step is an
assistant message (tool calls in the OpenAI shape) followed by one tool
message per observation result, or none when the agent never sent it to the
model again (``not_resent``); other steps are user or system messages.
Messages carry the entry id their step is anchored at, so the pairs can
cut a trajectory at a fork.
"""

from __future__ import annotations

from typing import Any

from trajset.schemas.context import Settings
from trajset.schemas.records import Anchored, ForkPrompt, Trajectory
from trajset.schemas.session import Session

from ..atif import spill_media, to_atif, tool_definition
from ..atif.media import SpillError
from ..errors import ContextError
from ..jsonio import dumps_compact
from ..tree.context import build_context

JSON = Any


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


def _tool_calls(calls: list[JSON]) -> list[JSON] | None:
    """ATIF tool calls in the OpenAI shape."""
    return [
        {
            "id": c["tool_call_id"],
            "type": "function",
            "function": {"name": c["function_name"], "arguments": dumps_compact(c["arguments"])},
        }
        for c in calls
    ] or None


def _agent_messages(step: dict[str, JSON], extra: dict[str, JSON]) -> list[dict[str, JSON]]:
    """An agent step's assistant message and a tool message per observation result."""
    calls = step.get("tool_calls") or []
    names = {c["tool_call_id"]: c["function_name"] for c in calls}
    # the model's own answer: not a copied context, not a call that made no answer, not
    # a response that did not complete (failed, aborted, interrupted, cut short), and
    # not one with nothing readable in it (only encrypted reasoning, or an extension
    # item): what it holds is context at most
    trainable = (
        not step.get("is_copied_context")
        and step.get("llm_call_count") != 0
        and extra.get("status", "completed") == "completed"
        and bool(calls or text_of(step["message"]) or step.get("reasoning_content"))
    )
    said = _message(
        "assistant",
        text_of(step["message"]),
        tool_calls=_tool_calls(calls),
        reasoning=step.get("reasoning_content"),
        trainable=trainable,
    )
    results = (step.get("observation") or {}).get("results", [])
    return [said] + [
        _message(
            "tool",
            text_of(r.get("content")),
            tool_call_id=r["source_call_id"],
            name=names.get(r["source_call_id"]),
        )
        for r in results
        if r.get("source_call_id")
    ]


def step_messages(step: dict[str, JSON]) -> list[dict[str, JSON]]:
    """The chat messages one ATIF step stands for."""
    extra = step.get("extra") or {}
    results = (step.get("observation") or {}).get("results", [])
    source = step["source"]
    if source == "agent":
        # none for an answer the agent never sent to the model again: no context it saw
        return [] if "not_resent" in extra else _agent_messages(step, extra)
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


def document_messages(doc: dict[str, JSON], instructions: str | None) -> list[Anchored]:
    """(message, anchor entry id) for a whole document; instructions first as a system message."""
    out: list[Anchored] = []
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


def tools_source(tools: str) -> str:
    """``recorded`` when the store recorded function tools, else ``inferred`` (the shard
    writer fills them in from the store's calls: ``tool_schemas``)."""
    return "recorded" if tools != "[]" else "inferred"


def context_messages(
    session: Session, at: str, max_media_bytes: int | None = None
) -> tuple[list[Anchored], Settings, dict[str, bytes]] | None:
    """The context at entry ``at`` as anchored messages (through the ATIF mapping, as every
    document is), its settings and spilled media; None when the context does not build."""
    try:
        ctx = build_context(session.path(at))
        doc, media, _ = spill_media(  # the documents report what is omitted
            to_atif(Trajectory(session, at, ctx, main=False)), max_media_bytes
        )
    except (ContextError, SpillError):
        return None
    return document_messages(doc, ctx.settings.instructions), ctx.settings, media


def fork_prompt(
    session: Session, fork: str, max_media_bytes: int | None = None
) -> ForkPrompt | None:
    """The context at ``fork`` as messages, the tools in force and the media."""
    built = context_messages(session, fork, max_media_bytes)
    if built is None:
        return None
    messages, settings, media = built
    return ForkPrompt([m for m, _ in messages], function_tools(settings), media)
