"""Thread families, and the tree of lines each session is converted from (specs/codex.md §2).

A family is every rollout that lineage ties together (thread id, ``forked_from_id``,
``parent_thread_id``, ``history_base``): the work unit.  In a family, a thread,
its revert segments and its forks (copied or by reference) make one tree, whose
session is the oldest thread's; a subagent child is a tree of its own, with the
parent's replayed prefix left out.  No line names its parent, so ``place``
gives each line one: the line before it in its file, except

- the first own line of a revert segment or a fork by reference, which hangs
  from the base line (``end_ordinal_exclusive - 1``);
- a copy fork's lines equal to its source's, which are the source's lines (a
  copy is re-stamped, so lines are compared by type and payload), and its first
  own line, which hangs from the last of them;
- a ``thread_rolled_back`` marker, which hangs from the fork point: the line
  before the first dropped live user turn (markers skipped).  The dropped turns
  stay where they are, an abandoned branch.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from .events import Duplicates, is_prompt
from .rollouts import Head, Line, Rollout, thread_spawn


def families(heads: list[Head]) -> list[list[Head]]:
    """The heads in groups that lineage ties together, each sorted by path; groups sorted by
    their first path."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for h in heads:
        ids = sorted(h.related())
        for other in ids[1:]:
            parent[find(other)] = find(ids[0])
    groups: dict[str, list[Head]] = {}
    for h in heads:
        groups.setdefault(find(h.thread), []).append(h)
    return sorted(
        (sorted(g, key=lambda h: h.path) for g in groups.values()), key=lambda g: g[0].path
    )


@dataclass
class Placed:
    """A line of a tree and the key of the line it follows (None for the root)."""

    line: Line
    parent: str | None
    rollout: Rollout


@dataclass
class Tree:
    """One session's lines, in the order they were written, each with its parent line."""

    thread: str
    root: Rollout
    placed: list[Placed] = field(default_factory=list)
    current: str = ""  # the line the thread's current leaf is at
    notes: list[str] = field(default_factory=list)  # what the header's codex:notes says
    counts: Counter[str] = field(default_factory=Counter)
    replayed: list[Line] = field(default_factory=list)  # a child's parent prefix, left out
    spawned_by: str = ""  # the call in the parent that spawned this child
    links: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # key -> children

    def note(self, what: str, message: str) -> None:
        """Something missing that leaves the session readable: counted, said in the header
        (not an error row: nothing of the store failed to read)."""
        self.counts[what] += 1
        self.notes.append(message)


def _name(r: Rollout) -> str:
    return r.path.replace("\\", "/").rsplit("/", 1)[-1]


class Placer:
    """Places the rollouts of one tree, in the order they were written."""

    def __init__(self, tree: Tree, dups: dict[str, Duplicates]) -> None:
        self.tree = tree
        self.dups = dups
        self.parent: dict[str, str | None] = {}
        self.alias: dict[str, str] = {}  # a copied line's key -> its source line's key
        self.user_turns: set[str] = set()  # keys that start a live user turn
        self.markers: set[str] = set()
        self.by_rollout: dict[str, Rollout] = {}

    def resolve(self, key: str) -> str:
        return self.alias.get(key, key)

    def line_at(self, rollout: str, ordinal: int) -> str | None:
        """The key of the line at ``ordinal`` in ``rollout``'s history (its base chain)."""
        seen: set[str] = set()
        while rollout in self.by_rollout and rollout not in seen:
            seen.add(rollout)
            r = self.by_rollout[rollout]
            for line in r.lines:
                if line.ordinal == ordinal and line.key in self.parent:
                    return line.key
            base = r.head().base
            if base is None or ordinal >= base[1]:
                return None
            rollout = base[0]
        return None

    def chain(self, r: Rollout, lines: list[Line], attach: str | None) -> str | None:
        """Place ``lines`` of ``r`` one after another from ``attach``; the last key."""
        prev = attach
        turn: str | None = None  # the key that starts the turn being read
        turn_by_task = False
        dups = self.dups[r.rollout]
        for line in lines:
            kind = line.kind
            parent = prev
            if kind == "event_msg/thread_rolled_back":
                parent = self.fork_point(prev, line)
                self.markers.add(line.key)
            self.parent[line.key] = parent
            self.tree.placed.append(Placed(line, parent, r))
            if kind == "event_msg/task_started":
                turn, turn_by_task = line.key, True
            elif kind in ("event_msg/task_complete", "event_msg/turn_aborted"):
                turn = None
            elif is_prompt(line, dups):
                if turn is None or (not turn_by_task and turn in self.user_turns):
                    turn, turn_by_task = line.key, False
                self.user_turns.add(turn)
            prev = line.key
        return prev

    def fork_point(self, tail: str | None, marker: Line) -> str | None:
        """Where a rollback of ``num_turns`` live user turns leaves the thread."""
        n = marker.payload.get("num_turns") if isinstance(marker.payload, dict) else None
        path: list[str] = []
        cur = tail
        while cur is not None:
            path.append(cur)
            cur = self.parent.get(cur)
        live = [k for k in reversed(path) if k in self.user_turns]
        if not isinstance(n, int) or isinstance(n, bool) or n <= 0 or not live:
            return tail
        self.tree.counts["rollbacks"] += 1
        point = self.parent.get(live[-min(n, len(live))])
        while point in self.markers:
            point = self.parent.get(point)
        return point


