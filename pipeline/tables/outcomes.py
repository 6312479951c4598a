"""``outcomes``: one row per outcome entry, with the exported trajectories it applies to."""

from __future__ import annotations

from collections import Counter

from trajset.schemas.records import SessionExport
from trajset.schemas.tables import OUTCOMES

from .base import Row, Table


def rows(export: SessionExport, stats: Counter[str]) -> list[Row]:
    """A row per outcome; with ``--where``, not one that judged only trajectories it left out."""
    kept = {et.trajectory.leaf_id for et in export.kept}
    stats["outcomes"] += len(export.source.outcomes)
    outcomes = export.source.outcomes
    if export.filtered_out:
        outcomes = [o for o in outcomes if not o.leaf_ids or kept.intersection(o.leaf_ids)]
        stats["outcomes_filtered_out"] += len(export.source.outcomes) - len(outcomes)
    return [
        {
            "session_id": export.session.id,
            "entry_id": o.entry_id,
            "kind": o.kind,
            "target": o.target,
            "score": o.score,
            "pass": o.passed,
            "label": o.label,
            "details": o.details,
            "leaf_ids": [leaf for leaf in o.leaf_ids if leaf in kept],
        }
        for o in outcomes
    ]


TABLE = Table(
    "outcomes",
    OUTCOMES,
    "one row per outcome entry, with the trajectories (`leaf_ids`) it applies to",
    rows,
    per="session",
)
