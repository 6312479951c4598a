"""The tree of one Qwen Code session: rewinds kept as forks, metadata leaves linearised,
failed attempts found (specs/qwen-code.md §3, §4).

Every record Qwen Code appends becomes the writer's tail, so telemetry, titles and slash
commands sit on the chain between messages.  A ``/rewind`` appends a ``system/rewind``
record under the record before the rewound prompt (``parentUuid: null`` for a rewind to
the first prompt: a second root); the abandoned records stay in the file.  A node is a
fork when at least two of its children head a branch: a rewind record, or a branch whose
first message is a typed prompt.  Other multi-child nodes are artifacts (the title
re-anchored off the chain every 32 KB, ``updateActiveTail: false``) and are linearised.

An assistant record the model never saw again is a failed attempt: one with neither
text nor a tool call (an empty or thought-only stream, retried), or one whose next
message below it is another assistant record (the retry of the same request).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from trajset.schemas.session import Issue

from ..jsonl import json_kind
from ..uuid_tree import Record, acyclic, children, first_of_each, linearise, parents_first

JSON = Any
#: the synthetic root every Qwen root hangs under (so a rewind to the first prompt forks)
ROOT = "config"


def parts(r: Record) -> list[dict[str, JSON]]:
    m = r.raw.get("message")
    got = m.get("parts") if isinstance(m, dict) else None
    return got if isinstance(got, list) else []


def subtype(r: Record) -> str:
    got = r.raw.get("subtype")
    return got if isinstance(got, str) else ""


def is_prompt(r: Record) -> bool:
    """A prompt the user typed: a ``user`` record of no subtype."""
    return r.kind == "user" and not subtype(r) and bool(parts(r))


def answers(r: Record) -> bool:
    """Whether an assistant record holds what the model said: visible text or a tool call."""
    return any(
        (isinstance(p.get("text"), str) and p["text"] and not p.get("thought"))
        or isinstance(p.get("functionCall"), dict)
        for p in parts(r)
    )


@dataclass
class Tree:
    records: list[Record]  # the session's records, parents first
    parent: dict[str, str | None]
    chain: dict[str, Record]  # uuid -> its record
    forks: list[str] = field(default_factory=list)  # uuids (ROOT for the roots)
    failed: set[str] = field(default_factory=set)  # failed attempts' uuids
    artifacts: Counter[str] = field(default_factory=Counter)
    issues: list[Issue] = field(default_factory=list)


def build(records: list[Record]) -> Tree:
    """The session's tree from its records (the first of a repeated uuid kept)."""
    chain = first_of_each(records)
    tree = Tree([], {u: _parent(r, chain) for u, r in chain.items()}, chain)
    for r in chain.values():
        _check_parent(r, chain, tree.issues)
    acyclic(chain, tree.parent, tree.issues)
    kids_of = children(chain, tree.parent)
    roots = [u for u in sorted(chain, key=lambda u: chain[u].order) if tree.parent[u] is None]
    if sum(_heads(k, kids_of, chain) for k in roots) >= 2:
        tree.forks.append(ROOT)
    for p in sorted(chain, key=lambda u: chain[u].order):
        kids = kids_of.get(p, [])
        if len(kids) < 2:
            continue
        heads = [k for k in kids if _heads(k, kids_of, chain)]
        fork = len(heads) >= 2
        moved = [k for k in kids if k not in heads] if fork else kids[1:]
        if moved:
            leaf = any(chain[k].kind == "system" and not kids_of.get(k) for k in kids)
            tree.artifacts["metadata_leaf" if leaf else "parallel_children"] += 1
        if fork or not _after_leaf(p, kids, chain, tree.parent, kids_of):
            linearise(p, moved, chain, tree.parent)
            fork = fork and not _first_below(p, moved, chain, tree.parent)
            kids_of = children(chain, tree.parent)
        if fork:
            tree.forks.append(p)
    tree.failed = {
        u for u, r in chain.items() if r.kind == "assistant" and _failed(u, kids_of, chain)
    }
    tree.records = parents_first(chain, tree.parent, kids_of)
    return tree


def _after_leaf(
    p: str,
    kids: list[str],
    chain: dict[str, Record],
    parent: dict[str, str | None],
    kids_of: dict[str, list[str]],
) -> bool:
    """``linearise`` for the common artifact, without walking the tree: a record written
    under a leaf's parent after the leaf (a title re-anchored off the chain, then the next
    record) hangs under the leaf.  Whether that was the case (and done)."""
    if len(kids) != 2 or kids_of.get(kids[0]) or chain[p].order > chain[kids[0]].order:
        return False
    parent[kids[1]] = kids[0]
    kids_of[p], kids_of[kids[0]] = [kids[0]], [kids[1]]
    return True


def _first_below(
    p: str, moved: list[str], chain: dict[str, Record], parent: dict[str, str | None]
) -> bool:
    """When a moved child was written before every branch of the fork at ``p`` (nothing to
    hang it under), the children written after it hang below it instead: the fork is then
    at that record, found when it is reached.  Whether that was done."""
    left = sorted((k for k in moved if parent[k] == p), key=lambda k: chain[k].order)
    if not left:
        return False
    first = left[0]
    for k in [u for u, q in parent.items() if q == p and chain[u].order > chain[first].order]:
        parent[k] = first
    return True


def _parent(r: Record, chain: dict[str, Record]) -> str | None:
    got = r.raw.get("parentUuid")
    return got if isinstance(got, str) and got in chain and got != r.uuid else None


def _check_parent(r: Record, chain: dict[str, Record], issues: list[Issue]) -> None:
    """An issue for a parent that is no uuid, or names no record of the session (an orphan:
    it hangs under the session's start)."""
    got = r.raw.get("parentUuid")
    if got is None or (isinstance(got, str) and got in chain and got != r.uuid):
        return
    what = (
        f"is {json_kind(got)}, not a uuid"
        if not isinstance(got, str)
        else "is the record itself"
        if got == r.uuid
        else f"{got} is no record of the session"
    )
    issues.append(Issue("broken_link", r.line, f"uuid {r.uuid}: its parentUuid {what}; it "
                        "hangs under the session's start", r.file))  # fmt: skip


def _heads(uuid: str, kids_of: dict[str, list[str]], chain: dict[str, Record]) -> bool:
    """Whether the branch from ``uuid`` is one the user started: a rewind, or a branch whose
    first message is a typed prompt (metadata records before it passed over)."""
    cur: str | None = uuid
    while cur is not None:
        r = chain[cur]
        if r.kind == "system" and subtype(r) == "rewind":
            return True
        if r.kind != "system":
            return is_prompt(r)
        kids = kids_of.get(cur) or []
        cur = kids[0] if kids else None
    return False


def _failed(uuid: str, kids_of: dict[str, list[str]], chain: dict[str, Record]) -> bool:
    """Whether the assistant record ``uuid`` is a failed attempt (see the module docstring)."""
    if not answers(chain[uuid]):
        return True
    todo = list(kids_of.get(uuid, ()))
    while todo:
        r = chain[todo.pop()]
        if r.kind == "assistant":
            return True
        if r.kind == "system" and subtype(r) != "rewind":
            todo.extend(kids_of.get(r.uuid, ()))
    return False