def build_trees(rollouts: list[Rollout], dups: dict[str, Duplicates]) -> list[Tree]:
    """The family's trees: one per thread that is not a fork of a thread present (a
    subagent child is always its own), oldest first."""
    threads: dict[str, list[Rollout]] = {}
    for r in sorted(rollouts, key=lambda r: (r.ts, r.path)):
        threads.setdefault(r.thread, []).append(r)

    def root_of(thread: str) -> str:
        seen: set[str] = set()
        while thread not in seen:
            seen.add(thread)
            head = threads[thread][0].head()
            if head.parent_thread or head.forked_from not in threads:
                return thread
            thread = head.forked_from
        return thread

    members: dict[str, list[Rollout]] = {}
    for r in sorted(rollouts, key=lambda r: (r.ts, r.path)):
        members.setdefault(root_of(r.thread), []).append(r)
    trees = [_place(threads[t][0], members[t], threads, dups) for t in members]
    keys = {pl.line.key: tree for tree in trees for pl in tree.placed}
    for tree in trees:
        _link(tree, keys, threads)
    return trees


def _place(
    root: Rollout, members: list[Rollout], threads: dict[str, list[Rollout]],
    dups: dict[str, Duplicates],
) -> Tree:  # fmt: skip
    tree = Tree(root.thread, root)
    p = Placer(tree, dups)
    p.by_rollout = {r.rollout: r for rs in threads.values() for r in rs}
    ends: dict[str, str | None] = {}
    head = root.head()
    if head.forked_from and head.forked_from not in threads:
        tree.note("forks_without_source", f"{_name(root)}: a fork of {head.forked_from}, "
                  "which is not in the store; read alone, with the history it copied")  # fmt: skip
    if head.base and head.base[0] not in p.by_rollout:
        tree.note("missing_base", f"{_name(root)}: the history it continues "
                  f"({head.base[0]}) is not in the store; read without it")  # fmt: skip
    for r in members:
        if r is root:
            lines = _own_lines(tree, root, threads)
            ends[r.rollout] = p.chain(r, [r.lines[0], *lines], None)
            continue
        attach, first = _attach(p, r, threads, ends)
        ends[r.rollout] = p.chain(r, [r.lines[0], *r.lines[first:]], attach)
    tree.current = _current(tree, threads, ends) or ""
    tree.counts["turns"] = len(p.user_turns)
    return tree


def _own_lines(tree: Tree, root: Rollout, threads: dict[str, list[Rollout]]) -> list[Line]:
    """The root's lines after its ``session_meta``, a child's replay of its parent left out."""
    lines = root.lines[1:]
    head = root.head()
    if not head.parent_thread:
        return lines
    start = root.meta.get("subagent_history_start_ordinal")
    if isinstance(start, int) and not isinstance(start, bool) and root.paginated:
        cut = next(
            (i for i, x in enumerate(lines) if x.ordinal is not None and x.ordinal >= start),
            len(lines),
        )
    elif head.parent_thread in threads:
        parent = threads[head.parent_thread][0].lines
        offset = 0 if lines and lines[0].type == "session_meta" else 1
        cut = 0
        while (
            cut < len(lines)
            and cut + offset < len(parent)
            and lines[cut].same(parent[cut + offset])
        ):
            cut += 1
    else:
        cut = 0
        while (
            cut < len(lines)
            and isinstance(lines[cut].metadata, dict)
            and lines[cut].metadata.get("inherited_user_message")
        ):
            cut += 1
    tree.replayed = lines[:cut]
    tree.counts["replayed_lines_left_out"] += cut
    return lines[cut:]


