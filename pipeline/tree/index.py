"""Per-session facts the preference policies and the pairs share, computed once in file order."""

from __future__ import annotations

from trajset.schemas.entries import OutcomeEntry
from trajset.schemas.session import Session


class TreeIndex:
    """Latest append under each entry, leaves under each entry, best scores, labelled subtrees."""

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
        self.best_score = _best_scores(session)
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


def _best_scores(session: Session) -> dict[str, float]:
    """Maximum outcome score located in each entry's subtree (at its target, else at itself)."""
    best: dict[str, float] = {}
    for e in session.entries:
        if isinstance(e.body, OutcomeEntry) and e.body.score is not None:
            at = e.body.target or e.id
            if at in session.by_id:
                best[at] = max(best.get(at, float("-inf")), float(e.body.score))
    for e in reversed(session.entries):
        if e.parent and e.id in best:
            best[e.parent] = max(best.get(e.parent, float("-inf")), best[e.id])
    return best
