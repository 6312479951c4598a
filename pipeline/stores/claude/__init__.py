"""Claude Code session stores (specs/claude-code.md): ``~/.claude/projects/<project>/<session>.jsonl``.

A unit is one project folder (resumes and subagents cross files); a single
session file is a unit too.  Each session file is one session: its tree
built by ``tree.py`` (compactions joined, artifacts linearised, real rewinds
kept as forks) and converted by ``convert.py``.  A resumed session's replayed
prefix (the same ``uuid`` in a later file) is kept once, in the earliest file.
Agent files (``<session>/subagents/agent-<id>.jsonl``, or ``agent-<id>.jsonl``
beside the sessions in 2.0.x) are sessions of their own, linked from the tool
call that spawned them.  The newest ``last-prompt.leafUuid`` becomes the
reserved ``leaf`` label, which the ``current`` policy follows.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trajset.redactors.identities import Identity, identities_of
from trajset.schemas.session import Issue

from ...errors import SessionReadError
from ..base import Fixture, Location, Unit, UnitOptions, read_input
from ..draft import EPOCH, SessionDraft
from ..regular import open_input
from ..template import ConvertingReader
from ..uuid_tree import first_session_id, places
from .convert import tree_entries
from .files import agents_in, looks_like_claude, sessions_in
from .lines import Record, read_lines
from .tree import build

JSON = Any


class ClaudeCodeReader(ConvertingReader["Read", "Trunk | Agent"]):
    """``claude-code``: ``~/.claude/projects``, one project folder, or one session file."""

    kind = "claude-code"
    fixtures = (
        Fixture("upstream/claude-code/teich"),
        Fixture("upstream/claude-code/synthetic-rewind"),
    )
    locations = (Location("~/.claude", env="CLAUDE_CONFIG_DIR", below="projects"),)
    identity_fields = (("workdir", "each record's cwd"), ("branch", "each record's gitBranch"))

    def detect(self, path: Path) -> bool:
        if path.is_file():
            return path.suffix == ".jsonl" and looks_like_claude(path)
        if not path.is_dir():
            return False
        return bool(sessions_in(path)) or any(p.is_dir() and sessions_in(p) for p in path.iterdir())

    def units(self, path: Path, options: UnitOptions = ()) -> list[Unit]:
        if path.is_file():
            return [self.unit((str(path),), name=str(path))]
        projects = (
            [path]
            if sessions_in(path)
            else [p for p in sorted(path.iterdir()) if p.is_dir() and sessions_in(p)]
        )
        return [
            self.unit(tuple(str(f) for f in [*sessions_in(p), *agents_in(p)]), name=str(p))
            for p in projects
        ]

    def files(self, unit: Unit) -> tuple[str, ...]:
        """The unit's session files (not its agents'), in the order they were started."""
        trunks = [Path(f) for f in unit.files if not Path(f).name.startswith("agent-")]
        return tuple(str(f) for f in sorted(trunks, key=_first_time))

    def read(self, path: Path, unit: Unit, earlier: list[Read]) -> Read:
        """A session file's records, numbered on from the unit's earlier files."""
        start = earlier[-1].end if earlier else 0
        try:
            records, issues = read_lines(path, start)
        except OSError as exc:
            raise SessionReadError(f"the file cannot be read: {exc.strerror or exc}",
                                   rule="unreadable", source=str(path)) from None  # fmt: skip
        if not records and not issues:
            raise SessionReadError("the file holds no record", rule="empty", source=str(path))
        return Read(path, records, issues, start + len(records) + 1)

    def join(self, read: list[Read], unit: Unit) -> list[Trunk | Agent]:
        """Each session file (a resumed session's replayed prefix kept once, in the earliest
        file), each followed by the agents its tool results name; then the agents no
        session file names, below the session their records carry."""
        files = [Path(f) for f in unit.files]
        agents = {f.stem.removeprefix("agent-"): f for f in files if f.name.startswith("agent-")}
        metas = {a: _meta(f) for a, f in agents.items()}
        out: list[Trunk | Agent] = []
        seen: set[str] = set()
        spawned: set[str] = set()
        for r in read:
            fresh = [x for x in r.records if not x.uuid or x.uuid not in seen]
            seen |= {x.uuid for x in r.records if x.uuid}
            links = _links(fresh, agents, metas)
            out.append(Trunk(r.path, fresh, r.issues, links))
            for agent, call_id in links.values():
                aid = agent.removeprefix("agent-")
                if aid not in spawned:
                    spawned.add(aid)
                    out.append(Agent(agents[aid], metas[aid], _sid(r.path, fresh), call_id))
        # an agent no trunk links to (its spawning call cut off, or its trunk not kept) is
        # still a session: its parent is the trunk id its records carry
        out += [Agent(agents[a], metas[a]) for a in sorted(set(agents) - spawned)]
        return out

    def convert(self, tree: Trunk | Agent, unit: Unit) -> SessionDraft:
        if isinstance(tree, Trunk):
            return _session(tree.path, tree.records, tree.issues, tree.links)
        return _agent_session(tree)

    def session_ids(self, unit: Unit) -> list[str]:
        """Each file's session id as its load names it: a trunk file's first ``sessionId``
        (a copy under another name is then the duplicate it is), an agent file's stem."""
        return [_first_sid(Path(f)) for f in unit.files]

    def identities(self, unit: Unit) -> list[Identity]:
        return identities_of([pair for f in unit.files for pair in places(Path(f))])

    def inputs(self, unit: Unit) -> tuple[str, ...]:
        """The unit's session files and each agent file's ``.meta.json``."""
        metas = (_meta_path(Path(f)) for f in unit.files if Path(f).name.startswith("agent-"))
        return (*unit.files, *(str(m) for m in metas if m.is_file()))


