"""Tool calls and tool definitions as the reference maps them (spec §7.3-§7.4)."""

from __future__ import annotations

from typing import Any

from ..jsonio import loads_as_written

JSON = Any


def parse_arguments(arguments: str) -> dict[str, JSON]:
    """Tool-call arguments as the reference parses them (§7.4), numbers as written."""
    if not arguments or not arguments.strip():
        return {}
    try:
        value = loads_as_written(arguments)
    except ValueError:
        return {"_arguments": arguments}
    return value if isinstance(value, dict) else {"_arguments": arguments}


def tool_definition(tool: JSON) -> JSON:
    """An Open Responses function tool in the ``{"type": "function", "function": {...}}`` shape."""
    if isinstance(tool, dict) and tool.get("type") == "function":
        fn: dict[str, JSON] = {
            "description": tool.get("description") or "",
            "name": tool.get("name") or "",
        }
        if "parameters" in tool:
            fn["parameters"] = tool["parameters"]
        if tool.get("strict") is not None:
            fn["strict"] = tool["strict"]
        return {"function": fn, "type": "function"}
    return tool
