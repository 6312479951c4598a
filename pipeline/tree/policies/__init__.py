"""Branch-preference policies (spec §7.2): which child of a fork was preferred.

A policy answers with the children it finds best: one decides, none is no
opinion, several are a tie.  Policies are asked in the order given; the first
decisive one wins, a tie leaves the next ones (and at last ``latest``) to
decide among the tied children only, so a tie between two branches scored
1.0 never goes to a third scored 0.0.  (The reference asks each function
over every child; it differs only where a policy ties.)  ``POLICIES`` is the registry (name -> class, and
whether the name takes an argument, as in ``label:NAME``); a new policy is
one module here, one registry line and one test file.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from ...errors import UsageError
from ..index import TreeIndex
from .current import PreferCurrent
from .label import PreferLabel
from .latest import PreferLatest
from .score import PreferScore


class Policy(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def arg(self) -> str: ...

    def choose(self, index: TreeIndex, fork: str, children: list[str]) -> list[str]: ...


#: ``--prefer`` name -> (policy class, takes an argument)
POLICIES: dict[str, tuple[Callable[[str], Policy], bool]] = {
    "latest": (PreferLatest, False),
    "current": (PreferCurrent, False),
    "label": (PreferLabel, True),
    "score": (PreferScore, False),
}


def spellings() -> str:
    """The valid ``--prefer`` values, for help and error messages."""
    return ", ".join(f"{n}:NAME" if arg else n for n, (_, arg) in POLICIES.items())


def policy_label(policy: Policy) -> str:
    """The ``--prefer`` spelling of a policy, as written into tables and manifests."""
    return f"{policy.name}:{policy.arg}" if policy.arg else policy.name


def parse_policy(spec: str) -> Policy:
    """A policy from its ``--prefer`` spelling; ``UsageError`` naming the valid ones."""
    name, _, arg = spec.partition(":")
    if name not in POLICIES:
        raise UsageError(f"unknown preference {spec!r}; valid: {spellings()}")
    cls, takes_arg = POLICIES[name]
    if takes_arg and not arg:
        raise UsageError(f"--prefer {name} needs a name, e.g. --prefer {name}:kept")
    if not takes_arg and arg:
        raise UsageError(f"--prefer {name} takes no argument (got {spec!r})")
    return cls(arg)


def choose(
    index: TreeIndex, fork: str, policies: Sequence[Policy]
) -> tuple[str, str, tuple[str, ...]]:
    """(preferred child, the ``--prefer`` spelling of the policy that decided, the children
    a ``score`` policy tied with it) at ``fork``."""
    children = index.session.children(fork)
    tied: list[str] = []
    for policy in policies:
        picked = [c for c in policy.choose(index, fork, children) if c in children]
        if len(picked) == 1:
            return picked[0], policy_label(policy), _others(tied, picked[0])
        if picked:  # a tie: the rest decide among the tied children
            children = picked
            if policy.name == "score":
                tied = picked
    preferred = PreferLatest().choose(index, fork, children)[0]
    return preferred, "latest", _others(tied, preferred)


def _others(tied: list[str], preferred: str) -> tuple[str, ...]:
    return tuple(c for c in tied if c != preferred) if preferred in tied else ()


__all__ = ["POLICIES", "Policy", "TreeIndex", "choose", "parse_policy", "policy_label", "spellings"]
