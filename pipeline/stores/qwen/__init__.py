"""Qwen Code session stores (specs/qwen-code.md): ``~/.qwen/projects/<project>/chats/<session>.jsonl``.

A unit is one project folder: its sessions (``chats/``), the archived ones
(``chats/archive/``) and the background agents' transcripts
(``subagents/<session>/agent-<id>.jsonl``); a single session file is a unit too.
Each session file is one session, its tree built by ``tree.py`` (rewinds kept as
forks, metadata leaves linearised, failed attempts found) and converted by
``convert.py``.  A ``/branch`` copy repeats its source's records with the same
``uuid``s: its new records join the tree of the session that holds them, so the two
branches are one tree, with a fork where they part.  An agent transcript is a
session of its own (``<session>:<agent id>``), linked from the tool call that
started it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trajset.redactors.identities import Identity, identities_of
from trajset.schemas.session import Issue
from trajset.schemas.timestamps import RFC3339_RE

from ...errors import SessionReadError
from ..base import Fixture, Location, Unit, UnitOptions
from ..draft import EPOCH, SessionDraft
from ..regular import open_input
from ..template import ConvertingReader
from ..uuid_tree import Record, first_session_id, places
from .convert import tree_entries
from .files import is_qwen, project_files, projects
from .records import MESSAGES, read_records
from .tree import Tree, build, parts, subtype

JSON = Any


@dataclass(frozen=True)
class Read:
    """A file's records (``read_records``), its problems, and where the next file's records
    are numbered from."""

    path: Path
    records: list[Record]
    issues: list[Issue]
    end: int


@dataclass
class Session:
    """One session to convert: the records of its file and of the ``/branch`` copies that
    continue it (each record once), and the links to its agents."""

    id: str
    path: Path
    records: list[Record] = field(default_factory=list)
    issues: list[Issue] = field(default_factory=list)
    links: dict[str, tuple[str, str]] = field(default_factory=dict)
    header: dict[str, JSON] = field(default_factory=dict)


class QwenCodeReader(ConvertingReader[Read, Session]):
    """``qwen-code``: ``~/.qwen`` (or ``$QWEN_RUNTIME_DIR``), a project folder, or one file."""

    kind = "qwen-code"
    fixtures = (
        Fixture("upstream/qwen-code/synthetic/home/.qwen"),
        Fixture("upstream/qwen-code/third-party-synthetic/jazzyalex-agent-sessions"),
    )
    locations = (Location("~/.qwen", env="QWEN_RUNTIME_DIR", below="projects"),)
    identity_fields = (("workdir", "each record's cwd"), ("branch", "each record's gitBranch"))

    def detect(self, path: Path) -> bool:
        if path.is_file():
            return path.suffix == ".jsonl" and is_qwen(path)
        return path.is_dir() and bool(projects(path))

    def units(self, path: Path, options: UnitOptions = ()) -> list[Unit]:
        if path.is_file():
            return [self.unit((str(path),), name=str(path))]
        return [
            self.unit(tuple(str(f) for f in project_files(p)), name=str(p)) for p in projects(path)
        ]

    def files(self, unit: Unit) -> tuple[str, ...]:
        """The session files in the order they were started, then the agents' by name."""
        agents = [f for f in unit.files if _is_agent(Path(f))]
        trunks = sorted((f for f in unit.files if f not in agents), key=_first_time)
        return (*trunks, *agents)

    def read(self, path: Path, unit: Unit, earlier: list[Read]) -> Read:
        start = earlier[-1].end if earlier else 0
        records, issues = read_records(path, start)
        if not records and not issues:
            raise SessionReadError("the file holds no record", rule="empty", source=str(path))
        return Read(path, records, issues, start + len(records) + 1)

    def join(self, read: list[Read], unit: Unit) -> list[Session]:
        """Each session file, a ``/branch`` copy's new records joined to the session whose
        records it repeats; each followed by its agents, then the agents no session names."""
        sessions: list[Session] = []
        owner: dict[str, Session] = {}  # uuid -> the session that holds it
        agents: list[Read] = []
        for r in read:
            if _is_agent(r.path):
                agents.append(r)
                continue
            into = next((owner[x.uuid] for x in r.records if x.uuid in owner), None)
            if into is None:
                into = Session(_sid(r.path, r.records), r.path)
                sessions.append(into)
            elif (sid := _sid(r.path, r.records)) == into.id:  # in chats/ and archive/ both
                into.issues.append(Issue("conflict", None, f"session {sid} is also at "
                                         f"{into.path}; each record was read once", str(r.path)))  # fmt: skip
            else:
                into.header.setdefault("qwen:branches", []).append(sid)
            fresh = [x for x in r.records if not x.uuid or x.uuid not in owner]
            owner |= {x.uuid: into for x in fresh if x.uuid}
            into.records += fresh
            into.issues += r.issues
        by_id = {s.id: s for s in sessions}
        children = [_agent(a, by_id) for a in agents]
        out: list[Session] = []
        for s in sessions:
            out.append(s)
            for child in children:
                if child.header["parent_session"] == s.id:
                    _link(s, child)
                    out.append(child)
        return out + [c for c in children if c.header["parent_session"] not in by_id]

    def convert(self, tree: Session, unit: Unit) -> SessionDraft:
        return _session(tree)

    def session_ids(self, unit: Unit) -> list[str]:
        """Each session file's first ``sessionId``, each agent's ``<session>:<agent id>``."""
        return [
            f"{Path(f).parent.name}:{_agent_id(Path(f))}"
            if _is_agent(Path(f))
            else first_session_id(Path(f))
            for f in unit.files
        ]

    def identities(self, unit: Unit) -> list[Identity]:
        return identities_of([pair for f in unit.files for pair in places(Path(f))])


