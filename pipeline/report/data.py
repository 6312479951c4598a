"""What the report shows, read from an export folder: counts, distributions and session trees.

Each session's tree is rebuilt from the ``steps`` table: the steps of every
trajectory, in order, are a path from the session's start; trajectories
sharing a prefix share those nodes.  A node keeps a short view of its step
(the text cut by ``text.cut``), so a report of 10,000 trajectories
stays a file a browser opens at once; the ATIF documents hold the rest.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from ..outputs.scores import overall, task_scores
from ..tables import SCHEMAS
from . import pairs
from .text import cut

JSON = Any

TRAJECTORY_COLUMNS = [
    "session_id", "leaf_id", "is_main", "is_preferred", "abandoned_at", "n_steps",
    "outcome_score", "outcome_pass", "outcome_label", "total_prompt_tokens",
    "total_completion_tokens", "total_cost_usd", "model_name", "source_format", "atif_path",
]  # fmt: skip
STEP_COLUMNS = [
    "session_id", "leaf_id", "step_id", "entry_id", "source", "model_name", "message",
    "reasoning_content", "tool_calls", "observations", "prompt_tokens", "completion_tokens",
]  # fmt: skip


def read_table(folder: Path, name: str, columns: list[str] | None = None) -> pa.Table:
    """Every shard of table ``name`` (an empty table when the export has none)."""
    shards = sorted((folder / "data" / name).glob("*.parquet"))
    schema = SCHEMAS[name]
    if columns:
        schema = pa.schema([schema.field(c) for c in columns])
    if not shards:
        return schema.empty_table()
    return pa.concat_tables([pq.read_table(s, columns=columns).cast(schema) for s in shards])


def head_rows(folder: Path, name: str, columns: list[str], n: int) -> pa.Table:
    """The first ``n`` rows of table ``name`` in shard order, reading no shard past them."""
    schema = pa.schema([SCHEMAS[name].field(c) for c in columns])
    batches: list[pa.RecordBatch] = []
    for shard in sorted((folder / "data" / name).glob("*.parquet")):
        for batch in pq.ParquetFile(shard).iter_batches(batch_size=256, columns=columns):
            batches.append(batch.slice(0, n - sum(b.num_rows for b in batches)))
            if sum(b.num_rows for b in batches) >= n:
                return pa.Table.from_batches(batches).cast(schema)
    return pa.Table.from_batches(batches).cast(schema) if batches else schema.empty_table()


def row_count(folder: Path, name: str) -> int:
    """Rows of table ``name`` from the Parquet footers (``errors`` is ``errors.parquet``)."""
    files = (
        [folder / "errors.parquet"]
        if name == "errors"
        else sorted((folder / "data" / name).glob("*.parquet"))
    )
    return sum(pq.read_metadata(f).num_rows for f in files if f.exists())


@dataclass
class SessionTree:
    """One session: nodes (parent index, step view) and its trajectories' leaves."""

    session_id: str
    nodes: list[JSON] = field(default_factory=list)
    leaves: list[JSON] = field(default_factory=list)
    _index: dict[tuple[int, str], int] = field(default_factory=dict)

    def node(self, parent: int, key: str, step: JSON) -> int:
        found = self._index.get((parent, key))
        if found is None:
            found = self._index[(parent, key)] = len(self.nodes)
            self.nodes.append({"p": parent, **_step_view(step)})
        return found

    def forks(self) -> list[int]:
        """How many children each node with more than one has."""
        children = Counter(n["p"] for n in self.nodes)
        return [c for c in children.values() if c > 1]

    def to_json(self) -> JSON:
        scores = [lf["score"] for lf in self.leaves if lf["score"] is not None]
        return {
            "id": self.session_id,
            "nodes": self.nodes,
            "leaves": self.leaves,
            "forks": len(self.forks()),
            "best": max(scores) if scores else None,
        }


def _step_view(step: JSON) -> JSON:
    view: JSON = {"s": step["source"] or "", "t": cut(step["message"])}
    if step["reasoning_content"]:
        view["r"] = cut(step["reasoning_content"])
    calls = [c["function_name"] for c in step["tool_calls"] or []]
    if calls:
        view["c"] = calls
    outputs = [cut(o["content"], 160) for o in step["observations"] or []]
    if outputs:
        view["o"] = outputs
    tokens = (step["prompt_tokens"] or 0) + (step["completion_tokens"] or 0)
    if tokens:
        view["k"] = tokens
    if step["model_name"]:
        view["m"] = step["model_name"]
    view["e"] = step["entry_id"] or ""
    return view


