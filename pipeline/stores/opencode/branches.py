"""A tree's sessions written as one: fork copies merged, pending reverts as branches
(specs/opencode.md, "Abandoned branches as sibling subtrees").

The messages of every session of the tree are written in time order (a fork's
own messages never before the message they hang under), so the branch written
last is the one ``latest`` prefers.  A fork's own messages start with an
``opencode:fork`` entry naming the session they came from.

A pending revert (§4.2): the undone messages (from the anchor, or from its
part ``partID``) stay on disk until the next prompt.  They are kept as they are,
and an ``opencode:revert`` entry holding the ``revert`` object is written last,
under the entry before the undone range, so ``latest`` and ``current`` keep the
state the user came back to; an ``opencode:undo`` feedback outcome that does not
pass marks the undone leaf.
"""

from __future__ import annotations

from typing import Any

from ..draft import SessionDraft
from .convert import Converter, Revert, State
from .forks import Segment, Tree
from .records import Message, as_ms, obj

JSON = Any


def _revert(seg: Segment) -> Revert:
    body = seg.session.info.get("revert")
    if not isinstance(body, dict) or not isinstance(body.get("messageID"), str):
        return Revert()
    part = body.get("partID")
    return Revert(body, body["messageID"], part if isinstance(part, str) else "")


def _order(tree: Tree) -> list[tuple[Segment, Message]]:
    """Every own message of the tree's segments, by time, each after the message it hangs
    under (a segment's first key is bumped past its copy point's)."""
    key_of: dict[str, tuple[int, str]] = {}
    keyed: list[tuple[tuple[int, str], Segment, Message]] = []
    for seg in tree.segments:  # a fork's source segment comes before it
        prev = key_of.get(seg.attach) if seg.attach else None
        for m in seg.session.messages[seg.start :]:
            key = (m.created, m.id)
            if prev is not None and key <= prev:
                key = (prev[0], prev[1] + "\x00")
            key_of[m.id] = prev = key
            keyed.append((key, seg, m))
    keyed.sort(key=lambda k: k[0])
    return [(seg, m) for _, seg, m in keyed]


def write(
    tree: Tree, children: dict[str, dict[str, tuple[int, str]]], draft: SessionDraft
) -> Converter:
    """The tree's entries, into ``draft`` (see the module docstring)."""
    c = Converter(tree, children, draft)
    root = c.root()
    states: dict[int, State] = {}
    reverts = {id(seg): _revert(seg) for seg in tree.segments}
    for seg, m in _order(tree):
        st = states.get(id(seg))
        if st is None:
            st = states[id(seg)] = _start(c, seg, root)
        c.message(seg, st, m, reverts[id(seg)])
    for seg in tree.segments:
        r = reverts[id(seg)]
        if r.body is not None:
            st = states.get(id(seg)) or _start(c, seg, root)
            _close(c, seg, st, r)
    return c


def _start(c: Converter, seg: Segment, root: State) -> State:
    """A segment's state before its first own message: the root's, or its copy point's
    after an ``opencode:fork`` entry."""
    if seg.attach is None:
        return State(root.tail, root.model, root.agent, root.tokens)
    at = c.state_of.get(seg.attach, root)
    st = State(at.tail, at.model, at.agent, at.tokens)
    s = seg.session
    c.ms = s.created or c.ms
    body = {"session": s.id, "source": seg.source, "copied": seg.start}
    body |= {k: s.info[k] for k in ("title", "version") if isinstance(s.info.get(k), str)}
    st.tail = c.put("opencode:fork", f"{s.id}:fork", st.tail, **body)
    c.counts["forks_merged"] += 1
    c.counts["copied_messages"] += seg.start
    return st


def _close(c: Converter, seg: Segment, st: State, r: Revert) -> None:
    """The revert's entries: the undone leaf's outcome, then the ``opencode:revert`` entry
    at the fork point (under the path's end when its anchor is not among the messages)."""
    sid = seg.session.id
    c.ms = as_ms(obj(seg.session.info.get("time")).get("updated")) or c.ms  # when it was undone
    point = r.fork_point if r.part and r.fork_point is not None else r.before
    if point is None:
        c.counts["reverts_without_anchor"] += 1
        point = st.tail
    elif point != st.tail:
        c.put("outcome", f"{sid}:undo", st.tail, kind="feedback", target=st.tail, **{"pass": False}, label="opencode:undo", details={"revert": r.body})  # fmt: skip
        c.counts["reverts_pending"] += 1
    c.put("opencode:revert", f"{sid}:revert", point, revert=r.body)
