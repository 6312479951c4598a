"""Trees across sessions (spec §7): forks merged onto their source, side chats as linked trees.

A fork names its source and anchor only in its own (last) ``harness_note``
of kind ``fork``; that prose is verified: the fork's events before the note
must be the source's events with the same ids (id, name, time) and its
history prefix the source's.  A verified fork keeps only its own turns,
hung on the source's entry where the copied turns end (the trunk is stored
once); an unverified one, or one whose source is gone, keeps its own copy
of the trunk and a ``fork_of`` link.  Entries of a tree are written in time
order, so the ``latest`` policy prefers the branch used last: the spec's
abandoned-branch rule where it decides, and its tie-break among siblings.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from typing import Any

from . import texts
from .convert import Converted
from .record import Record
from .turns import assign_messages, split_events

JSON = Any


@dataclass(frozen=True)
class ForkLink:
    source: str
    anchor: int | None  # event id of the anchor session_end; None for a full fork
    note_id: int


def fork_link(r: Record) -> ForkLink | None:
    """The session's own fork note (the last one: earlier ones are copies of its ancestors')."""
    notes = [
        e for e in r.events
        if e.event == "harness_note" and isinstance(e.data, dict) and e.data.get("kind") == "fork"
    ]  # fmt: skip
    if not notes:
        return None
    detail = str(notes[-1].data.get("detail") or "")
    source = texts.FORK_SOURCE_RE.search(detail)
    if source is None:
        return None
    anchor = texts.FORK_ANCHOR_RE.search(detail)
    return ForkLink(source.group(1), int(anchor.group(1)) if anchor else None, notes[-1].id)


def copied_turns(fork: Record, link: ForkLink, source: Record) -> int | None:
    """How many turns the fork copied from ``source``, or None when the trunk does not match."""
    copied = [e for e in fork.events if e.id < link.note_id]
    src = {e.id: e for e in source.events}
    for e in copied:
        s = src.get(e.id)
        if s is None or (s.event, s.ts) != (e.event, e.ts):
            return None
    if link.anchor is not None and (not copied or copied[-1].id != link.anchor):
        return None
    k = len(split_events(copied)[0])
    turns = split_events(fork.events)[0]
    assign_messages(turns, fork.messages, 0)
    m0 = turns[k - 1].end if k else 0
    if fork.messages[:m0] != source.messages[:m0] or len(split_events(source.events)[0]) < k:
        return None
    return k


@dataclass(frozen=True)
class Edge:
    source: str
    turns: int  # copied turns


def fork_edges(records: dict[str, Record]) -> tuple[dict[str, Edge], dict[str, JSON]]:
    """Verified fork edges (fork sid -> source), and lineage facts of the unverified ones."""
    edges: dict[str, Edge] = {}
    unverified: dict[str, JSON] = {}
    for sid, r in sorted(records.items()):
        link = fork_link(r)
        if link is None or link.source == sid:
            continue
        src = records.get(link.source)
        k = copied_turns(r, link, src) if src is not None else None
        if k is None or _reaches(edges, link.source, sid):
            reason = "source_missing" if src is None else "trunk_differs"
            unverified[sid] = {"source": link.source, "anchor": link.anchor, "reason": reason}
        else:
            edges[sid] = Edge(link.source, k)
    return edges, unverified


def _reaches(edges: dict[str, Edge], start: str, target: str) -> bool:
    cur: str | None = start
    while cur is not None and cur in edges:
        if cur == target:
            return True
        cur = edges[cur].source
    return cur == target


def attach_point(conv: dict[str, Converted], edges: dict[str, Edge], sid: str, k: int) -> str:
    """The entry where turn ``k`` of ``sid`` ends, found on the session that stores that turn."""
    while sid in edges and k <= edges[sid].turns:
        sid = edges[sid].source
    c = conv[sid]
    return str(c.entries.raws[c.turn_ends[k] - 1]["id"])


def members(root: str, edges: dict[str, Edge]) -> list[str]:
    """``root`` and every verified fork below it, breadth first: the sessions of its tree."""
    out, todo = [], [root]
    while todo:
        sid = todo.pop(0)
        out.append(sid)
        todo.extend(sorted(f for f, e in edges.items() if e.source == sid))
    return out


def merged_entries(
    root: str, conv: dict[str, Converted], edges: dict[str, Edge]
) -> list[dict[str, JSON]]:
    """The tree of ``root`` with every verified fork below it, entries in time order."""
    sequences: list[tuple[str, list[dict[str, JSON]], list[int]]] = []
    for sid in members(root, edges):
        c = conv[sid]
        if sid == root:
            sequences.append(("", list(c.entries.raws), list(c.entries.times)))
        else:
            k = edges[sid].turns
            head, start = c.entries.raws[1], c.turn_ends[k]
            raws = [dict(head), *(dict(r) for r in c.entries.raws[start:])]
            times = [c.entries.times[1], *c.entries.times[start:]]
            raws[0]["parent"] = attach_point(conv, edges, edges[sid].source, k)
            if len(raws) > 1:
                raws[1]["parent"] = raws[0]["id"]
            sequences.append((str(raws[0]["parent"]), raws, times))
    return _time_order(sequences)


def _time_order(
    sequences: list[tuple[str, list[dict[str, JSON]], list[int]]],
) -> list[dict[str, JSON]]:
    """Merge the sequences by time; a sequence starts only after the entry it hangs on."""
    out: list[dict[str, JSON]] = []
    written: set[str] = set()
    heap: list[tuple[int, int, int]] = []  # (time, sequence, index)
    waiting = dict(enumerate(sequences))
    while True:
        for i in [i for i, (after, _, _) in waiting.items() if not after or after in written]:
            heapq.heappush(heap, (waiting[i][2][0], i, 0))
            del waiting[i]
        if not heap and waiting:  # cannot happen for attach points found above; never drop entries
            i = min(waiting)
            heapq.heappush(heap, (waiting[i][2][0], i, 0))
            del waiting[i]
        if not heap:
            return out
        _, i, j = heapq.heappop(heap)
        raws, times = sequences[i][1], sequences[i][2]
        out.append(raws[j])
        written.add(str(raws[j]["id"]))
        if j + 1 < len(raws):
            heapq.heappush(heap, (times[j + 1], i, j + 1))
