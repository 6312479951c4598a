"""Records linked by ``uuid``/``parentUuid``, as Claude Code and Qwen Code write them: one
JSON Lines record (``Record``) and the tree walks both readers share.

A node with several children is a real fork or a recording artifact; each reader
says which (``claude/tree.py``, ``qwen/tree.py``).  An artifact is linearised
(``linearise``): a later child hangs under the record written just before it in
that part of the tree, so nothing is lost and no branch is made up.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trajset.schemas.session import Issue

from .jsonl import BOM, decoded
from .regular import open_input

JSON = Any


@dataclass
class Record:
    """One line: its object, file and line number, and its position across the unit's files."""

    raw: dict[str, JSON]
    file: str
    line: int
    order: int

    @property
    def uuid(self) -> str:
        got = self.raw.get("uuid")
        return got if isinstance(got, str) else ""

    @property
    def kind(self) -> str:
        return str(self.raw.get("type") or "")

    @property
    def ts(self) -> str:
        return str(self.raw.get("timestamp") or "")


#: uuid -> the record, and uuid -> its parent's uuid (None: a root)
Chain = dict[str, Record]
Parents = dict[str, "str | None"]


def first_of_each(records: list[Record]) -> Chain:
    """uuid -> the first record of that uuid (a repeat is the earlier one's copy)."""
    chain: Chain = {}
    for r in records:
        if r.uuid and r.uuid not in chain:
            chain[r.uuid] = r
    return chain


_SESSION_ID = re.compile(rb'"sessionId":\s*"([^"\\]+)"')


def first_session_id(path: Path) -> str:
    """The first ``sessionId`` a line of the file names, without parsing it (else its stem)."""
    try:
        with open_input(path) as fh:
            for line in fh:
                if m := _SESSION_ID.search(line):
                    return m.group(1).decode("utf-8", errors="replace")
    except OSError:
        pass
    return path.stem


def children(chain: Chain, parent: Parents) -> dict[str, list[str]]:
    """uuid -> its children's uuids, in file order."""
    out: dict[str, list[str]] = defaultdict(list)
    for u in sorted(chain, key=lambda u: chain[u].order):
        p = parent.get(u)
        if p is not None:
            out[p].append(u)
    return out


def descendants(uuid: str, kids: dict[str, list[str]]) -> set[str]:
    out, todo = set(), [uuid]
    while todo:
        u = todo.pop()
        out.add(u)
        todo.extend(kids.get(u, ()))
    return out


def linearise(p: str, moved: list[str], chain: Chain, parent: Parents) -> None:
    """Each of ``moved`` (children of ``p``) under the record written just before it in
    ``p``'s part of the tree (still ``p`` when nothing there was written before it)."""
    tree = children(chain, parent)
    for k in moved:
        region = descendants(p, tree) - descendants(k, tree)
        before = [u for u in region if chain[u].order < chain[k].order]
        parent[k] = max(before, key=lambda u: chain[u].order) if before else p
        tree = children(chain, parent)


def acyclic(chain: Chain, parent: Parents, issues: list[Issue]) -> None:
    """Each record whose parent descends from it starts a tree of its own, with an issue:
    in file order, the first record whose walk to its root meets a record twice.  Linear:
    a walk stops at a record already known to reach a root."""
    rooted: set[str] = set()
    for u in chain:
        walked, seen, cur = [u], {u}, parent.get(u)
        while cur is not None and cur not in rooted:
            if cur in seen:
                r = chain[u]
                issues.append(Issue("broken_link", r.line, f"uuid {u}: its parentUuid "
                                    f"{parent[u]} descends from it (a cycle); it starts a tree "
                                    "of its own", r.file))  # fmt: skip
                parent[u] = None
                walked = [u]
                break
            walked.append(cur)
            seen.add(cur)
            cur = parent.get(cur)
        rooted.update(walked)


def parents_first(chain: Chain, parent: Parents, kids: dict[str, list[str]]) -> list[Record]:
    """Roots in file order, each subtree depth first, children in file order."""
    out: list[Record] = []
    roots = sorted((u for u in chain if parent.get(u) is None), key=lambda u: chain[u].order)
    stack = list(reversed(roots))
    while stack:
        u = stack.pop()
        out.append(chain[u])
        stack.extend(reversed(kids.get(u, [])))
    return out


#: where a record's folder and branch stand in its line (Claude Code writes them before the
#: message, so the first match is the record's own; a parse confirms any change)
_WHERE = re.compile(rb'"(?:cwd|gitBranch)":\s*"(?:[^"\\]|\\.)*"')


def places(path: Path) -> list[tuple[str, Any]]:
    """The working folders and git branches of every record of the file, in order: each
    record names where it ran, and a session moves (``cd``, a new branch).  A line is
    parsed only when what its first ``cwd`` and ``gitBranch`` say differs from the line
    before, so a session that stays in one place is read, not parsed."""
    found: list[tuple[str, Any]] = []
    last: list[bytes] = []
    try:
        with open_input(path) as fh:
            for line in fh:
                hint = _WHERE.findall(line[:_HEAD]) or _WHERE.findall(line)
                if not hint or hint[:2] == last:
                    continue
                last = hint[:2]
                # a line that does not decode is its load's error row (glued records are read)
                for d in decoded(line.removeprefix(BOM).rstrip(b"\r\n"), glued=True)[0]:
                    if isinstance(d, dict):
                        found += [("workdir", d.get("cwd")), ("branch", d.get("gitBranch"))]
    except OSError:
        pass
    return found


#: how much of a line holds a record's own members before its message, usually
_HEAD = 2048
