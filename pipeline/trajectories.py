"""Root-to-leaf trajectories of a session and the fork decisions on them (spec §7.1).

Every childless entry is a leaf; leaves come in file order; the main
trajectory ends at the last entry of the file.  At each fork on a path the
policies pick the preferred child; a trajectory that follows it records the
leaves it was preferred over, one that leaves it records where it was
abandoned.  Each fork passed is kept as a ``ForkChoice`` so the preference
table can say which policy decided.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from .context import Context, build_context
from .errors import ContextError
from .preferences import Policy, PreferLatest, TreeIndex, policy_label
from .session import Session


@dataclass(frozen=True)
class ForkChoice:
    fork: str
    children: tuple[str, ...]
    preferred: str
    taken: str
    policy: str  # the --prefer spelling of the policy that decided

    @property
    def followed(self) -> bool:
        return self.taken == self.preferred


@dataclass
class Trajectory:
    session: Session
    leaf_id: str
    context: Context
    main: bool
    preferred_over: list[str] = field(default_factory=list)
    abandoned_at: str = ""
    forks: list[ForkChoice] = field(default_factory=list)

    @property
    def is_preferred(self) -> bool:
        """True when the path follows the preferred child at every fork."""
        return not self.abandoned_at


def choose(index: TreeIndex, fork: str, policies: Sequence[Policy]) -> tuple[str, str]:
    """(preferred child, deciding policy) at ``fork``."""
    children = index.session.children(fork)
    for policy in policies:
        pick = policy.choose(index, fork, children)
        if pick and pick in children:
            return pick, policy_label(policy)
    return PreferLatest().choose(index, fork, children), "latest"


def fork_choices(
    index: TreeIndex,
    leaf: str,
    policies: Sequence[Policy],
    cache: dict[str, tuple[str, str]] | None = None,
) -> list[ForkChoice]:
    session = index.session
    path = session.path(leaf)
    out: list[ForkChoice] = []
    for i, e in enumerate(path[:-1]):
        children = session.children(e.id)
        if len(children) < 2:
            continue
        if cache is not None and e.id in cache:
            preferred, by = cache[e.id]
        else:
            preferred, by = choose(index, e.id, policies)
            if cache is not None:
                cache[e.id] = (preferred, by)
        out.append(ForkChoice(e.id, tuple(children), preferred, path[i + 1].id, by))
    return out


def trajectories(
    session: Session, policies: Sequence[Policy] = ()
) -> Iterator[Trajectory | ContextError]:
    """One ``Trajectory`` per leaf in file order, or a ``ContextError`` for a leaf that fails."""
    index = TreeIndex(session)
    cache: dict[str, tuple[str, str]] = {}
    last = session.last_id()
    for leaf in session.leaves():
        forks = fork_choices(index, leaf, policies, cache)
        preferred_over: list[str] = []
        abandoned_at = ""
        for fc in forks:
            if fc.followed:
                for c in fc.children:
                    if c != fc.preferred:
                        preferred_over.extend(index.leaves_under[c])
            elif not abandoned_at:
                abandoned_at = fc.fork
        try:
            ctx = build_context(session.path(leaf))
        except ContextError as exc:
            exc.session_id, exc.source = session.id, session.source
            exc.message = f"leaf {leaf}: {exc.message}"
            yield exc
            continue
        yield Trajectory(session, leaf, ctx, leaf == last, preferred_over, abandoned_at, forks)
