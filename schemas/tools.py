"""Open Responses tools and text formats in their request form (specs/agentsession.md §4.1, §4.3)."""

from __future__ import annotations

from typing import Any

JSON = Any


def tool_name(tool: JSON) -> str:
    """Name used by ``tools_added``/``tools_removed`` (§4.1 step 6)."""
    if isinstance(tool, dict) and isinstance(tool.get("name"), str):
        return tool["name"]
    return ""


def encode_tool(tool: JSON) -> JSON:
    """Request form of a tool: function tools typed, others verbatim."""
    if isinstance(tool, dict) and tool.get("type") == "function":
        out: dict[str, JSON] = {
            "type": "function",
            "name": tool.get("name") or "",
            "description": tool.get("description") or "",
            "parameters": tool.get("parameters"),
        }
        if tool.get("strict") is not None:
            out["strict"] = tool["strict"]
        return out
    return tool


def encode_text_format(fmt: JSON) -> JSON:
    if not isinstance(fmt, dict):
        return {"type": "text"}
    out: dict[str, JSON] = {"type": fmt.get("type") or ""}
    for key in ("name", "description"):
        if fmt.get(key):
            out[key] = fmt[key]
    if fmt.get("schema") is not None:
        out["schema"] = fmt["schema"]
    if fmt.get("strict") is not None:
        out["strict"] = fmt["strict"]
    return out
