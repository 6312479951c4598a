"""Outcome entries and the trajectories they apply to (DESIGN §5, ``outcomes`` and ``outcome_*``)."""

from __future__ import annotations

from collections.abc import Iterable

from trajset.schemas.entries import OutcomeEntry
from trajset.schemas.records import OutcomeRecord
from trajset.schemas.session import Session

from ..jsonio import dumps_compact


def _spans(session: Session) -> dict[str, tuple[int, int]]:
    """Each entry's (first, end) numbers in a depth-first numbering of the tree: ``b`` lies
    in ``a``'s subtree exactly when ``a``'s span holds ``b``'s first number.  One pass over
    the tree instead of a subtree walk per outcome (quadratic in a long session with an
    outcome per turn: 57% of a 3,200-turn session's export)."""
    spans: dict[str, tuple[int, int]] = {}
    first: dict[str, int] = {}
    orphans = (e.id for e in session.entries if e.parent and e.parent not in session.by_id)
    n = 0
    for top in [*session.roots(), *orphans]:
        stack: list[tuple[str, bool]] = [(top, False)]
        while stack:
            node, closing = stack.pop()
            if closing:
                spans[node] = (first[node], n)
                continue
            if node in first:  # reached twice: not a tree here; left to the walk below
                continue
            first[node] = n
            n += 1
            stack.append((node, True))
            stack.extend((c, False) for c in reversed(session.children_of.get(node, ())))
    return spans


def own_leaves(session: Session) -> dict[str, str]:
    """Entry -> the leaf whose own part holds it, for the entries of an own part.

    A trajectory's own part is its path below its last fork (the whole path where it has
    none): the entries no other trajectory shares.  An entry belongs to the part that
    starts at the nearest entry at or above it whose parent is a fork (or that is a root);
    the fork itself belongs to the part above it, shared by the branches below."""
    start: dict[str, str] = {}
    for e in session.entries:  # parents come before their children
        parent = e.parent
        shared = parent in start and len(session.children_of.get(parent or "", ())) == 1
        start[e.id] = start[parent] if shared and parent else e.id
    leaf_of = {start[leaf]: leaf for leaf in session.leaves() if leaf in start}
    return {eid: leaf_of[s] for eid, s in start.items() if s in leaf_of}


def outcome_records(session: Session) -> list[OutcomeRecord]:
    """Every outcome entry, in file order, with the leaves whose path holds its target and
    the leaf whose own part it is located on (at its target, else at itself)."""
    owner = own_leaves(session)
    leaves = session.leaves()
    spans: dict[str, tuple[int, int]] | None = None
    out = []
    for e in session.entries:
        b = e.body
        if not isinstance(b, OutcomeEntry):
            continue
        target = b.target or ""
        if target:
            spans = _spans(session) if spans is None else spans
            if target in spans:
                lo, hi = spans[target]
                applies = tuple(leaf for leaf in leaves if lo <= spans.get(leaf, (-1, 0))[0] < hi)
            else:  # an entry the numbering did not reach
                under = set(session.subtree_ids(target)) if target in session.by_id else set()
                applies = tuple(leaf for leaf in leaves if leaf in under)
        else:
            applies = tuple(leaves)
        out.append(
            OutcomeRecord(
                entry_id=e.id,
                kind=b.kind,
                target=target or None,
                score=float(b.score) if b.score is not None else None,
                passed=b.pass_,
                label=b.label or None,
                details=dumps_compact(e.raw.get("details")) if "details" in e.raw else None,
                leaf_ids=applies,
                own_leaf=owner.get(target or e.id),
            )
        )
    return out


def leaf_outcome(
    leaf: str, outcomes: Iterable[OutcomeRecord]
) -> tuple[float | None, bool | None, str | None]:
    """(score, pass, label) of ``leaf``'s trajectory: the latest outcome (file order) located
    on its own part decides each.  An outcome on the shared prefix judges what the branches
    share, not any one of them (README, terminology: score)."""
    score = passed = label = None
    for o in outcomes:
        if o.own_leaf == leaf:
            score = o.score if o.score is not None else score
            passed = o.passed if o.passed is not None else passed
            label = o.label if o.label is not None else label
    return score, passed, label
