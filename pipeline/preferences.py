"""Branch-preference policies (spec §7.2): which child of a fork was preferred.

A policy answers with a child id, or ``""`` for no opinion; policies are
asked in the order given and the first decisive one wins, ``latest`` (the
branch appended to last) deciding when none does.  Registry names are
versioned in the manifest through ``POLICIES``; ``parse_policy`` turns a
``--prefer`` value (``latest``, ``current``, ``label:NAME``, ``score``)
into a policy.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from .errors import UsageError
from .session import Session


class TreeIndex:
    """Per-session facts the policies share, computed once in file order."""

    def __init__(self, session: Session) -> None:
        self.session = session
        entries = session.entries
        self.latest: dict[str, int] = {e.id: e.index for e in entries}
        self.leaves_under: dict[str, list[str]] = {e.id: [] for e in entries}
        for e in reversed(entries):
            if e.id not in session.children_of:
                self.leaves_under[e.id].append(e.id)
            if e.parent:
                if self.latest[e.id] > self.latest[e.parent]:
                    self.latest[e.parent] = self.latest[e.id]
                self.leaves_under[e.parent].extend(self.leaves_under[e.id])
        self._best_score: dict[str, float] | None = None
        self._labelled: dict[str, set[str]] = {}

    def child_towards(self, fork: str, entry_id: str) -> str:
        """The child of ``fork`` whose subtree holds ``entry_id`` ("" if none)."""
        by_id = self.session.by_id
        cur = by_id.get(entry_id)
        while cur is not None:
            if cur.parent == fork:
                return cur.id
            cur = by_id.get(cur.parent) if cur.parent else None
        return ""

    def best_score(self) -> dict[str, float]:
        """Maximum outcome score located in each entry's subtree."""
        if self._best_score is None:
            best: dict[str, float] = {}
            for e in self.session.entries:
                if e.type == "outcome" and e.body.score is not None:  # type: ignore[attr-defined]
                    at = e.body.target or e.id  # type: ignore[attr-defined]
                    if at in self.session.by_id:
                        best[at] = max(best.get(at, float("-inf")), float(e.body.score))  # type: ignore[attr-defined]
            for e in reversed(self.session.entries):
                if e.parent and e.id in best:
                    best[e.parent] = max(best.get(e.parent, float("-inf")), best[e.id])
            self._best_score = best
        return self._best_score

    def labelled(self, name: str) -> set[str]:
        """Entries whose subtree holds an entry currently labelled ``name``."""
        if name not in self._labelled:
            marked = {
                t
                for t, lab in self.session.labels().items()
                if lab == name and t in self.session.by_id
            }
            for e in reversed(self.session.entries):
                if e.parent and e.id in marked:
                    marked.add(e.parent)
            self._labelled[name] = marked
        return self._labelled[name]


class Policy(Protocol):
    name: str

    def choose(self, index: TreeIndex, fork: str, children: list[str]) -> str: ...


@dataclass(frozen=True)
class PreferLatest:
    """The child whose subtree was appended to last (the reference default)."""

    name: str = "latest"

    def choose(self, index: TreeIndex, fork: str, children: list[str]) -> str:
        return max(children, key=lambda c: index.latest[c])


@dataclass(frozen=True)
class PreferCurrent:
    """The child whose subtree holds the session's current leaf."""

    name: str = "current"

    def choose(self, index: TreeIndex, fork: str, children: list[str]) -> str:
        return index.child_towards(fork, index.session.current_leaf())


@dataclass(frozen=True)
class PreferLabel:
    """The only child whose subtree holds an entry currently labelled ``label``."""

    label: str
    name: str = "label"

    def choose(self, index: TreeIndex, fork: str, children: list[str]) -> str:
        marked = index.labelled(self.label)
        hits = [c for c in children if c in marked]
        return hits[0] if len(hits) == 1 else ""


@dataclass(frozen=True)
class PreferScore:
    """The child with the strictly highest outcome score in its subtree."""

    name: str = "score"

    def choose(self, index: TreeIndex, fork: str, children: list[str]) -> str:
        best = index.best_score()
        scored = sorted(((best[c], c) for c in children if c in best), reverse=True)
        if not scored or (len(scored) > 1 and scored[0][0] == scored[1][0]):
            return ""
        return scored[0][1]


POLICIES: dict[str, Callable[[str], Policy]] = {
    "latest": lambda _arg: PreferLatest(),
    "current": lambda _arg: PreferCurrent(),
    "label": lambda arg: PreferLabel(arg),
    "score": lambda _arg: PreferScore(),
}


def policy_label(policy: Policy) -> str:
    """The ``--prefer`` spelling of a policy, as written into tables and manifests."""
    return f"label:{policy.label}" if isinstance(policy, PreferLabel) else policy.name


def parse_policy(spec: str) -> Policy:
    name, _, arg = spec.partition(":")
    if name not in POLICIES:
        raise UsageError(f"unknown preference {spec!r}; valid: latest, current, label:NAME, score")
    if name == "label" and not arg:
        raise UsageError("--prefer label needs a label name, e.g. --prefer label:kept")
    if name != "label" and arg:
        raise UsageError(f"--prefer {name} takes no argument (got {spec!r})")
    return POLICIES[name](arg)
