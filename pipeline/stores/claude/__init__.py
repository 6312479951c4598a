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
from trajset.schemas.session import Issue, Session

from ...errors import SessionReadError
from ..base import Loaded, Location, Reader, Unit, UnitOptions, converted_session, read_input
from ..regular import open_input
from .convert import tree_entries
from .lines import Record, read_lines
from .tree import build

JSON = Any
KNOWN = frozenset(
    {
        "user",
        "assistant",
        "summary",
        "system",
        "attachment",
        "progress",
        "queue-operation",
        "file-history-snapshot",
        "permission-mode",
        "last-prompt",
        "ai-title",
        "custom-title",
    }
)


def looks_like_claude(path: Path) -> bool:
    """The first line is a Claude Code record (not an Agent Session Format header)."""
    if not path.is_file():  # a FIFO would block, a folder has no line
        return False
    try:
        with open_input(path) as fh:
            first = next((line for line in fh if line.strip()), b"")
        d = json.loads(first)
    except (OSError, ValueError, UnicodeDecodeError, RecursionError):
        return False
    if not isinstance(d, dict) or "format" in d or "projectHash" in d:  # a Gemini CLI chat's
        return False
    kind = d.get("type")
    if "sessionId" in d:
        return True
    # a known record type with Claude Code's camelCase keys (leafUuid, messageId, ...); the
    # same type names in snake_case records (a suga export's "type": "user") are not ours
    return isinstance(kind, str) and kind in KNOWN and any(k != k.lower() for k in d)


def _sessions_in(folder: Path) -> list[Path]:
    return [
        p
        for p in sorted(folder.glob("*.jsonl"))
        if not p.name.startswith("agent-") and looks_like_claude(p)
    ]


def _agents_in(folder: Path) -> list[Path]:
    return sorted([*folder.glob("agent-*.jsonl"), *folder.glob("*/subagents/agent-*.jsonl")])


class ClaudeCodeReader(Reader):
    """``claude-code``: ``~/.claude/projects``, one project folder, or one session file."""

    kind = "claude-code"
    locations = (Location("~/.claude", env="CLAUDE_CONFIG_DIR", below="projects"),)
    identity_fields = (("workdir", "each record's cwd"), ("branch", "each record's gitBranch"))

    def detect(self, path: Path) -> bool:
        if path.is_file():
            return path.suffix == ".jsonl" and looks_like_claude(path)
        if not path.is_dir():
            return False
        return bool(_sessions_in(path)) or any(
            p.is_dir() and _sessions_in(p) for p in path.iterdir()
        )

    def units(self, path: Path, options: UnitOptions = ()) -> list[Unit]:
        if path.is_file():
            return [self.unit((str(path),), name=str(path))]
        projects = (
            [path]
            if _sessions_in(path)
            else [p for p in sorted(path.iterdir()) if p.is_dir() and _sessions_in(p)]
        )
        return [
            self.unit(tuple(str(f) for f in [*_sessions_in(p), *_agents_in(p)]), name=str(p))
            for p in projects
        ]

    def load(self, unit: Unit) -> Loaded:
        files = [Path(f) for f in unit.files]
        trunks = [f for f in files if not f.name.startswith("agent-")]
        agents = {f.stem.removeprefix("agent-"): f for f in files if f.name.startswith("agent-")}
        metas = {a: _meta(f) for a, f in agents.items()}
        out: Loaded = []
        seen: set[str] = set()
        spawned: set[str] = set()
        start = 0
        for f in sorted(trunks, key=_first_time):
            try:
                records, issues = read_lines(f, start)
            except SessionReadError as exc:
                out.append(exc)
                continue
            start += len(records) + 1
            fresh = [r for r in records if not r.uuid or r.uuid not in seen]
            seen |= {r.uuid for r in records if r.uuid}
            links = _links(fresh, agents, metas)
            out.append(_session(f, fresh, issues, links))
            for agent, call_id in links.values():
                aid = agent.removeprefix("agent-")
                if aid not in spawned:
                    spawned.add(aid)
                    out.append(_agent_session(agents[aid], metas[aid], _sid(f, fresh), call_id))
        # an agent no trunk links to (its spawning call cut off, or its trunk not kept) is
        # still a session: its parent is the trunk id its records carry
        out += [_agent_session(agents[a], metas[a]) for a in sorted(set(agents) - spawned)]
        return out

    def session_ids(self, unit: Unit) -> list[str]:
        return [Path(f).stem for f in unit.files]

    def identities(self, unit: Unit) -> list[Identity]:
        return identities_of([pair for f in unit.files for pair in _where(Path(f))])

    def inputs(self, unit: Unit) -> tuple[str, ...]:
        """The unit's session files and each agent file's ``.meta.json``."""
        metas = (_meta_path(Path(f)) for f in unit.files if Path(f).name.startswith("agent-"))
        return (*unit.files, *(str(m) for m in metas if m.is_file()))


#: how many lines ``identities`` reads of a file for its first record with a ``cwd``
HEAD_LINES = 64


def _where(path: Path) -> list[tuple[str, Any]]:
    """The working folder and git branch of the file's first record that names a folder."""
    try:
        with open_input(path) as fh:
            for _, line in zip(range(HEAD_LINES), fh, strict=False):
                d = json.loads(line) if line.strip() else None
                if isinstance(d, dict) and d.get("cwd"):
                    return [("workdir", d.get("cwd")), ("branch", d.get("gitBranch"))]
    except (OSError, ValueError, UnicodeDecodeError, RecursionError):
        pass
    return []


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
) -> Session:
    sid = header.pop("id", None) or _sid(path, records)
    tree = build(records)
    first = next((r for r in records if r.ts), None)
    first_ts = first.ts if first else "1970-01-01T00:00:00Z"
    emitter = tree_entries(tree, links, first_ts)
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
        last = emitter.raws[-1]
        emitter.add(
            "leaf-label", last["id"], "label", last["ts"], target=emitter.tail[leaf], label="leaf"
        )
    head = next((r.raw for r in records if r.raw.get("sessionId")), {})
    raw_header: dict[str, JSON] = {
        "type": "session",
        "format": "agentsession/0.2",
        "id": sid,
        "created_at": first_ts,
        "payload": "openresponses/2026-04-24",
        "harness": {
            "name": "claude-code",
            **({"version": str(head["version"])} if head.get("version") else {}),
        },
    }
    if head.get("cwd"):
        raw_header["cwd"] = str(head["cwd"])
    raw_header.update(header)
    raw_header["claude:meta"] = [r.raw for r in records if not r.uuid]
    return converted_session(
        raw_header, emitter.raws, str(path), "claude-code", issues, dict(emitter.counts)
    )


def _agent_session(
    path: Path, meta: Meta, parent: str = "", call_id: str = ""
) -> Session | SessionReadError:
    """An agent file as its own session, below ``parent`` (the trunk id its records carry
    when no trunk links to it), with its ``.meta.json`` as the ``claude:agent`` header member."""
    agent = path.stem
    try:
        records, issues = read_lines(path, 0)
    except SessionReadError as exc:
        return exc
    header: dict[str, JSON] = {"id": agent}
    parent = parent or _sid(path, records)
    if parent != agent:
        header["parent_session"] = parent
    if call_id:
        header["spawned_by"] = call_id
    if meta.fields:
        header["claude:agent"] = meta.fields
    return _session(path, records, [*issues, *([meta.issue] if meta.issue else [])], {}, **header)
