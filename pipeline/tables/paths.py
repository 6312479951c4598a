"""Where a path's windows and forks are: what the ``sft`` rows, the pair sides and the
``kto`` rows cut it by."""

from __future__ import annotations

from collections.abc import Iterator

from trajset.schemas.entries import CompactionEntry
from trajset.schemas.session import Entry, Session


def windows(path: list[Entry]) -> Iterator[list[Entry]]:
    """The path cut where each compaction starts a new window: one list per window."""
    start = 0
    for i, e in enumerate(path):
        if isinstance(e.body, CompactionEntry) and i > start:
            yield path[start:i]
            start = i
    yield path[start:]


def forks(session: Session, path: list[Entry]) -> list[int]:
    """The positions on ``path`` (root first, the leaf last) of its forks."""
    return [i for i, e in enumerate(path[:-1]) if len(session.children(e.id)) > 1]
