"""``environment_v1``: drop environment snapshots and working directories.

Tree-level form of the reference ``Environment`` redactor: ``env`` entries
keep only their envelope (so the tree is intact) and the header loses
``cwd``, so neither reaches ``extra.environment`` nor ``agentsession.cwd``.
"""

from __future__ import annotations

from typing import Any

ENVELOPE = ("type", "id", "parent", "ts")


def strip_environment(
    header: dict[str, Any], entries: list[dict[str, Any]]
) -> tuple[dict[str, Any], list[dict[str, Any]], int]:
    """(header, entries, number of snapshots dropped)."""
    dropped = 0
    if "cwd" in header:
        header = {k: v for k, v in header.items() if k != "cwd"}
        dropped += 1
    out = []
    for raw in entries:
        if raw.get("type") == "env" and len(raw) > len(ENVELOPE):
            raw = {k: raw[k] for k in ENVELOPE if k in raw}
            dropped += 1
        out.append(raw)
    return header, out, dropped


def strip_environment_doc(doc: dict[str, Any]) -> int:
    """Document-level half (reference ``Environment``): drop ``extra.environment`` everywhere and root ``cwd``."""
    removed = 0
    extra = doc.get("extra") or {}
    removed += extra.pop("environment", None) is not None
    removed += (extra.get("agentsession") or {}).pop("cwd", None) is not None
    for step in doc.get("steps", []):
        removed += (step.get("extra") or {}).pop("environment", None) is not None
    for sub in doc.get("subagent_trajectories") or []:
        removed += strip_environment_doc(sub)
    return removed
