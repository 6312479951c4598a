"""Codex records as Open Responses items and entry members (specs/codex.md, mapping).

Function calls are kept as they are; a ``custom_tool_call`` (freeform
``apply_patch``) becomes a function call whose arguments are ``{"input": ...}``,
a ``local_shell_call`` one named ``local_shell`` whose arguments are its action,
a ``tool_search_call`` (0.140+) one named ``tool_search`` whose arguments are its
``arguments`` and whose ``tool_search_output`` is the tools found, as JSON text.
A call's output gets the exit code that its ``*_end`` event, its
``exec_command`` header (``Process exited with code N``) or its custom output's
metadata says, as ``trajset:exit_code``.  Usage comes from ``last_token_usage``.
"""

from __future__ import annotations

import json
import re
from typing import Any

from trajset.schemas.entries import TOOL_EXIT_CODE, TOOL_FAILED
from trajset.schemas.session import Issue

from ...jsonio import dumps_compact
from .. import numbers
from ..numbers import counts

JSON = Any
_EXIT = re.compile(r"^Process exited with code (-?\d+)\s*$", re.MULTILINE)
#: members of an ``exec_command_end`` that repeat the output the model saw
_REPEATED_OUTPUT = ("aggregated_output", "formatted_output")


def call_item(payload: dict[str, JSON]) -> tuple[dict[str, JSON], dict[str, JSON]]:
    """(function_call item, extra members) of a function, custom or local-shell call."""
    kind = payload.get("type")
    if kind == "function_call":
        return payload, {}
    call_id = str(payload.get("call_id") or payload.get("id") or "")
    if kind == "tool_search_call":  # 0.140+: the model searching the tools it may call
        item = {
            "type": "function_call",
            "call_id": call_id,
            "name": "tool_search",
            "arguments": dumps_compact(payload.get("arguments") or {}),
        }
        extra: dict[str, JSON] = {"codex:tool_kind": "tool_search"}
    elif kind == "custom_tool_call":
        item = {
            "type": "function_call",
            "call_id": call_id,
            "name": str(payload.get("name") or ""),
            "arguments": json.dumps({"input": payload.get("input")}, ensure_ascii=False),
        }
        extra = {"codex:tool_kind": "custom"}
    else:  # local_shell_call
        item = {
            "type": "function_call",
            "call_id": call_id,
            "name": "local_shell",
            "arguments": json.dumps(payload.get("action"), ensure_ascii=False),
        }
        extra = {"codex:tool_kind": "local_shell"}
    used: tuple[str, ...] = ("type", "call_id", "name", "input", "action")
    used += ("arguments",) if kind == "tool_search_call" else ()
    rest = {k: v for k, v in payload.items() if k not in used}
    if rest:
        extra["codex:call"] = rest
    return item, extra


def output_item(
    payload: dict[str, JSON], ends: list[JSON]
) -> tuple[dict[str, JSON], dict[str, JSON]]:
    """(function_call_output item, extra members) of a call's output and its ``*_end`` events."""
    output = payload.get("output")
    if payload.get("type") == "tool_search_output":  # the tools found, as the model reads them
        output = dumps_compact(payload.get("tools") or [])
    if isinstance(output, dict):  # {content, success} in some builds
        output = (
            output.get("content")
            if isinstance(output.get("content"), str | list)
            else dumps_compact(output)
        )
    if not isinstance(output, str | list):
        output = "" if output is None else dumps_compact(output)
    item = {
        "type": "function_call_output",
        "call_id": str(payload.get("call_id") or ""),
        "output": output,
    }
    extra: dict[str, JSON] = {}
    if payload.get("type") == "custom_tool_call_output":
        extra["codex:tool_kind"] = "custom"
    elif payload.get("type") == "tool_search_output":
        extra["codex:tool_kind"] = "tool_search"
        rest = {k: v for k, v in payload.items() if k not in ("type", "call_id", "tools")}
        if rest:
            extra["codex:output"] = rest
    text = output if isinstance(output, str) else ""
    code = _exit_code(payload, text)
    for end in ends:
        etype = str(end.get("type") or "end")
        kept = {k: v for k, v in end.items() if not (k in _REPEATED_OUTPUT and _repeats(v, text))}
        extra[f"codex:{etype}"] = kept
        if isinstance(end.get("exit_code"), int) and not isinstance(end.get("exit_code"), bool):
            code = end["exit_code"]
        result = end.get("result")
        if (
            end.get("success") is False
            or end.get("status") in ("failed", "declined")
            or (isinstance(result, dict) and "Err" in result)  # mcp_tool_call_end
        ):
            extra[TOOL_FAILED] = True
    if code is not None:
        extra[TOOL_EXIT_CODE] = code
    return item, extra


def _repeats(value: JSON, text: str) -> bool:
    return isinstance(value, str) and bool(value.strip()) and value.strip() in text


def _exit_code(payload: dict[str, JSON], text: str) -> int | None:
    """The exit code an ``exec_command`` header or a custom output's metadata states."""
    if payload.get("type") == "custom_tool_call_output":
        try:
            meta = json.loads(text).get("metadata")
        except (ValueError, AttributeError):
            meta = None
        code = meta.get("exit_code") if isinstance(meta, dict) else None
        return code if isinstance(code, int) and not isinstance(code, bool) else None
    m = _EXIT.search(text[:1000])
    return int(m.group(1)) if m else None


def usage(notes: list[Issue], info: JSON, source: str, line: int) -> dict[str, JSON] | None:
    """A model call's usage from a ``token_count`` event's ``last_token_usage`` (None when it
    has none, or a count there is out of range: noted in ``notes``)."""
    last = info.get("last_token_usage") if isinstance(info, dict) else None
    if not isinstance(last, dict):
        return None
    keys = ("input_tokens", "output_tokens", "cached_input_tokens", "reasoning_output_tokens",
            "total_tokens")  # fmt: skip
    got = counts(notes, last, keys, "payload.info.last_token_usage", source, line)
    if got is None:
        return None
    inp, out, cached, reasoning, total = got
    return numbers.usage(inp, out, cached, reasoning, total)


def text_message(role: str, text: str, images: JSON = None) -> dict[str, JSON]:
    """A message item from an event's text (and a ``user_message``'s data-URL images)."""
    kind = "output_text" if role == "assistant" else "input_text"
    part: dict[str, JSON] = {"type": kind, "text": text}
    if role == "assistant":
        part["annotations"] = []
    content: list[JSON] = [part] if text or not images else []
    for url in images if isinstance(images, list) else []:
        if isinstance(url, str) and url:
            content.append({"type": "input_image", "image_url": url, "detail": "auto"})
    return {"type": "message", "role": role, "content": content}


def reasoning_item(text: str) -> dict[str, JSON]:
    return {"type": "reasoning", "summary": [{"type": "summary_text", "text": text}]}


def reasoning_config(payload: dict[str, JSON]) -> dict[str, JSON] | None:
    """``reasoning{effort, summary}`` of a ``turn_context``, when it states them."""
    out = {k: payload[k] for k in ("effort", "summary") if isinstance(payload.get(k), str)}
    return out or None