def _first_time(path: Path) -> tuple[str, str]:
    try:
        with open_input(path) as fh:
            for line in fh:
                d = json.loads(line) if line.strip() else None
                if isinstance(d, dict) and d.get("timestamp"):
                    return str(d["timestamp"]), path.name
    except (OSError, ValueError, UnicodeDecodeError, RecursionError):
        pass
    return "", path.name


def _first_sid(path: Path) -> str:
    """``_sid`` of a file without parsing it: the first ``sessionId`` a line names."""
    return path.stem if path.name.startswith("agent-") else first_session_id(path)


def _sid(path: Path, records: list[Record]) -> str:
    return next((str(r.raw["sessionId"]) for r in records if r.raw.get("sessionId")), path.stem)


def _links(
    records: list[Record], agents: dict[str, Path], metas: dict[str, Meta]
) -> dict[str, tuple[str, str]]:
    """Tool-result record uuid -> (agent session id, spawning call id), for agents present:
    by the result's ``toolUseResult.agentId``, else by the agent's ``.meta.json`` ``toolUseId``."""
    by_call = {str(m.fields["toolUseId"]): a for a, m in metas.items() if m.fields.get("toolUseId")}
    out: dict[str, tuple[str, str]] = {}
    for r in records:
        if r.kind != "user":
            continue
        blocks = (r.raw.get("message") or {}).get("content") or []
        calls = [
            str(b.get("tool_use_id"))
            for b in blocks
            if isinstance(b, dict) and b.get("type") == "tool_result"
        ]
        result = r.raw.get("toolUseResult")
        agent = str(result.get("agentId") or "") if isinstance(result, dict) else ""
        if agent not in agents:
            agent = next((by_call[c] for c in calls if c in by_call), "")
        if agent:
            out[r.uuid] = (f"agent-{agent}", calls[0] if calls else "")
    return out


@dataclass(frozen=True)
class Read:
    """A session file's records (``read_lines``), its problems, and where the next file's
    records are numbered from (their positions run on across the unit's files)."""

    path: Path
    records: list[Record]
    issues: list[Issue]
    end: int


