"""An owner's session files cut into the groups that forks join (spec §7).

A fork must be read with its source (its trunk is verified against the
source's and merged onto it); sessions no fork joins need not be read
together. So a unit is one such group, not the whole owner: a store of one
busy owner uses every worker, and a worker holds one group's sessions at a
time. A side chat is a tree of its own that needs only its own record (its
``parent_sid`` becomes a link), so it is a group of its own. Fork notes are
read generously here (every note's source, verified or not), so a group never
separates two sessions that ``lineage.fork_edges`` could join; it verifies
them when the group is loaded, as it did for the whole owner. Groups come in
the order of their first session (``started_at``, then sid), the order of
their roots: a fork starts after its source.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson

from ..regular import read_bytes
from . import texts
from .record import iso_ms

JSON = Any


def groups(files: list[Path]) -> list[list[Path]]:
    """``files`` (session.json paths, in order) as lineage groups, each in that order."""
    found = [_facts(f) for f in files]
    parent = {sid: sid for sid, _, _ in found}

    def root(sid: str) -> str:
        while parent[sid] != sid:
            parent[sid] = parent[parent[sid]]
            sid = parent[sid]
        return sid

    for sid, _, links in found:
        for other in links:
            if other in parent:
                a, b = root(sid), root(other)
                parent[max(a, b)] = min(a, b)
    members: dict[str, list[tuple[Path, tuple[int, str]]]] = {}
    for f, (sid, started, _) in zip(files, found, strict=True):
        members.setdefault(root(sid), []).append((f, (started, sid)))
    ordered = sorted(members.values(), key=lambda group: min(key for _, key in group))
    return [[f for f, _ in group] for group in ordered]


def _facts(path: Path) -> tuple[str, int, set[str]]:
    """(sid, started_at in ms, sids its fork notes name) of one session file; an unreadable
    file is a group of its own (the reader reports it when the group is loaded)."""
    try:
        data = read_bytes(path)
        try:
            raw = orjson.loads(data)
        except orjson.JSONDecodeError:  # what orjson refuses (lone surrogates, huge integers)
            raw = json.loads(data)
    except (OSError, ValueError, RecursionError):
        return path.parent.name, 0, set()
    if not isinstance(raw, dict):
        return path.parent.name, 0, set()
    sid = raw.get("sid")
    sid = sid if isinstance(sid, str) and sid else path.parent.name
    links: set[str] = set()
    for event in raw.get("events") or []:
        data_ = event.get("data") if isinstance(event, dict) else None
        if (
            isinstance(data_, dict)
            and event.get("event") == "harness_note"
            and data_.get("kind") == "fork"
        ):
            m = texts.FORK_SOURCE_RE.search(str(data_.get("detail") or ""))
            if m:
                links.add(m.group(1))
    return sid, iso_ms(raw.get("started_at")), links
