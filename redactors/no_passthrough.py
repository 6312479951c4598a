"""``no_passthrough_v1``: remove raw Open Responses items from a document.

Document-level (reference ``NoPassthrough``): deletes ``extra.openresponses``
from every step and observation result, recursively in embedded subagent
trajectories, keeping the root ``extra.openresponses.payload``.  ``items(doc)``
then fails by design; ``items_from(doc)`` still works.
"""

from __future__ import annotations

from typing import Any


def strip_raw_items(doc: dict[str, Any]) -> int:
    """Remove raw items in place; returns how many were removed."""
    removed = 0
    for step in doc.get("steps", []):
        extra = step.get("extra")
        if extra and extra.pop("openresponses", None) is not None:
            removed += 1
        for r in (step.get("observation") or {}).get("results", []):
            rextra = r.get("extra")
            if rextra and rextra.pop("openresponses", None) is not None:
                removed += 1
            if rextra == {}:
                del r["extra"]
        if extra == {}:
            del step["extra"]
    for sub in doc.get("subagent_trajectories") or []:
        removed += strip_raw_items(sub)
    return removed
