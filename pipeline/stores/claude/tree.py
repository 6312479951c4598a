"""The tree of one Claude Code session: compactions joined, artifacts linearised, real forks kept.

Claude Code links entries by ``uuid``/``parentUuid``.  A ``/rewind`` or an
edited prompt appends a new user entry under an earlier node, unmarked: a real
fork.  Other multi-child nodes are recording artifacts (parallel tool calls,
progress and hook children, an assistant continuation beside a lagging tool
result, compaction replays, ``/clear`` siblings under a command caveat) and
are linearised: a later child hangs under the entry written just before it in
that part of the tree.  A node is a real fork only when at least two of its
children begin branches whose first message is a typed user prompt, written
at different times (specs/claude-code.md, mapping 3).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

from trajset.schemas.session import Issue

from ..jsonl import json_kind
from ..uuid_tree import Record, acyclic, children, first_of_each, linearise, parents_first

JSON = Any
STRUCTURAL = frozenset({"progress", "attachment", "system", "queue-operation", "permission-mode"})
COMMAND_MARKS = (
    "<command-name>",
    "<local-command",
    "<bash-input>",
    "<bash-stdout>",
    "<command-message>",
)


def user_text(r: Record) -> str | None:
    """The typed text of a user prompt; None for tool results, meta and command entries."""
    if r.kind != "user" or r.raw.get("isMeta") or r.raw.get("isCompactSummary"):
        return None
    content = (r.raw.get("message") or {}).get("content")
    if isinstance(content, list):
        if any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content):
            return None
        content = "".join(
            str(b.get("text") or "")
            for b in content
            if isinstance(b, dict) and b.get("type") == "text"
        )
    if not isinstance(content, str) or not content.strip():
        return None
    return None if content.lstrip().startswith(COMMAND_MARKS) else content


@dataclass
class Tree:
    records: list[Record]  # chain entries, parents first
    parent: dict[str, str | None]
    compactions: dict[str, tuple[str, Record | None]] = field(
        default_factory=dict
    )  # id -> (first_kept, summary)
    forks: list[str] = field(default_factory=list)
    artifacts: Counter[str] = field(default_factory=Counter)
    issues: list[Issue] = field(default_factory=list)  # links it could not keep


def _compactions(
    chain: dict[str, Record], parent: dict[str, str | None]
) -> dict[str, tuple[str, Record | None]]:
    """Each boundary joined to its logical parent, its summary consumed, the preserved tail relinked."""
    out: dict[str, tuple[str, Record | None]] = {}
    for cb in [
        r
        for r in chain.values()
        if r.kind == "system" and r.raw.get("subtype") == "compact_boundary"
    ]:
        logical = cb.raw.get("logicalParentUuid")
        parent[cb.uuid] = logical if logical in chain else None
        summary = next(
            (
                r
                for r in chain.values()
                if parent.get(r.uuid) == cb.uuid and r.raw.get("isCompactSummary")
            ),
            None,
        )
        kept = ((cb.raw.get("compactMetadata") or {}).get("preservedMessages") or {}).get(
            "uuids"
        ) or []
        kept = [u for u in kept if u in chain]
        for prev, cur in pairwise(kept):
            parent[cur] = prev
        tail = {summary.uuid} if summary else set()
        tail |= {kept[-1]} if kept else set()
        for r in chain.values():
            if (
                parent.get(r.uuid) in tail
                and r.order > cb.order
                and r.uuid not in kept
                and r is not summary
            ):
                parent[r.uuid] = cb.uuid
        if summary is not None:
            parent.pop(summary.uuid, None)
        out[cb.uuid] = (kept[0] if kept else str(parent[cb.uuid] or ""), summary)
    return out


def _first_message(
    uuid: str, children: dict[str, list[str]], chain: dict[str, Record]
) -> Record | None:
    cur: str | None = uuid
    while cur is not None:
        r = chain[cur]
        if r.kind in ("user", "assistant"):
            return r
        kids = children.get(cur) or []
        cur = kids[0] if kids else None
    return None


def _artifact_kind(kids: list[Record]) -> str:
    kinds = {k.kind for k in kids}
    if kinds & STRUCTURAL:
        return "structural_child"
    if len({k.ts for k in kids}) == 1:
        return "same_time_replay"
    if "assistant" in kinds and "user" in kinds:
        return "continuation_beside_tool_result"
    return "parallel_" + "_".join(sorted(kinds))


def _is_fork(kids: list[str], children: dict[str, list[str]], chain: dict[str, Record]) -> bool:
    firsts = [_first_message(k, children, chain) for k in kids]
    prompts = [m for m in firsts if m is not None and user_text(m) is not None]
    return len(prompts) >= 2 and len({m.ts for m in prompts}) >= 2


def build(records: list[Record]) -> Tree:
    """The session's tree from its chain entries (the first of a repeated uuid kept)."""
    chain = first_of_each(records)
    parent: dict[str, str | None] = {
        u: (r.raw.get("parentUuid") if r.raw.get("parentUuid") in chain else None)
        for u, r in chain.items()
    }
    compactions = _compactions(chain, parent)
    for _, summary in compactions.values():
        if summary is not None:
            chain.pop(summary.uuid, None)
    tree = Tree([], parent, compactions)
    for r in chain.values():
        if not isinstance(r.raw.get("parentUuid", ""), str | None):
            tree.issues.append(Issue("broken_link", r.line, f"uuid {r.uuid}: parentUuid is "
                                     f"{json_kind(r.raw['parentUuid'])}, not a uuid; it starts a "
                                     "tree of its own", r.file))  # fmt: skip
    acyclic(chain, parent, tree.issues)
    kids_of = children(chain, parent)
    for p in sorted(chain, key=lambda u: chain[u].order):
        kids = kids_of.get(p, [])
        if len(kids) < 2:
            continue
        if _is_fork(kids, kids_of, chain):
            tree.forks.append(p)
            continue
        tree.artifacts[_artifact_kind([chain[k] for k in kids])] += 1
        linearise(p, kids[1:], chain, parent)
        kids_of = children(chain, parent)
    tree.records = parents_first(chain, parent, kids_of)
    return tree
