"""Tool schemas inferred from the calls a store holds, for stores that record none.

Claude Code and other agents do not write their tool definitions into their
sessions, so a chat template would render calls to tools the model was never
shown.  For each agent name and version, every call observed in the store's
``sft`` rows (each model answer is trainable in exactly one row, so each call
is seen once) adds its argument names and JSON types (``call_shapes``); merged
over the store in unit order, they become one JSON Schema per tool
(``schemas``): a property's type is every type it was seen with, ``required``
the properties present in every call.  The shard writer puts them into the
``tools`` of each ``sft`` and ``trajectories`` row whose store recorded no
tools (``tools_source: inferred``).  Every call fits those by construction; a call
in a row with recorded tools is checked against them with ``jsonschema``
(``misfits``: a store's own definitions can be any JSON Schema), and the ones
that do not fit are counted in the manifest.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from ..jsonio import dumps_compact

#: agent name -> agent version -> tool -> {"calls": n, "properties": {name: {"types": [...], "n": k}}}
Shapes = dict[str, dict[str, dict[str, dict[str, Any]]]]

_TYPES = ((bool, "boolean"), (int, "integer"), (float, "number"), (str, "string"),
          (list, "array"), (dict, "object"))  # fmt: skip


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    return next(name for kind, name in _TYPES if isinstance(value, kind))


def call_shapes(rows: Iterable[dict[str, Any]]) -> Shapes:
    """The argument shapes of the calls in the rows' trainable assistant messages, per agent
    name, version and tool."""
    shapes: Shapes = {}
    for row in rows:
        agent = shapes.setdefault(row.get("agent_name") or "", {})
        version = agent.setdefault(row.get("agent_version") or "", {})
        for m in row["messages"]:
            if m.get("role") != "assistant" or not m.get("trainable"):
                continue
            for c in m.get("tool_calls") or []:
                add_call(version, c["function"]["name"], c["function"]["arguments"])
    return shapes


def add_call(tools: dict[str, dict[str, Any]], name: str, arguments: str) -> None:
    try:
        args = json.loads(arguments)
    except ValueError:
        args = None
    tool = tools.setdefault(name, {"calls": 0, "properties": {}})
    tool["calls"] += 1
    for key, value in (args if isinstance(args, dict) else {}).items():
        prop = tool["properties"].setdefault(key, {"types": [], "n": 0})
        prop["n"] += 1
        if json_type(value) not in prop["types"]:
            prop["types"].append(json_type(value))


def merge(into: Shapes, shapes: Shapes) -> None:
    """``shapes`` added to ``into`` (in unit order: the result is the same whoever ran what)."""
    for agent, versions in shapes.items():
        for version, tools in versions.items():
            mine = into.setdefault(agent, {}).setdefault(version, {})
            for name, tool in tools.items():
                t = mine.setdefault(name, {"calls": 0, "properties": {}})
                t["calls"] += tool["calls"]
                for key, prop in tool["properties"].items():
                    p = t["properties"].setdefault(key, {"types": [], "n": 0})
                    p["n"] += prop["n"]
                    p["types"] += [x for x in prop["types"] if x not in p["types"]]


def schemas(shapes: Shapes) -> dict[tuple[str, str], str]:
    """(agent name, version) -> the inferred tools as JSON text, in the ``tools`` shape."""
    out: dict[tuple[str, str], str] = {}
    for agent, versions in shapes.items():
        for version, tools in versions.items():
            defs = []
            for name in sorted(tools):
                tool = tools[name]
                props = {
                    key: {"type": p["types"][0] if len(p["types"]) == 1 else sorted(p["types"])}
                    for key, p in sorted(tool["properties"].items())
                }
                required = [
                    k for k, p in sorted(tool["properties"].items()) if p["n"] == tool["calls"]
                ]
                parameters = {"type": "object", "properties": props, "required": required}
                fn = {"description": "", "name": name, "parameters": parameters}
                defs.append({"function": fn, "type": "function"})
            out[(agent, version)] = dumps_compact(defs)
    return out


#: the manifest counts of calls that do not fit their recorded tools, by reason
MISFITS = ("tool_calls_unknown_tool", "tool_calls_outside_schema", "tool_calls_schema_invalid")


@lru_cache(maxsize=64)
def _validators(tools: str) -> dict[str, Any]:
    """Tool name -> a validator of its parameters (``None``: the schema itself is invalid)."""
    from jsonschema import exceptions, validators

    out: dict[str, Any] = {}
    for t in json.loads(tools):
        fn = t.get("function") or {}
        schema = fn.get("parameters") or {}
        cls = validators.validator_for(schema)
        try:
            cls.check_schema(schema)
            out[str(fn.get("name"))] = cls(schema)
        except exceptions.SchemaError:
            out[str(fn.get("name"))] = None
    return out


def misfits(rows: Iterable[dict[str, Any]]) -> Counter[str]:
    """The calls in the rows' trainable answers that do not fit their row's recorded tools,
    by reason: ``tool_calls_unknown_tool`` (no tool of that name), ``tool_calls_outside_schema``
    (arguments that are not JSON or do not validate), ``tool_calls_schema_invalid`` (the
    recorded schema is not a valid JSON Schema)."""
    out: Counter[str] = Counter(dict.fromkeys(MISFITS, 0))  # zeros too: the manifest says so
    for row in rows:
        if row.get("tools_source") != "recorded":
            continue
        calls = [
            c["function"]
            for m in row["messages"]
            if m.get("role") == "assistant" and m.get("trainable")
            for c in m.get("tool_calls") or []
        ]
        if not calls:
            continue
        checks = _validators(row["tools"])
        for fn in calls:
            if fn["name"] not in checks:
                out["tool_calls_unknown_tool"] += 1
            elif checks[fn["name"]] is None:
                out["tool_calls_schema_invalid"] += 1
            elif not _fits(checks[fn["name"]], fn["arguments"]):
                out["tool_calls_outside_schema"] += 1
    return out


def _fits(validator: Any, arguments: str) -> bool:
    try:
        return bool(validator.is_valid(json.loads(arguments)))
    except ValueError:
        return False
