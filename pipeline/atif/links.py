"""Links and subsessions (spec §7.7): refs to linked sessions, embedding the ones that are known.

A ``subsession`` link becomes a ``subagent_trajectory_ref``; when the
subsession is among the sessions the unit brought along, its main
trajectory is converted and embedded in ``subagent_trajectories``.  A
session already being embedded up the chain is referred to, not embedded
again, so a link cycle ends.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from trajset.schemas.entries import LinkEntry
from trajset.schemas.session import Entry

from .names import document_name
from .records import sorted_members
from .state import Walk

JSON = Any
#: child session id -> its main document (None when it is unknown or has none)
Embed = Callable[[str], "dict[str, JSON] | None"]

REF_ORDER = ("trajectory_id", "session_id", "trajectory_path", "extra")


def _subagent_ref(e: Entry, child_id: str, embed: Embed, embedded: list[dict[str, JSON]]) -> JSON:
    ref: dict[str, JSON] = {"session_id": child_id}
    doc = embed(child_id)
    if doc is not None:
        doc["trajectory_id"] = f"{child_id}/{doc['trajectory_id']}"
        if all(d["trajectory_id"] != doc["trajectory_id"] for d in embedded):
            embedded.append(doc)
        ref["trajectory_id"] = doc["trajectory_id"]
    else:
        ref["trajectory_path"] = document_name(child_id, "", True)
    ref["extra"] = {"entry_id": e.id}
    return {k: ref[k] for k in REF_ORDER if k in ref}


def _attach(w: Walk, b: LinkEntry, ref: JSON) -> bool:
    """Put ``ref`` on the observation result of the link's call; False when no step made it."""
    step = w.call_step.get(b.call_id or "")
    if step is None:
        return False
    results = step.setdefault("observation", {"results": []})["results"]
    result = next((r for r in results if r.get("source_call_id") == b.call_id), None)
    if result is None:
        results.append({"source_call_id": b.call_id, "subagent_trajectory_ref": [ref]})
    else:
        result.setdefault("subagent_trajectory_ref", []).append(ref)
    return True


def resolve_links(w: Walk, extra: dict[str, JSON], embed: Embed) -> list[dict[str, JSON]]:
    """Place every link of the walk; returns the embedded subagent trajectories."""
    links: list[JSON] = []
    embedded: list[dict[str, JSON]] = []
    for e, b in w.links:
        rec: dict[str, JSON] = {"entry_id": e.id, "rel": b.rel, "session": b.session}
        if b.call_id:
            rec["call_id"] = b.call_id
        if b.rel != "subsession":
            links.append(rec)
            continue
        ref = _subagent_ref(e, b.session, embed, embedded)
        if not _attach(w, b, ref):
            rec["subagent_trajectory_ref"] = ref
            links.append(sorted_members(rec))
    if links:
        extra["links"] = links
    return embedded
