"""GitHub Copilot CLI session stores (specs/copilot-cli.md): ``~/.copilot/session-state/<id>/events.jsonl``.

A unit is one lineage: a session's events file and the ``/fork`` copies of it (which repeat
its events under the same ids), or one flat ``<id>.jsonl``, or one legacy JSON session.
Each file is converted on its own (``convert.py``) under the lineage's session id, and the
copies' entries join the source's by id: the events they copied are the same entries, and
what each went on to do hangs from the last one copied, a fork.  Subagents (inline in the
file) are sessions of their own.  The newest file's last event becomes the reserved
``leaf`` label, which the ``current`` policy follows.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from trajset.redactors.identities import Identity, identities_of
from trajset.schemas.timestamps import RFC3339_RE

from ...errors import SessionReadError
from ..base import Fixture, Location, Match, Unit, UnitOptions
from ..draft import EPOCH, SessionDraft
from ..regular import open_input
from ..template import ConvertingReader
from .calls import tally, typed
from .convert import HARNESS, Converter
from .events import Events, read_events, read_legacy
from .files import first_event, is_events_file, is_legacy_file, lineages, session_files
from .legacy import chat_messages

JSON = Any


class CopilotCliReader(ConvertingReader[Events, SessionDraft]):
    """``copilot-cli``: ``~/.copilot`` (or ``$COPILOT_HOME``), its ``session-state``, a session
    folder, or one file."""

    kind = "copilot-cli"
    match = Match.MARKER  # producer "copilot-agent"
    fixtures = (
        Fixture("upstream/copilot-cli/real/lantern"),
        Fixture("upstream/copilot-cli/synthetic/home/.copilot"),
    )
    locations = (Location("~/.copilot", env="COPILOT_HOME"),)
    identity_fields = (
        ("workdir", "session.start context.cwd and gitRoot"),
        ("repo", "session.start context.repository"),
        ("branch", "session.start context.branch"),
    )

    def detect(self, path: Path) -> bool:
        if path.is_file():
            return is_events_file(path) or is_legacy_file(path)
        return path.is_dir() and bool(session_files(path))

    def units(self, path: Path, options: UnitOptions = ()) -> list[Unit]:
        return [
            self.unit(tuple(str(f) for f in group), name=str(group[0]))
            for group in lineages(session_files(path))
        ]

    def read(self, path: Path, unit: Unit, earlier: list[Events]) -> Events:
        got = read_legacy(path) if path.suffix == ".json" else read_events(path)
        if got.legacy is None and not got.events and not got.issues:
            raise SessionReadError("the file holds no event", rule="empty", source=str(path))
        return got

    def join(self, read: list[Events], unit: Unit) -> list[SessionDraft | SessionReadError]:
        """The lineage's sessions: each file converted under the first file's session id,
        the later files' entries joined to the first's by id."""
        if not read:
            return []
        sid = _session_id(read[0])
        merged: dict[str, SessionDraft] = {}
        last = ""
        for r in read:
            try:
                drafts = _convert(r, sid)
            except Exception as exc:  # one file's, not the lineage's
                return [SessionReadError(f"{type(exc).__name__}: {exc} (not expected; please "
                                         "report it with the input)", rule="internal",
                                         source=str(r.path))]  # fmt: skip
            for d in drafts:
                _join(merged, d, r)
            last = drafts[0].entries[-1]["id"] if drafts[0].entries else last
        for d in merged.values():
            d.counts.update(tally(d.entries))
        main = merged[sid]
        if len(read) > 1:
            main.label_leaf(last, "leaf-label")
        return list(merged.values())

    def convert(self, tree: SessionDraft, unit: Unit) -> SessionDraft:
        return tree

    def session_ids(self, unit: Unit) -> list[str]:
        return [_cheap_id(Path(unit.files[0]))]

    def identities(self, unit: Unit) -> list[Identity]:
        return identities_of([pair for f in unit.files for pair in _places(Path(f))])


def _session_id(r: Events) -> str:
    if r.legacy is not None:
        sid = r.legacy.get("sessionId")
    else:
        first = r.events[0][1] if r.events else {}
        sid = (
            first.get("data", {}).get("sessionId") if first.get("type") == "session.start" else None
        )
    return sid if isinstance(sid, str) and sid else _stem(r.path)


def _stem(path: Path) -> str:
    return path.parent.name if path.name == "events.jsonl" else path.stem


def _convert(r: Events, sid: str) -> list[SessionDraft]:
    """The file's sessions (the main one first), under the lineage's id ``sid``."""
    start, version, data = _start(r)
    c = Converter(sid, str(r.path), version, start)
    if r.legacy is not None:
        c.root(c.main, "config", start, {"selectedModel": r.legacy.get("selectedModel")})
        chat_messages(c.main, r.legacy.get("chatMessages"), "legacy", c.counts)
        c.main.draft.members["copilot:timeline"] = r.legacy.get("timeline")
    for line, e in r.events:
        c.event(line, e)
    drafts = c.sessions()
    main = drafts[0]
    main.created_at = start if start != EPOCH else ""
    context = typed(data.get("context"), dict, {})
    if isinstance(context.get("cwd"), str):
        main.members["cwd"] = context["cwd"]
    main.members["copilot:start"] = {k: v for k, v in data.items() if k != "sessionId"}
    for d in drafts:
        for key, kind in (
            ("cwd", "workdir"),
            ("gitRoot", "workdir"),
            ("repository", "repo"),
            ("branch", "branch"),
        ):
            d.meet(kind, context.get(key))
        d.issues = [*r.issues, *d.issues] if d is main else d.issues
    main.counts.update({f"{k}": n for k, n in r.counts.items()})
    return drafts


def _start(r: Events) -> tuple[str, str, dict[str, JSON]]:
    """(start time, Copilot version, the session.start data) of a file."""
    if r.legacy is not None:
        start = r.legacy.get("startTime")
        return (start if isinstance(start, str) and RFC3339_RE.match(start) else EPOCH), "", {}
    first = r.events[0][1] if r.events else {}
    data = first.get("data", {}) if first.get("type") == "session.start" else {}
    start = data.get("startTime") or first.get("timestamp")
    start = start if isinstance(start, str) and RFC3339_RE.match(start) else EPOCH
    version = data.get("copilotVersion")
    return start, version if isinstance(version, str) else "", data


def _join(merged: dict[str, SessionDraft], d: SessionDraft, r: Events) -> None:
    """``d``'s entries that ``merged`` lacks, added to its draft of the same session."""
    have = merged.get(d.id)
    if have is None:
        merged[d.id] = d
        return
    ids = {e["id"] for e in have.entries}
    have.entries += [e for e in d.entries if e["id"] not in ids]
    have.issues += d.issues
    have.counts.update(d.counts)  # the file's own (lines recovered, ephemeral events)
    have.met += [m for m in d.met if m not in have.met]
    copy = _session_id(r)
    if copy != d.id and d.id == next(iter(merged)):
        have.members.setdefault("copilot:forks", []).append(copy)


