"""Pi files joined into trees (specs/pi.md §5, rules 3 and 4).

A ``/fork`` file copies a path of its source with the ids kept, and names the
source in its header (``parentSession``, v1 ``branchedFrom``).  A file whose
source is in the unit is merged into the source's tree, following chains: the
same id on the same line bytes is one entry (a copy); the same id on other bytes
is an error; an entry whose parent is in neither file (a label Pi dropped and
re-created) takes its parent from the source, else the entry before it, and
keeps ``pi:relinked_from``.  Merged entries are ordered by ``timestamp`` (ties in
file order, the source first), parents always before children, so ``latest``
prefers the branch used last and the last entry is Pi's current leaf.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trajset.schemas.session import Issue

from .files import PiFile

JSON = Any


@dataclass
class Tree:
    """One session: its member files (the root-most first) and their entries, ordered."""

    files: list[PiFile]
    entries: list[dict[str, JSON]] = field(default_factory=list)
    issues: list[Issue] = field(default_factory=list)
    copies: int = 0
    relinked: int = 0

    @property
    def root(self) -> PiFile:
        return self.files[0]


def trees(files: list[PiFile]) -> list[Tree]:
    """The unit's trees: a file whose source is present joins the source's tree."""
    by_stem = {Path(f.path).stem: f for f in files}
    by_stem |= {f.header["id"]: f for f in files if isinstance(f.header.get("id"), str)}

    def root_of(f: PiFile) -> PiFile:
        seen = {id(f)}
        while f.source:
            src = by_stem.get(f.source) or next(
                (x for stem, x in by_stem.items() if f.source.endswith(stem)), None
            )
            if src is None or id(src) in seen:
                break
            seen.add(id(src))
            f = src
        return f

    groups: dict[int, list[PiFile]] = {}
    for f in files:
        groups.setdefault(id(root_of(f)), []).append(f)
    out = []
    for members in groups.values():
        members.sort(
            key=lambda f: (f is not root_of(f), str(f.header.get("timestamp") or ""), f.path)
        )
        out.append(_merge(Tree(members)))
    return out


def _merge(tree: Tree) -> Tree:
    seen: dict[str, bytes] = {}
    rows: list[tuple[str, int, int, dict[str, JSON]]] = []  # (timestamp, file rank, line, entry)
    for rank, f in enumerate(tree.files):
        prev: str | None = None
        for line, e, raw in f.entries:
            eid = e.get("id")
            if not isinstance(eid, str) or not eid:
                tree.issues.append(
                    Issue(
                        "bad_line", line, f"{Path(f.path).name}: an entry without an id; left out"
                    )
                )
                continue
            if eid in seen:
                if seen[eid] == raw:
                    tree.copies += 1
                else:
                    tree.issues.append(Issue("bad_line", line, f"{Path(f.path).name}: id {eid} is another "
                                             "entry's in the same tree; this one left out"))  # fmt: skip
                continue
            seen[eid] = raw
            rows.append(
                (
                    str(e.get("timestamp") or ""),
                    rank,
                    line,
                    {**e, "pi:file": Path(f.path).name, "pi:prev": prev, "pi:at": (f.path, line)},
                )
            )
            prev = eid
    ids = set(seen)
    for *_, e in rows:
        parent = e.get("parentId")
        if parent is not None and parent not in ids:
            e["pi:relinked_from"] = parent
            e["parentId"] = e["pi:prev"] if e["pi:prev"] in ids else None
            tree.relinked += 1  # Pi drops label entries when it copies a branch: not damage
    ordered = sorted(rows, key=lambda r: r[:3])
    tree.entries = _parents_first(ordered)
    at = {e["id"]: i for i, (*_, e) in enumerate(ordered)}
    for e in tree.entries:
        if e.get("parentId") is not None and at[e["parentId"]] > at[e["id"]]:
            _broken(tree, e, f"its parent {e['parentId']!r} is written after it; read as its "
                    "child")  # fmt: skip
        if e.pop("pi:cycle", None):
            _broken(tree, e, f"its parent {e['pi:relinked_from']!r} descends from it (a cycle); "
                    "it starts a tree of its own")  # fmt: skip
    return tree


def _broken(tree: Tree, e: dict[str, JSON], why: str) -> None:
    path, line = e["pi:at"]
    tree.issues.append(Issue("broken_link", line, f"entry {e.get('id')!r}: {why}", path))


def _parents_first(rows: list[tuple[str, int, int, dict[str, JSON]]]) -> list[dict[str, JSON]]:
    """The entries in the given order, except that an entry waits for its parent.  A cycle of
    parents is broken once, at its earliest entry, which starts a tree (``pi:cycle``); the
    rest of the cycle follows it as written (it was shattered into one-entry trees)."""
    out: list[dict[str, JSON]] = []
    done: set[str] = set()
    waiting: dict[str, list[dict[str, JSON]]] = {}

    def place(e: dict[str, JSON]) -> None:
        todo = [e]
        while todo:
            x = todo.pop(0)
            parent = x.get("parentId")
            if parent is not None and parent not in done:
                waiting.setdefault(parent, []).append(x)
                continue
            out.append(x)
            done.add(x["id"])
            todo[:0] = waiting.pop(x["id"], [])

    for *_, e in rows:
        place(e)
    order = {e["id"]: i for i, (*_, e) in enumerate(rows)}
    for x in _cycle_starts({e["id"]: e for ys in waiting.values() for e in ys}, order):
        waiting[x["parentId"]] = [y for y in waiting[x["parentId"]] if y is not x]
        x["pi:relinked_from"], x["parentId"], x["pi:cycle"] = x["parentId"], None, True
        place(x)
    return out


def _cycle_starts(
    stuck: dict[str, dict[str, JSON]], order: dict[str, int]
) -> list[dict[str, JSON]]:
    """The earliest entry of each cycle among ``stuck`` (entries whose parent never came, each
    with one parent: a walk from each finds at most one cycle), in order; linear."""
    state: dict[str, int] = {}  # 1: on the current walk, 2: walked
    starts = []
    for sid in stuck:
        path, cur = [], sid
        while cur in stuck and cur not in state:
            state[cur] = 1
            path.append(cur)
            cur = stuck[cur]["parentId"]
        if state.get(cur) == 1:
            starts.append(min(path[path.index(cur) :], key=order.__getitem__))
        state.update(dict.fromkeys(path, 2))
    return [stuck[i] for i in sorted(starts, key=order.__getitem__)]
