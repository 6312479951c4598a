"""``score``: the child with the highest outcome score located in its subtree (several tied
at the top are a tie, which the next policies decide among them, never another child)."""

from __future__ import annotations

from dataclasses import dataclass

from ..index import TreeIndex


@dataclass(frozen=True)
class PreferScore:
    arg: str = ""
    name: str = "score"

    def choose(self, index: TreeIndex, fork: str, children: list[str]) -> list[str]:
        best = index.best_score
        scored = [c for c in children if c in best]
        top = max((best[c] for c in scored), default=None)
        return [c for c in scored if best[c] == top]
