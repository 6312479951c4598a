"""Outcome entries and the trajectories they apply to (DESIGN §5, ``outcomes`` and ``outcome_*``)."""

from __future__ import annotations

from collections.abc import Iterable

from trajset.schemas.entries import OutcomeEntry
from trajset.schemas.records import OutcomeRecord
from trajset.schemas.session import Session

from ..jsonio import dumps_compact


def outcome_records(session: Session) -> list[OutcomeRecord]:
    """Every outcome entry, in file order, with the leaves whose path holds its target."""
    leaves = session.leaves()
    out = []
    for e in session.entries:
        b = e.body
        if not isinstance(b, OutcomeEntry):
            continue
        target = b.target or ""
        if target:
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
            )
        )
    return out


def leaf_outcome(
    leaf: str, outcomes: Iterable[OutcomeRecord]
) -> tuple[float | None, bool | None, str | None]:
    """(score, pass, label) of ``leaf``: the latest applying outcome (file order) decides each."""
    score = passed = label = None
    for o in outcomes:
        if leaf in o.leaf_set:
            score = o.score if o.score is not None else score
            passed = o.passed if o.passed is not None else passed
            label = o.label if o.label is not None else label
    return score, passed, label
