"""``label:NAME``: the only child whose subtree holds an entry currently labelled NAME."""

from __future__ import annotations

from dataclasses import dataclass

from ..index import TreeIndex


@dataclass(frozen=True)
class PreferLabel:
    arg: str  # the label name
    name: str = "label"

    def choose(self, index: TreeIndex, fork: str, children: list[str]) -> str:
        marked = index.labelled(self.arg)
        hits = [c for c in children if c in marked]
        return hits[0] if len(hits) == 1 else ""
