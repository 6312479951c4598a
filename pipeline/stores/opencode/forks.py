"""Fork copies found and merged into their source's tree (specs/opencode.md, "Abandoned
branches" 1).

"Fork from message" writes a new session holding copies of the source's first
messages, with new ids and no link back.  F is a copy of S when F has no parent
session, S is older, and F's first k >= 1 messages equal S's first k in role,
``time.created`` and part contents, ids aside.  Bookkeeping parts (step start
and finish, patch, snapshot, retry) are left out of the comparison: they carry no
content, and a cut step-finish file must not hide a fork.  The largest k wins;
between sources with the same k the newest, so each fork of a chain hangs on its
own source.  A tree is a session and every fork merged into it, each fork's own
messages hanging under the (resolved) last message it copied.

``groups`` cuts a project into the sessions that must be read together, before
anything but their first messages is read: those whose first messages could make
them copies of each other (no parent, the same role and creation time), with
their subagents' sessions, so a unit holds a few sessions, not a whole project.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from .records import ID_KEYS, Group, Overview, StoredSession

JSON = Any
BOOKKEEPING = frozenset({"step-start", "step-finish", "patch", "snapshot", "retry"})


@dataclass
class Segment:
    """A session's own messages in a tree: from ``start`` on, hanging under the message
    ``attach`` (None for the tree's root session)."""

    session: StoredSession
    start: int = 0
    attach: str | None = None
    source: str = ""


@dataclass
class Tree:
    root: StoredSession
    segments: list[Segment] = field(default_factory=list)

    @property
    def copied(self) -> int:
        return sum(s.start for s in self.segments)


class _Signatures:
    """Each message's comparable form, made once and only when a comparison needs it (compared
    as values: a copy's parts are equal dicts, so nothing is serialised)."""

    def __init__(self) -> None:
        self.memo: dict[tuple[str, int], tuple[JSON, ...]] = {}

    def of(self, s: StoredSession, i: int) -> tuple[JSON, ...]:
        key = (s.id, i)
        if key not in self.memo:
            m = s.messages[i]
            parts = [
                {k: v for k, v in p.items() if k not in ID_KEYS}
                for p in m.parts
                if p.get("type") not in BOOKKEEPING
            ]
            self.memo[key] = (m.role, m.created, parts)
        return self.memo[key]

    def common(self, a: StoredSession, b: StoredSession) -> int:
        n = 0
        while n < min(len(a.messages), len(b.messages)) and self.of(a, n) == self.of(b, n):
            n += 1
        return n


def trees(sessions: list[StoredSession]) -> list[Tree]:
    """The trees of a unit's sessions, oldest first: every fork copy merged into its source's."""
    sig = _Signatures()
    by_first: dict[tuple[str, int], list[StoredSession]] = defaultdict(list)  # (role, time)
    tree_of: dict[str, Tree] = {}
    segment_of: dict[str, Segment] = {}
    out: list[Tree] = []
    for s in sorted(sessions, key=lambda s: (s.created, s.id)):
        source, k = None, 0
        if s.messages and not s.parent:
            first = (s.messages[0].role, s.messages[0].created)
            for c in by_first.get(first, []):
                n = sig.common(s, c)
                if n and n >= k:  # the newest source of the longest copy
                    source, k = c, n
            by_first[first].append(s)
        if source is None:
            tree = Tree(s, [Segment(s)])
            out.append(tree)
        else:
            tree = tree_of[source.id]
            attach = _resolve(segment_of, source, k - 1)
            tree.segments.append(Segment(s, k, attach, source.id))
        tree_of[s.id] = tree
        segment_of[s.id] = tree.segments[-1]
    return out


def _resolve(segment_of: dict[str, Segment], session: StoredSession, i: int) -> str:
    """The id of the message the tree holds for ``session``'s i-th (a copy is its source's)."""
    seg = segment_of[session.id]
    while i < seg.start and seg.source:
        seg = segment_of[seg.source]
    return seg.session.messages[i].id


def groups(sessions: list[Overview]) -> list[Group]:
    """The sessions (oldest first, each once) cut into groups: forks and sources (parentless,
    the same first message role and time) and each session's subagents, transitively."""
    leader: dict[str, str] = {s.id: s.id for s in sessions}

    def find(x: str) -> str:
        while leader[x] != x:
            leader[x] = leader[leader[x]]
            x = leader[x]
        return x

    def join(a: str, b: str) -> None:
        ra, rb = find(a), find(b)
        if ra != rb:
            leader[max(ra, rb, key=order.__getitem__)] = min(ra, rb, key=order.__getitem__)

    order = {s.id: i for i, s in enumerate(sessions)}
    first: dict[tuple[str, str, int], str] = {}
    for s in sessions:
        if s.parent in leader:
            join(s.id, s.parent)
        elif s.first is not None and not s.parent:
            key = (s.project, *s.first)
            join(s.id, first.setdefault(key, s.id))
    members: dict[str, list[str]] = defaultdict(list)
    for s in sessions:
        members[find(s.id)].append(s.id)
    by_id = {s.id: s for s in sessions}
    return [Group(by_id[root].project, tuple(ids)) for root, ids in members.items()]
