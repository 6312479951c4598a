"""``score``: the child with the strictly highest outcome score in its subtree."""

from __future__ import annotations

from dataclasses import dataclass

from ..index import TreeIndex


@dataclass(frozen=True)
class PreferScore:
    arg: str = ""
    name: str = "score"

    def choose(self, index: TreeIndex, fork: str, children: list[str]) -> str:
        best = index.best_score
        scored = sorted(((best[c], c) for c in children if c in best), reverse=True)
        if not scored or (len(scored) > 1 and scored[0][0] == scored[1][0]):
            return ""
        return scored[0][1]