def session_trees(trajectories: pa.Table, steps: pa.Table) -> list[SessionTree]:
    """Every session's tree, sessions and leaves in table order."""
    trees: dict[str, SessionTree] = {}
    for t in trajectories.to_pylist():
        tree = trees.setdefault(t["session_id"], SessionTree(t["session_id"]))
        tree.leaves.append(
            {
                "leaf": t["leaf_id"],
                "node": -1,
                "preferred": bool(t["is_preferred"]),
                "main": bool(t["is_main"]),
                "abandoned_at": t["abandoned_at"],
                "score": t["outcome_score"],
                "pass": t["outcome_pass"],
                "label": t["outcome_label"],
                "steps": t["n_steps"],
                "atif": t["atif_path"],
            }
        )
    leaf_of = {(sid, lf["leaf"]): lf for sid, t in trees.items() for lf in t.leaves}
    at: dict[tuple[str, str], int] = {}  # (session, leaf) -> the node its last step reached
    for step in steps.to_pylist():
        sid, leaf = step["session_id"], step["leaf_id"]
        owner = trees.get(sid)
        if owner is None:
            continue
        parent = at.get((sid, leaf), -1)
        key = step["entry_id"] or f"{leaf}#{step['step_id']}"
        at[(sid, leaf)] = owner.node(parent, key, step)
    for (sid, leaf), node in at.items():
        if (sid, leaf) in leaf_of:
            leaf_of[(sid, leaf)]["node"] = node
    return list(trees.values())


def report_data(folder: Path) -> JSON:
    """Everything the page draws, as JSON-ready values."""
    manifest_path = folder / "manifest.json"
    manifest: JSON = {}
    if manifest_path.exists():
        try:
            manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            manifest = {}
    trajectories = read_table(folder, "trajectories", TRAJECTORY_COLUMNS)
    steps = read_table(folder, "steps", STEP_COLUMNS)
    preferences = read_table(folder, "preferences", pairs.SUMMARY_COLUMNS)
    outcomes = read_table(folder, "outcomes", ["kind", "score"])
    trees = session_trees(trajectories, steps)
    traj = trajectories.to_pylist()
    counts = {name: row_count(folder, name) for name in SCHEMAS}
    prefs = preferences.select(["granularity", "kind", "margin"]).to_pylist()
    tasks = task_scores(folder)
    return {
        "title": folder.resolve().name,
        "counts": counts,
        "sessions_count": len(trees),
        "manifest": {
            "version": manifest.get("trajset_version"),
            "options": manifest.get("options", {}),
            "errors": manifest.get("errors"),
            "redaction": manifest.get("redaction", {}),
        },
        "distributions": {
            "outcome_score": [t["outcome_score"] for t in traj if t["outcome_score"] is not None],
            "steps": [t["n_steps"] for t in traj if t["n_steps"] is not None],
            "tokens": [
                (t["total_prompt_tokens"] or 0) + (t["total_completion_tokens"] or 0)
                for t in traj
                if t["total_prompt_tokens"] is not None or t["total_completion_tokens"] is not None
            ],
            "branching": [c for tree in trees for c in tree.forks()],
            "margin": [p["margin"] for p in prefs if p["margin"] is not None],
            "task_mean": [t.to_json()["mean"] for t in tasks],
            "tokenized": read_table(folder, "tokenized", ["n_tokens"]).column(0).to_pylist(),
        },
        "tasks": [t.to_json() for t in tasks],
        "tasks_pass_at_k": {str(k): v for k, v in overall(tasks).items()},
        "scored": {
            "trajectories": len(traj),
            "outcome_score": sum(t["outcome_score"] is not None for t in traj),
        },
        "pair_sides": pairs.scored_sides(preferences),
        "pairs_view": {
            "total": preferences.num_rows,
            "pairs": pairs.pair_views(head_rows(folder, "preferences", pairs.COLUMNS, pairs.SHOWN)),
        },
        "pairs": dict(Counter(f"{p['granularity']}/{p['kind']}" for p in prefs)),
        "outcome_kinds": dict(Counter(o["kind"] for o in outcomes.to_pylist())),
        "sessions": [t.to_json() for t in trees],
    }