#: where a session names its folder, repository and branch (its start and resume events)
_PLACE = re.compile(rb'"(cwd|gitRoot|repository|branch)":\s*"((?:[^"\\]|\\.)*)"')
_KIND = {b"cwd": "workdir", b"gitRoot": "workdir", b"repository": "repo", b"branch": "branch"}


def _places(path: Path) -> list[tuple[str, Any]]:
    """The folders, repositories and branches the file's start and resume events name."""
    import json

    found: list[tuple[str, Any]] = []
    try:
        with open_input(path) as fh:
            for line in fh:
                if b'"session.start"' not in line[:64] and b'"session.resume"' not in line[:64]:
                    continue
                for key, value in _PLACE.findall(line):
                    try:
                        found.append((_KIND[key], json.loads(b'"' + value + b'"')))
                    except ValueError:
                        continue
    except OSError:
        pass
    return found


def _cheap_id(path: Path) -> str:
    if path.suffix == ".json":
        m = re.match(r"session_(.+)_\d+\.json", path.name)
        return m.group(1) if m else path.stem
    d = first_event(path) or {}
    sid = d.get("data", {}).get("sessionId") if isinstance(d.get("data"), dict) else None
    return sid if isinstance(sid, str) and sid else _stem(path)


__all__ = ["HARNESS", "CopilotCliReader"]