def _is_agent(path: Path) -> bool:
    return path.name.startswith("agent-") and path.parent.parent.name == "subagents"


def _agent_id(path: Path) -> str:
    return path.stem.removeprefix("agent-")


def _first_time(path: str) -> tuple[str, bool, str]:
    """When the file's first record was written; a ``/branch`` copy (its records carry
    ``forkedFrom``) after the session it copies, which it repeats to the millisecond; its
    name breaks ties."""
    try:
        with open_input(Path(path)) as fh:
            for line in fh:
                if m := _TIMESTAMP.search(line):
                    return (
                        m.group(1).decode("utf-8", errors="replace"),
                        b'"forkedFrom"' in line,
                        path,
                    )
    except OSError:
        pass
    return "", False, path


_TIMESTAMP = re.compile(rb'"timestamp":\s*"([^"\\]+)"')


def _sid(path: Path, records: list[Record]) -> str:
    found = (r.raw.get("sessionId") for r in records)
    return next((s for s in found if isinstance(s, str) and s), path.stem)


def _agent(a: Read, by_id: dict[str, Session]) -> Session:
    """An agent transcript as its own session, below the session its folder names (or the
    one that holds it, when that session was joined to another)."""
    named = a.path.parent.name
    parent = by_id.get(named)
    if parent is None:  # its session was a /branch copy: the session that holds its records
        parent = next(
            (s for s in by_id.values() if named in s.header.get("qwen:branches", [])), None
        )
    parent_id = parent.id if parent is not None else named
    s = Session(f"{parent_id}:{_agent_id(a.path)}", a.path, list(a.records), list(a.issues))
    s.header["parent_session"] = parent_id
    head = next((r.raw for r in a.records if r.raw.get("agentId")), {})
    s.header["qwen:agent"] = {
        k: head[k] for k in ("agentId", "agentName", "agentColor") if k in head
    }
    return s


def _link(parent: Session, child: Session) -> None:
    """The link from the tool result of the call that started the agent: the call a
    notification about it names, else the call whose output names its transcript."""
    agent = str(child.header["qwen:agent"].get("agentId") or child.id.rsplit(":", 1)[-1])
    call = ""
    for r in parent.records:
        task = (r.raw.get("systemPayload") or {}).get("backgroundTask")
        if isinstance(task, dict) and task.get("taskId") == agent and task.get("toolUseId"):
            call = str(task["toolUseId"])
            break
    for r in parent.records:
        if r.kind != "tool_result":
            continue
        for p in parts(r):
            fr = p.get("functionResponse")
            if not isinstance(fr, dict):
                continue
            cid = str(fr.get("id") or "")
            if cid == call or (not call and f"agent-{agent}.jsonl" in str(fr.get("response"))):
                parent.links[r.uuid] = (child.id, cid)
                child.header["spawned_by"] = cid
                return


def _session(s: Session) -> SessionDraft:
    head = next((r.raw for r in s.records if r.raw.get("sessionId") or r.raw.get("cwd")), {})
    version = str(head["version"]) if isinstance(head.get("version"), str) else ""
    tree = build(s.records)
    first = next((r.ts for r in s.records if RFC3339_RE.match(r.ts)), EPOCH)
    d = SessionDraft(s.id, str(s.path), "qwen-code", "qwen-code", version, ts=first)
    emitter = tree_entries(tree, s.links, first, d)
    _label_leaf(d, tree, emitter.tail)
    d.created_at = emitter.draft.entries[0]["ts"]
    if isinstance(head.get("cwd"), str):
        d.members["cwd"] = head["cwd"]
    d.members.update(s.header)
    d.members["qwen:meta"] = [r.raw for r in s.records if not r.uuid]
    for r in s.records:  # every record names the folder and branch it ran in
        d.meet("workdir", r.raw.get("cwd"))
        d.meet("branch", r.raw.get("gitBranch"))
    d.counts.update(emitter.counts)
    d.issues = [*s.issues, *tree.issues, *d.issues]
    return d


def _label_leaf(d: SessionDraft, tree: Tree, tail: dict[str, str]) -> None:
    """The reserved ``leaf`` label on the last message or rewind written (Qwen Code resumes
    the physically last record, the metadata records after it passed over)."""
    last = max(
        (r for r in tree.records if r.kind in MESSAGES or subtype(r) == "rewind"),
        key=lambda r: r.order,
        default=None,
    )
    if last is not None and last.uuid in tail:
        d.label_leaf(tail[last.uuid], "leaf-label")


__all__ = ["QwenCodeReader"]
