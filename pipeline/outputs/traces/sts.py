"""A session's main trajectory in the Session Trace Simple Format (``schemas/sts.py``).

Built from the session's main ATIF document, which is redacted already: a header line
(the store kind as ``harness``, the session id, its title, and ``trajset``), then one
message per step and one ``tool`` message per observation result, in order.  Copied
context (a compacted document's earlier steps) is left out: the viewer shows what
happened once.  Text parts are joined; an image or audio part becomes a short
``[image: <file>]`` note, as the format's content is text.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime
from typing import Any

JSON = Any
ROLES = {"user": "user", "agent": "assistant", "system": "system"}


def text_of(content: JSON) -> str:
    """The text of an ATIF message or observation content: a string, or its parts joined."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return json.dumps(content, ensure_ascii=False)
    out = []
    for part in content:
        if not isinstance(part, dict):
            out.append(str(part))
        elif part.get("type") == "text":
            out.append(str(part.get("text") or ""))
        else:
            source = part.get("source")
            held: dict[str, JSON] = source if isinstance(source, dict) else {}
            where = held.get("path") or held.get("url") or held.get("media_type") or ""
            out.append(f"[{part.get('type') or 'part'}: {where}]" if where else "[media]")
    return "\n".join(out)


def epoch_ms(timestamp: JSON) -> int | None:
    if not isinstance(timestamp, str) or not timestamp:
        return None
    try:
        return int(datetime.fromisoformat(timestamp.replace("Z", "+00:00")).timestamp() * 1000)
    except ValueError:
        return None


def _call(call: dict[str, JSON]) -> dict[str, JSON]:
    arguments = call.get("arguments")
    text = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
    return {
        "id": str(call.get("tool_call_id") or ""),
        "function": {"name": str(call.get("function_name") or ""), "arguments": text},
    }


def _message(step: dict[str, JSON]) -> dict[str, JSON]:
    m: dict[str, JSON] = {
        "role": ROLES.get(str(step.get("source")), "system"),
        "content": text_of(step.get("message")),
    }
    if step.get("reasoning_content"):
        m["reasoningContent"] = str(step["reasoning_content"])
    if step.get("tool_calls"):
        m["toolCalls"] = [_call(c) for c in step["tool_calls"]]
    if (ms := epoch_ms(step.get("timestamp"))) is not None:
        m["timestamp"] = ms
    if step.get("model_name"):
        m["model"] = str(step["model_name"])
    return m


def sts_lines(doc: dict[str, JSON], harness: str, name: str | None, stamp: JSON) -> Iterator[JSON]:
    """The header and message lines (as values) of the document's trace."""
    header: dict[str, JSON] = {"type": "session", "harness": harness, "id": doc["session_id"]}
    if name:
        header["name"] = name
    yield {**header, "trajset": stamp}
    for step in doc.get("steps") or []:
        if step.get("is_copied_context"):
            continue
        message = _message(step)
        yield {"type": "message", "message": message}
        for result in (step.get("observation") or {}).get("results") or []:
            tool: dict[str, JSON] = {"role": "tool", "content": text_of(result.get("content"))}
            if result.get("source_call_id"):
                tool["toolCallId"] = str(result["source_call_id"])
            if "timestamp" in message:
                tool["timestamp"] = message["timestamp"]
            yield {"type": "message", "message": tool}