def _attach(
    p: Placer, r: Rollout, threads: dict[str, list[Rollout]], ends: dict[str, str | None]
) -> tuple[str | None, int]:
    """(the key a segment or fork's own lines hang from, the index of its first own line)."""
    tree, head = p.tree, r.head()
    root_key = tree.root.lines[0].key
    cutoff = r.meta.get("forked_from_ordinal_exclusive")
    base = head.base
    if head.forked_from and head.forked_from in threads:
        tree.counts["forks"] += 1
        if isinstance(cutoff, int) and not isinstance(cutoff, bool):
            rollout = base[0] if base else threads[head.forked_from][-1].rollout
            return _at(p, r, rollout, cutoff, root_key), 1
        if base is not None and base[0] in {x.rollout for x in threads[head.forked_from]}:
            return _at(p, r, base[0], base[1], root_key), 1
        return _copied(p, r, threads[head.forked_from][0], root_key)
    if base is not None:
        tree.counts["revert_segments"] += 1
        return _at(p, r, base[0], base[1], root_key), 1
    same = [x for x in threads[r.thread] if x is not r and x.rollout in ends]
    return (ends[same[-1].rollout] if same else root_key), 1


def _at(p: Placer, r: Rollout, rollout: str, end: int, root_key: str) -> str:
    key = p.line_at(rollout, end - 1)
    if key is None:
        p.tree.note(
            "missing_base",
            f"{_name(r)}: the history it continues ({rollout} before ordinal {end}) is not "
            "in the store; its own lines are read without it",
        )
        return root_key
    return p.resolve(key)


def _copied(p: Placer, r: Rollout, source: Rollout, root_key: str) -> tuple[str, int]:
    """A copy fork: its lines equal to the source's map to them; its own hang from the last."""
    lines, src = r.lines, source.lines
    offset = 0 if len(lines) > 1 and lines[1].type == "session_meta" else 1
    n = 0
    while 1 + n < len(lines) and n + offset < len(src) and lines[1 + n].same(src[n + offset]):
        p.alias[lines[1 + n].key] = src[n + offset].key
        n += 1
    p.tree.counts["copied_lines"] += n
    if n == 0:
        p.tree.note(
            "fork_without_copy",
            f"{_name(r)}: a fork of {source.thread} that copies none of its lines; its own "
            "lines hang from the session's start",
        )
        return root_key, 1
    return p.resolve(src[n - 1 + offset].key), 1 + n


def _current(
    tree: Tree, threads: dict[str, list[Rollout]], ends: dict[str, str | None]
) -> str | None:
    """The thread's current leaf: the end of its newest segment that no other continues."""
    own = [r for r in threads[tree.thread] if r.rollout in ends]
    bases = {b[0] for r in own if (b := r.head().base)}
    open_ends = [r for r in own if r.rollout not in bases] or own
    return ends[open_ends[-1].rollout] if open_ends else None


def _link(child: Tree, keys: dict[str, Tree], threads: dict[str, list[Rollout]]) -> None:
    """A subagent child's link from the parent's line that names it (its spawn call's
    output, else the spawn event), or from the end of the parent's thread."""
    head = child.root.head()
    parent = head.parent_thread
    if not parent or parent not in threads:
        return
    lines = [x for r in threads[parent] for x in r.lines]
    call = str((thread_spawn(child.root.meta) or {}).get("spawn_call_id") or "") or _spawn_call(
        lines, child.thread
    )
    child.spawned_by = call
    at = next((x for x in lines if _is_output(x) and x.payload.get("call_id") == call), None)
    at = at or next((x for x in lines if _is_call(x) and x.payload.get("call_id") == call), None)
    key = at.key if at is not None and at.key in keys else threads[parent][-1].lines[-1].key
    if key in keys:
        keys[key].links.setdefault(key, []).append((child.thread, call))
        keys[key].counts["children"] += 1


def _is_output(line: Line) -> bool:
    return line.kind in (
        "response_item/function_call_output",
        "response_item/custom_tool_call_output",
    )


def _is_call(line: Line) -> bool:
    return line.kind in ("response_item/function_call", "response_item/custom_tool_call")


def _spawn_call(lines: list[Line], child: str) -> str:
    """The call id of the parent's line that names ``child``: an event with ``new_thread_id``,
    or a call output holding its id (``{"agent_id": ...}`` or text)."""
    for x in lines:
        p = x.payload if isinstance(x.payload, dict) else {}
        if x.type == "event_msg" and p.get("new_thread_id") == child and p.get("call_id"):
            return str(p["call_id"])
        if _is_output(x) and isinstance(p.get("output"), str) and child in p["output"]:
            return str(p.get("call_id") or "")
    return ""
