"""``label:NAME``: the children whose subtree holds an entry currently labelled NAME (more
than one is a tie, which the next policies decide among them)."""

from __future__ import annotations

from dataclasses import dataclass

from ..index import TreeIndex


@dataclass(frozen=True)
class PreferLabel:
    arg: str  # the label name
    name: str = "label"

    def choose(self, index: TreeIndex, fork: str, children: list[str]) -> list[str]:
        marked = index.labelled(self.arg)
        return [c for c in children if c in marked]
