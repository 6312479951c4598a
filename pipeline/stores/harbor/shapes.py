"""The types the reader takes an ATIF document's steps in: a member of another type is left
out with a row, so one damaged step costs that member, not its trial's whole task (a step
whose ``tool_calls`` was ``5`` lost every trial of the task as one ``internal`` row)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from trajset.schemas.session import Issue

from ..jsonl import json_kind

JSON = Any
#: step member -> the types ATIF gives it
STEP: dict[str, tuple[type, ...]] = {
    "source": (str,), "message": (str, list), "reasoning_content": (str,),
    "tool_calls": (list,), "observation": (dict,), "metrics": (dict,), "extra": (dict,),
}  # fmt: skip
#: a call's and a result's members
CALL: dict[str, tuple[type, ...]] = {
    "tool_call_id": (str,), "function_name": (str,), "arguments": (dict,),
}  # fmt: skip
RESULT: dict[str, tuple[type, ...]] = {"source_call_id": (str,), "content": (str, list)}


def checked(doc: dict[str, JSON], path: Path, notes: list[Issue]) -> dict[str, JSON]:
    """``doc`` with each step member of another type (and each step that is no object) left
    out, a ``bad_field`` note each."""
    steps = []
    for i, step in enumerate(doc["steps"]):
        if not isinstance(step, dict):
            _note(notes, path, f"steps[{i}]", step, "an object", "the step is left out")
            continue
        step = dict(step)
        for key, kinds in STEP.items():
            if step.get(key) is not None and not isinstance(step[key], kinds):
                _note(notes, path, f"steps[{i}].{key}", step.pop(key), _names(kinds))
        obs = step.get("observation")
        if isinstance(obs, dict) and obs.get("results") is not None:
            if not isinstance(obs["results"], list):
                _note(notes, path, f"steps[{i}].observation.results", obs["results"], "an array")
                step["observation"] = {k: v for k, v in obs.items() if k != "results"}
            else:
                step["observation"] = {
                    **obs,
                    "results": _objects(
                        obs["results"], f"steps[{i}].observation.results", path, notes
                    ),
                }
        if isinstance(step.get("message"), list):
            step["message"] = _parts(step["message"], f"steps[{i}].message", path, notes)
        if isinstance(step.get("tool_calls"), list):
            step["tool_calls"] = _objects(step["tool_calls"], f"steps[{i}].tool_calls", path, notes)
        steps.append(step)
    return {**doc, "steps": steps}


def _objects(items: list[JSON], where: str, path: Path, notes: list[Issue]) -> list[JSON]:
    """The items that are objects, each member of another type left out (a call without a
    string id and name is no call: left out whole)."""
    members = CALL if where.endswith("tool_calls") else RESULT
    out = []
    for j, item in enumerate(items):
        if not isinstance(item, dict):
            _note(notes, path, f"{where}[{j}]", item, "an object")
            continue
        item = dict(item)
        missing = [
            k for k in ("tool_call_id", "function_name") if members is CALL and k not in item
        ]
        if missing:
            _note(notes, path, f"{where}[{j}]", item, f"a call with {' and '.join(missing)}",
                  "the call is left out")  # fmt: skip
            continue
        for key, kinds in members.items():
            if item.get(key) is not None and not isinstance(item[key], kinds):
                whole = key in ("tool_call_id", "function_name")
                done = "the call is left out" if whole else "left out"
                _note(notes, path, f"{where}[{j}].{key}", item.pop(key), _names(kinds), done)
                if whole:
                    break
        else:
            if isinstance(item.get("content"), list):
                item["content"] = _parts(item["content"], f"{where}[{j}].content", path, notes)
            out.append(item)
    return out


def _parts(parts: list[JSON], where: str, path: Path, notes: list[Issue]) -> list[JSON]:
    """The content parts that are objects."""
    for j, part in enumerate(parts):
        if not isinstance(part, dict):
            _note(notes, path, f"{where}[{j}]", part, "an object")
    return [p for p in parts if isinstance(p, dict)]


def _names(kinds: tuple[type, ...]) -> str:
    return " or ".join(json_kind(k()) for k in kinds)


def _note(
    notes: list[Issue], path: Path, where: str, value: JSON, wanted: str, done: str = "left out"
) -> None:
    notes.append(Issue("bad_field", None, f"{path.name}: {where} is {json_kind(value)}, not "
                       f"{wanted}; {done}", str(path)))  # fmt: skip
