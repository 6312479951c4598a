"""``current``: the child whose subtree holds the session's current leaf."""

from __future__ import annotations

from dataclasses import dataclass

from ..index import TreeIndex


@dataclass(frozen=True)
class PreferCurrent:
    arg: str = ""
    name: str = "current"

    def choose(self, index: TreeIndex, fork: str, children: list[str]) -> list[str]:
        towards = index.child_towards(fork, index.session.current_leaf())
        return [towards] if towards in children else []