@dataclass(frozen=True)
class Trunk:
    """A session file's records to convert (those no earlier file had), and its agent links."""

    path: Path
    records: list[Record]
    issues: list[Issue]
    links: dict[str, tuple[str, str]]


@dataclass(frozen=True)
class Agent:
    """An agent file to read and convert, below ``parent`` (spawned by ``call_id``)."""

    path: Path
    meta: Meta
    parent: str = ""
    call_id: str = ""


@dataclass(frozen=True)
class Meta:
    """An agent file's ``agent-<id>.meta.json`` (``agentType``, ``description``,
    ``toolUseId``, ``worktreePath``): kept on the agent's session as ``claude:agent``."""

    fields: dict[str, JSON]
    issue: Issue | None = None


def _meta_path(agent_file: Path) -> Path:
    return agent_file.with_name(agent_file.stem + ".meta.json")


def _meta(agent_file: Path) -> Meta:
    """The agent's ``.meta.json``; one that does not read is an issue of the agent's session."""
    path = _meta_path(agent_file)
    if not path.exists():
        return Meta({})
    try:
        fields = json.loads(read_input(path))
    except (SessionReadError, ValueError, UnicodeDecodeError, RecursionError) as exc:
        return Meta(
            {}, Issue("bad_meta", None, f"cannot read the agent's metadata: {exc}", str(path))
        )
    if not isinstance(fields, dict):
        return Meta(
            {}, Issue("bad_meta", 1, "the agent's metadata is not a JSON object", str(path))
        )
    return Meta(fields)


def _session(
    path: Path,
    records: list[Record],
    issues: list[Issue],
    links: dict[str, tuple[str, str]],
    **header: JSON,
) -> SessionDraft:
    sid = header.pop("id", None) or _sid(path, records)
    head = next((r.raw for r in records if r.raw.get("sessionId")), {})
    version = str(head["version"]) if head.get("version") else ""
    tree = build(records)
    issues = [*issues, *tree.issues]
    first = next((r for r in records if r.ts), None)
    first_ts = first.ts if first else EPOCH
    d = SessionDraft(sid, str(path), "claude-code", "claude-code", version, ts=first_ts)
    emitter = tree_entries(tree, links, first_ts, d)
    chain = {r.uuid for r in tree.records}
    leaf = next(
        (
            str(r.raw["leafUuid"])
            for r in reversed(records)
            if r.kind == "last-prompt" and r.raw.get("leafUuid") in chain
        ),
        "",
    )
    if leaf:
        d.label_leaf(emitter.tail[leaf], "leaf-label", unless_last=False)
    d.created_at = first_ts
    if head.get("cwd"):
        d.members["cwd"] = str(head["cwd"])
    d.members.update(header)
    d.members["claude:meta"] = [r.raw for r in records if not r.uuid]
    for r in records:  # every record names the folder and branch it ran in
        d.meet("workdir", r.raw.get("cwd"))
        d.meet("branch", r.raw.get("gitBranch"))
    d.counts.update(emitter.counts)
    d.issues = [*issues, *d.issues]  # the files', then the converter's
    return d


def _agent_session(a: Agent) -> SessionDraft:
    """An agent file as its own session, below ``parent`` (the trunk id its records carry
    when no trunk links to it), with its ``.meta.json`` as the ``claude:agent`` header member."""
    path, meta, parent, call_id = a.path, a.meta, a.parent, a.call_id
    agent = path.stem
    records, issues = read_lines(path, 0)
    header: dict[str, JSON] = {"id": agent}
    parent = parent or _sid(path, records)
    if parent != agent:
        header["parent_session"] = parent
    if call_id:
        header["spawned_by"] = call_id
    if meta.fields:
        header["claude:agent"] = meta.fields
    return _session(path, records, [*issues, *([meta.issue] if meta.issue else [])], {}, **header)
