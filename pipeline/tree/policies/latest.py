"""``latest``: the child whose subtree was appended to last (the reference default and the fallback)."""

from __future__ import annotations

from dataclasses import dataclass

from ..index import TreeIndex


@dataclass(frozen=True)
class PreferLatest:
    arg: str = ""
    name: str = "latest"

    def choose(self, index: TreeIndex, fork: str, children: list[str]) -> list[str]:
        return [max(children, key=lambda c: index.latest[c])]
