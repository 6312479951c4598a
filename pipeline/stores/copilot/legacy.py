"""The OpenAI chat messages of a pre-0.0.342 Copilot CLI session (``chatMessages``, also in a
migrated session's ``session.import_legacy``) as entries (specs/copilot-cli.md §3).

A system message is the settings' instructions; each assistant message is one model call
(its text, then a function call per ``tool_calls`` entry, then a response with no usage: none
was recorded); a tool message is its call's output.  The display ``timeline`` is kept on
the header, never read as messages.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from trajset.schemas.openresponses import text_message

from .calls import typed

if TYPE_CHECKING:
    from .convert import Stream

JSON = Any


def chat_messages(s: Stream, messages: JSON, prefix: str, counts: Counter[str]) -> None:
    """Each message of ``messages`` as entries of ``s`` (ids ``<prefix>:m<n>``)."""
    for n, m in enumerate(messages if isinstance(messages, list) else []):
        eid = f"{prefix}:m{n}"
        role = m.get("role") if isinstance(m, dict) else None
        text = _text(m.get("content")) if isinstance(m, dict) else ""
        if role == "system":
            s.add("config", eid, None, instructions=text)
        elif role == "user":
            s.add("item", eid, None, item=text_message("user", text))
        elif role == "assistant":
            _assistant(s, m, eid)
        elif role == "tool":
            item = {"type": "function_call_output", "call_id": str(m.get("tool_call_id") or ""),
                    "output": text}  # fmt: skip
            s.add("item", eid, None, item=item)
        else:
            counts["legacy_messages_unknown"] += 1
            s.add("copilot:legacy_message", eid, None, record=m)


def _assistant(s: Stream, m: dict[str, JSON], eid: str) -> None:
    text, first = _text(m.get("content")), True
    if text:
        s.add("item", eid, None, item=text_message("assistant", text), response=eid)
        first = False
    for i, call in enumerate(typed(m.get("tool_calls"), list, [])):
        fn = call.get("function") if isinstance(call, dict) else None
        fn = fn if isinstance(fn, dict) else {}
        args = fn.get("arguments")
        item = {"type": "function_call", "call_id": str(call.get("id") or f"{eid}:call{i}"),
                "name": str(fn.get("name") or ""), "arguments": args if isinstance(args, str) else "{}"}  # fmt: skip
        s.add("item", eid if first else f"{eid}:call{i}", None, item=item, response=eid)
        first = False
    model = {"model": s.model} if s.model else {}
    s.add("response", f"{eid}:response", None, response_id=eid, status="completed", **model)


def _text(content: JSON) -> str:
    """A chat message's text: a string, or its parts' text."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text") or "") for p in content if isinstance(p, dict))
    return ""
