"""Root-to-leaf trajectories of a session and the fork decisions on them (spec §7.1).

Every childless entry is a leaf; leaves come in file order; the main
trajectory ends at the last entry of the file.  Each fork is decided once
(``decide``); a trajectory that follows the preferred child records the
leaves it was preferred over, one that leaves it records where it was
abandoned.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from trajset.schemas.records import ForkChoice, ForkDecision, Trajectory
from trajset.schemas.session import Session

from ..errors import ContextError
from .context import build_context
from .index import TreeIndex
from .policies import Policy, choose


def decide(index: TreeIndex, policies: Sequence[Policy]) -> dict[str, ForkDecision]:
    """The decision at every fork of the session, in file order."""
    session = index.session
    out: dict[str, ForkDecision] = {}
    for fork in session.forks():
        preferred, policy, tied = choose(index, fork, policies)
        out[fork] = ForkDecision(fork, tuple(session.children(fork)), preferred, policy, tied)
    return out


def _fork_choices(
    session: Session, leaf: str, decisions: dict[str, ForkDecision]
) -> list[ForkChoice]:
    path = session.path(leaf)
    return [
        ForkChoice(decisions[e.id], path[i + 1].id)
        for i, e in enumerate(path[:-1])
        if e.id in decisions
    ]


def trajectories(
    session: Session,
    policies: Sequence[Policy] = (),
    *,
    index: TreeIndex | None = None,
    decisions: dict[str, ForkDecision] | None = None,
) -> Iterator[Trajectory | ContextError]:
    """One ``Trajectory`` per leaf in file order, or a ``ContextError`` for a leaf that fails."""
    index = index or TreeIndex(session)
    decisions = decide(index, policies) if decisions is None else decisions
    last = session.last_id()
    for leaf in session.leaves():
        forks = _fork_choices(session, leaf, decisions)
        preferred_over: list[str] = []
        abandoned_at = ""
        for fc in forks:
            if fc.followed:
                for c in fc.decision.children:
                    if c != fc.decision.preferred:
                        preferred_over.extend(index.leaves_under[c])
            elif not abandoned_at:
                abandoned_at = fc.decision.fork
        try:
            ctx = build_context(session.path(leaf))
        except ContextError as exc:
            exc.session_id, exc.source = session.id, session.source
            exc.message = f"leaf {leaf}: {exc.message}"
            yield exc
            continue
        yield Trajectory(session, leaf, ctx, leaf == last, preferred_over, abandoned_at, forks)


def main_trajectory(session: Session, policies: Sequence[Policy] = ()) -> Trajectory | None:
    """The trajectory ending at the session's last entry, if its context builds."""
    for t in trajectories(session, policies):
        if isinstance(t, Trajectory) and t.main:
            return t
    return None
