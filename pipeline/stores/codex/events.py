"""Which lines repeat which (specs/codex.md §1.5, §3): events beside the items they copy.

``user_message``, ``agent_message`` and ``agent_reasoning`` events repeat the text
of a ``response_item`` written within a millisecond (a prompt's item without the tags
its images are wrapped in); the item is canonical and the
event becomes a member of its entry.  An event with no such item (the Desktop
build writes prompts only as events) stands in for it.  ``*_end`` events carry a
tool call's exit code, diff and duration: they become members of the call's
output.  A user item is a typed prompt when its ``user_message`` event says so;
contextual ones (environment, ``AGENTS.md``, instructions, shell notices) are
context.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .rollouts import Line, Rollout

JSON = Any
#: user items that are context the harness adds, never typed by the user [uncertain list]
CONTEXT_MARKS = (
    "<environment_context>",
    "# AGENTS.md instructions",
    "<user_instructions>",
    "<user_shell_command>",
    "<turn_aborted>",
    "<skill>",
    "<subagent_notification>",
)
#: event type -> (line kind of the item it repeats, role)
REPEATS = {
    "user_message": ("response_item/message", "user"),
    "agent_message": ("response_item/message", "assistant"),
    "agent_reasoning": ("response_item/reasoning", ""),
}
#: lines an event's item is never looked for beyond
_BOUNDARIES = frozenset(
    {
        "event_msg/task_started",
        "event_msg/task_complete",
        "event_msg/turn_aborted",
        "event_msg/thread_rolled_back",
        "session_meta",
        "compacted",
    }
)
#: a prompt's event may come before the ``task_started`` of the turn its item opens (0.146)
_PROMPT_BOUNDARIES = _BOUNDARIES - {"event_msg/task_started"}
_REACH = 24


def is_image_tag(text: str) -> bool:
    """The text parts Codex wraps a prompt's image in (``<image>`` or ``<image name=[Image
    #1]>`` before it, ``</image>`` after: ``codex-rs/protocol/src/models.rs``); its user
    message event leaves them out."""
    return text in ("<image>", "</image>") or (
        text.startswith("<image name=") and text.endswith(">")
    )


def parts_text(content: JSON, kinds: tuple[str, ...]) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "".join(
        str(p.get("text") or "")
        for p in content
        if isinstance(p, dict) and p.get("type") in kinds and not is_image_tag(str(p.get("text")))
    )


def item_text(payload: JSON) -> str:
    """The text an event would repeat of a message or reasoning item."""
    if not isinstance(payload, dict):
        return ""
    if payload.get("type") == "reasoning":
        return parts_text(payload.get("summary"), ("summary_text",)) or parts_text(
            payload.get("content"), ("reasoning_text", "text")
        )
    return parts_text(payload.get("content"), ("input_text", "output_text", "text"))


def event_text(payload: JSON) -> str:
    if not isinstance(payload, dict):
        return ""
    return str(
        payload.get("text")
        if payload.get("type") == "agent_reasoning"
        else payload.get("message") or ""
    )


def _role(line: Line) -> str:
    return str(line.payload.get("role") or "") if isinstance(line.payload, dict) else ""


@dataclass
class Duplicates:
    """Of one rollout: the events that repeat an item, by key, and what each item gets."""

    repeated: dict[str, str] = field(default_factory=dict)  # event key -> item key
    events: dict[str, list[JSON]] = field(default_factory=dict)  # item key -> event payloads
    ends: dict[str, list[JSON]] = field(default_factory=dict)  # output key -> *_end payloads
    prompts: set[str] = field(default_factory=set)  # user item keys a user_message names
    has_user_events: bool = False


def duplicates(r: Rollout) -> Duplicates:
    """Pair each repeating event with its item, and each ``*_end`` event with its output."""
    out = Duplicates()
    lines = r.lines
    taken: set[int] = set()
    outputs: dict[str, int] = {}
    for i, line in enumerate(lines):
        if line.kind in (
            "response_item/function_call_output",
            "response_item/custom_tool_call_output",
        ):
            outputs.setdefault(str(line.payload.get("call_id") or ""), i)
    for i, line in enumerate(lines):
        if line.type != "event_msg" or not isinstance(line.payload, dict):
            continue
        etype = str(line.payload.get("type") or "")
        if etype in REPEATS:
            out.has_user_events |= etype == "user_message"
            j = _match(lines, i, REPEATS[etype], event_text(line.payload), taken)
            if j is not None:
                taken.add(j)
                out.repeated[line.key] = lines[j].key
                out.events.setdefault(lines[j].key, []).append(line.payload)
                if etype == "user_message":
                    out.prompts.add(lines[j].key)
        elif etype.endswith("_end") and str(line.payload.get("call_id") or "") in outputs:
            j = outputs[str(line.payload["call_id"])]
            out.repeated[line.key] = lines[j].key
            out.ends.setdefault(lines[j].key, []).append(line.payload)
    return out


def _match(
    lines: list[Line], i: int, want: tuple[str, str], text: str, taken: set[int]
) -> int | None:
    """The nearest unmatched item of kind ``want`` with ``text``, in ``i``'s turn."""
    kind, role = want
    stops = _PROMPT_BOUNDARIES if role == "user" else _BOUNDARIES
    for step in (1, -1):
        j = i + step
        while 0 <= j < len(lines) and abs(j - i) <= _REACH and lines[j].kind not in stops:
            line = lines[j]
            if (
                j not in taken
                and line.kind == kind
                and (not role or _role(line) == role)
                and item_text(line.payload) == text
            ):
                return j
            j += step
    return None


def is_context(payload: JSON) -> bool:
    """A user item the harness added (environment, instructions, notices)."""
    return item_text(payload).lstrip().startswith(CONTEXT_MARKS)


def is_prompt(line: Line, dups: Duplicates) -> bool:
    """What the user typed: a user item (not context; named by a ``user_message`` when the
    file has those), or a ``user_message`` with no item."""
    if line.kind == "event_msg/user_message":
        return line.key not in dups.repeated
    if line.kind != "response_item/message" or _role(line) != "user":
        return False
    if is_context(line.payload):
        return False
    return line.key in dups.prompts or not dups.has_user_events
