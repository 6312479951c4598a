"""One trial's branch as steps (specs/harbor-jobs.md, mapping table; §7).

A ``config`` entry with the agent's model and tools, then the steps of
``trajectory.json`` and of each continuation file: one linear run split in
pieces, so one branch, and one document holding every step of every file.
A continuation starts with copied context: what the branch said already is
not said twice; the rest (the handoff) is kept, marked as copied.  It is not
a compaction, which would start the exported document at the boundary and so
leave the earlier file's steps out of every document (the non-linear
summarisation of the same run keeps them all in one file, too).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from ...atif.items import CallIds
from ...jsonio import dumps_compact
from . import steps as step_mod
from .steps import Step
from .trials import Trial, obj

JSON = Any
#: document members without an entry of their own: kept on the trial's first entry
DOC_MEMBERS = ("schema_version", "session_id", "agent", "notes", "final_metrics",
               "continued_trajectory_ref", "extra")  # fmt: skip


def model_of(t: Trial) -> str:
    agent = obj(t.chain[0][1].get("agent")) if t.chain else {}
    if isinstance(agent.get("model_name"), str) and agent["model_name"]:
        return str(agent["model_name"])
    info = obj(obj(obj(t.result).get("agent_info")).get("model_info"))
    name, provider = str(info.get("name") or ""), str(info.get("provider") or "")
    return f"{provider}/{name}" if provider and name else name


def config_step(t: Trial, ts: str) -> Step:
    """The model and tools of a trial's agent, as a ``config`` entry (shared when alike)."""
    agent = obj(t.chain[0][1].get("agent"))
    body: dict[str, JSON] = {"type": "config", "ts": ts}
    if model := model_of(t):
        body["model"] = model
    tools = [_tool(d) for d in agent.get("tool_definitions") or [] if isinstance(d, dict)]
    if tools:
        body["tools_added"] = tools
    if isinstance(agent.get("extra"), dict):
        body["harbor:agent_extra"] = agent["extra"]
    return Step("config", dumps_compact(body | {"ts": ""}), [body])


def _tool(d: JSON) -> JSON:
    """An ATIF (OpenAI-style) tool definition as an Open Responses function tool."""
    f = d.get("function") if isinstance(d.get("function"), dict) else d
    return {"type": "function", "name": str(f.get("name") or ""),
            "description": str(f.get("description") or ""), "parameters": f.get("parameters")}  # fmt: skip


def trial_steps(
    t: Trial, ts: str, session_of: step_mod.SessionOf, counts: Counter[str]
) -> list[Step]:
    """A trial's steps along its branch: its config, the main document, then each
    continuation after a ``harbor:continuation`` record.  A continuation's leading copied
    steps that the branch already said are not said again; the others (the handoff) are
    entries marked ``harbor:copied_context``."""
    ids, out, said = CallIds(), [config_step(t, ts)], set[str]()
    model = model_of(t)
    for n, (name, doc) in enumerate(t.chain):
        leading = n > 0  # still in a continuation's leading copied steps
        if leading:
            out.append(_continuation(n, name, doc, ts))
        file = str(t.path / "agent" / name)
        for step in doc["steps"]:
            if not isinstance(step, dict):
                counts["harbor/steps_not_objects"] += 1
                continue
            ts = step_mod.timestamp(step, ts)
            copied = leading and bool(step.get("is_copied_context"))
            leading = copied
            key = step_mod.said_key(step)
            if copied and key in said:
                counts["harbor/copied_steps_already_said"] += 1
                continue
            s = step_mod.convert(step, ids, ts, model, session_of, t.notes, copied, file)
            s.label = f"cont{n}-{s.label}" if n else s.label  # step ids restart in each file
            said.add(key)
            counts["harbor/subsession_links"] += s.links
            counts["harbor/observations_as_messages"] += s.observations
            out.append(s)
    return out


def _continuation(n: int, name: str, doc: JSON, ts: str) -> Step:
    """Where a continuation file starts: a record of its document's own members."""
    body = {"type": "custom", "ts": ts, "ns": "harbor:continuation", "data": doc_members(name, doc)}
    return Step(f"cont{n}", "", [body])


def doc_members(name: str, doc: JSON) -> dict[str, JSON]:
    return {"file": name, **{k: doc[k] for k in DOC_MEMBERS if k in doc}}
