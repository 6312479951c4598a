"""Trajectory -> ATIF v1.8 document, the reference mapping (spec §7.3-§7.7).

``to_atif`` walks the compacted context of one trajectory (``walker.py``),
then assembles the document: the agent, the root extras (session facts,
fork facts, environment, calls, leftover records), links and embedded
subsessions, final metrics, and the reference member order.  Raw Open
Responses items ride in the extras, so ``items(doc)`` rebuilds them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from trajset.schemas.context import Settings
from trajset.schemas.entries import ConfigEntry
from trajset.schemas.records import Trajectory
from trajset.schemas.session import FORMAT, Header, Session

from ..tree.policies import Policy
from ..tree.trajectories import main_trajectory, trajectories
from .links import resolve_links
from .records import sorted_members
from .tools import tool_definition
from .walker import Walk, walk

JSON = Any

DOC_ORDER = (
    "schema_version",
    "session_id",
    "trajectory_id",
    "agent",
    "steps",
    "notes",
    "final_metrics",
    "continued_trajectory_ref",
    "extra",
    "subagent_trajectories",
)
STEP_ORDER = (
    "step_id",
    "timestamp",
    "source",
    "model_name",
    "reasoning_effort",
    "message",
    "reasoning_content",
    "tool_calls",
    "observation",
    "metrics",
    "is_copied_context",
    "llm_call_count",
    "extra",
)
RESULT_ORDER = ("source_call_id", "content", "subagent_trajectory_ref", "extra")
SKIP_FOR_AGENT_SETTINGS = frozenset(
    {"compaction", "env", "info", "label", "custom", "run", "dispatch", "decision"}
)


@dataclass(frozen=True)
class AtifOptions:
    """The reference ``Options`` (spec §7.8); ``subsessions`` are the linked sessions by id."""

    agent_name: str = ""
    agent_version: str = ""
    notes: str = ""
    cost: Callable[[str, JSON], float | None] | None = None
    subsessions: Mapping[str, Session] = field(default_factory=dict)
    preferences: Sequence[Policy] = ()
    embedding: frozenset[str] = frozenset()  # sessions being embedded up the chain
    #: (session id, embedding) -> its main document: converted once per parent session, not
    #: once per parent trajectory (shared, as raw items are: ``media.spill_media`` copies)
    embedded: dict[tuple[str, frozenset[str]], JSON] = field(
        default_factory=dict, compare=False, hash=False
    )


def _ordered(d: dict[str, JSON], order: Sequence[str]) -> dict[str, JSON]:
    return {k: d[k] for k in order if k in d}


def agent(traj: Trajectory, options: AtifOptions) -> dict[str, JSON]:
    """Name, version, and the model and tools of the settings before the first step."""
    harness = traj.session.header.harness
    if options.agent_name:
        name, version = options.agent_name, options.agent_version or FORMAT
    else:
        name = (harness.name if harness else None) or "agentsession"
        version = options.agent_version or (harness.version if harness else None) or FORMAT
    checkpoint = traj.context.checkpoint
    settings = checkpoint.copy() if checkpoint else Settings()
    for e in traj.context.entries:
        if isinstance(e.body, ConfigEntry):
            settings = settings.apply(e.body)
        elif e.type not in SKIP_FOR_AGENT_SETTINGS:
            break
    out: dict[str, JSON] = {"name": name, "version": version}
    if settings.model:
        out["model_name"] = settings.model
    if settings.tools:
        out["tool_definitions"] = [tool_definition(t) for t in settings.tools]
    if extra := agent_extra(traj.session.header):
        out["extra"] = extra
    return out


def agent_extra(header: Header) -> dict[str, JSON]:
    """ATIF ``agent.extra`` from the header's ``<ns>:agent`` objects, under ``<ns>``: what a
    store records of the agent itself (a Claude Code subagent's type and task)."""
    found = (header.model_extra or {}).items()
    return {
        k[: -len(":agent")]: v
        for k, v in sorted(found)
        if k.endswith(":agent") and isinstance(v, dict)
    }


def _session_facts(traj: Trajectory) -> dict[str, JSON]:
    header, session = traj.session.header, traj.session
    facts: dict[str, JSON] = {"format": header.format, "leaf": traj.leaf_id}
    for key, value in (
        ("cwd", header.cwd),
        ("parent_session", header.parent_session),
        ("spawned_by", header.spawned_by),
    ):
        if value:
            facts[key] = value
    if header.records:
        facts["records"] = header.records
    if name := session.name():
        facts["name"] = name
    if labels := session.labels():
        facts["labels"] = sorted_members(labels)
    if traj.main:
        facts["main"] = True
    return sorted_members(facts)


def root_extra(w: Walk) -> dict[str, JSON]:
    """The document's ``extra``; also hands each call record to the step that made the call."""
    traj = w.traj
    extra: dict[str, JSON] = {
        "openresponses": {"payload": traj.session.header.payload},
        "agentsession": _session_facts(traj),
    }
    if traj.preferred_over:
        extra["preferred_over"] = list(traj.preferred_over)
    if traj.abandoned_at:
        extra["abandoned_at"] = traj.abandoned_at
    if w.root_env is not None:
        extra["environment"] = w.root_env
    root_calls = {cid: sorted_members(r) for cid, r in w.calls.items() if cid not in w.call_step}
    for cid, rec in w.calls.items():
        if cid in w.call_step:
            w.call_step[cid]["extra"].setdefault("calls", {})[cid] = sorted_members(rec)
    if root_calls:
        extra["calls"] = sorted_members(root_calls)
    extra.update(w.pending)
    return extra


def final_metrics(w: Walk) -> dict[str, JSON]:
    final: dict[str, JSON] = {
        "total_prompt_tokens": w.totals[0],
        "total_completion_tokens": w.totals[1],
        "total_cached_tokens": w.totals[2],
    }
    if w.cost is not None:
        final["total_cost_usd"] = w.cost
    final["total_steps"] = len(w.steps)
    if w.outcomes:
        final["extra"] = {"outcome": w.outcomes}
    return final


def _finished_steps(w: Walk) -> list[dict[str, JSON]]:
    out = []
    for s in w.steps:
        s["extra"] = sorted_members(s["extra"])
        if "observation" in s:
            results = s["observation"]["results"]
            s["observation"]["results"] = [_ordered(r, RESULT_ORDER) for r in results]
        out.append(_ordered(s, STEP_ORDER))
    return out


def to_atif(traj: Trajectory, options: AtifOptions | None = None) -> dict[str, JSON]:
    """The ATIF v1.8 document of one trajectory (not yet validated)."""
    options = options or AtifOptions()
    w = walk(traj, options.cost)
    agent_ = agent(traj, options)
    extra = root_extra(w)
    embedded = resolve_links(w, extra, lambda child: main_document(child, options))
    doc: dict[str, JSON] = {
        "schema_version": "ATIF-v1.8",
        "session_id": traj.session.id,
        "trajectory_id": traj.leaf_id,
        "agent": agent_,
        "steps": _finished_steps(w),
    }
    if options.notes:
        doc["notes"] = options.notes
    doc["final_metrics"] = final_metrics(w)
    doc["extra"] = sorted_members(extra)
    if embedded:
        doc["subagent_trajectories"] = embedded
    return doc


def main_document(session_id: str, options: AtifOptions) -> dict[str, JSON] | None:
    """The main document of a linked subsession, converted with the same options minus notes."""
    child = options.subsessions.get(session_id)
    if child is None or session_id in options.embedding:
        return None
    key = (session_id, options.embedding)
    if key not in options.embedded:
        traj = main_trajectory(child, options.preferences)
        doc = None
        if traj is not None:
            doc = to_atif(
                traj, replace(options, notes="", embedding=options.embedding | {session_id})
            )
        # a trajectory without steps is not a valid document
        options.embedded[key] = doc if doc is not None and doc["steps"] else None
    return options.embedded[key]


def session_documents(session: Session, options: AtifOptions) -> list[dict[str, JSON] | Exception]:
    """Every trajectory of ``session`` as a document (or the error for that leaf)."""
    return [
        t if isinstance(t, Exception) else to_atif(t, options)
        for t in trajectories(session, options.preferences)
    ]
