"""``trajectories``: one row per exported trajectory, SFT-ready (TRL conversational + tools)."""

from __future__ import annotations

from collections import Counter

from trajset.schemas.records import ExportedTrajectory, SessionExport
from trajset.schemas.tables import TRAINER_JSON, TRAJECTORIES

from ..jsonio import content_hash
from ..tree.outcomes import leaf_outcome
from .base import Row, Table
from .messages import function_tools, tools_source
from .quality import quality
from .usage import path_totals


def scalars(et: ExportedTrajectory, source: SessionExport) -> Row:
    """Every column but the heavy ones (messages, tools, hash): what ``--where`` filters on."""
    traj, doc = et.trajectory, et.document
    path = traj.session.path(traj.leaf_id)
    agent = doc["agent"]
    score, passed, label = leaf_outcome(traj.leaf_id, source.source.outcomes)
    return {
        "session_id": traj.session.id,
        "leaf_id": traj.leaf_id,
        "source_format": traj.session.source_format,
        "is_main": traj.main,
        "is_preferred": traj.is_preferred,
        "abandoned_at": traj.abandoned_at or None,
        "preferred_over": list(traj.preferred_over),
        "n_steps": len(doc["steps"]),
        "agent_name": agent.get("name"),
        "agent_version": agent.get("version"),
        "model_name": agent.get("model_name"),
        **path_totals(path),
        "outcome_score": score,
        "outcome_pass": passed,
        "outcome_label": label,
        "tools_source": tools_source(function_tools(traj.context.settings)),
        "atif_path": f"atif/{et.name}",
        **quality(path),
    }


def row(et: ExportedTrajectory, source: SessionExport) -> Row:
    messages = [m for m, _ in et.messages]
    tools = function_tools(et.trajectory.context.settings)
    return {
        **scalars(et, source),
        "messages": messages,
        "tools": tools,
        "content_hash": content_hash({"messages": messages, "tools": tools}),  # recorded tools
    }


def rows(export: SessionExport, stats: Counter[str]) -> list[Row]:
    out = [row(et, export) for et in export.kept]
    stats["trajectories"] += len(out)
    return out


TABLE = Table(
    "trajectories",
    TRAJECTORIES,
    "one row per root-to-leaf trajectory; `messages` is TRL's conversational format with tool calls (SFT)",
    rows,
    takes_inferred_tools=True,
    json_fields=TRAINER_JSON,
)
