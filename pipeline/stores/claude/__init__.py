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
from pathlib import Path
from typing import Any

from trajset.redactors.identities import Identity, identities_of
from trajset.schemas.session import Issue, Session

from ...errors import SessionReadError
from ..base import Loaded, Location, Reader, Unit, UnitOptions, converted_session
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
        with path.open("rb") as fh:
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
        out: Loaded = []
        seen: set[str] = set()
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
            links = _links(fresh, agents)
            out.append(_session(f, fresh, issues, links))
            for agent_id, (_, call_id) in (
                (a, v) for v in links.values() for a in [v[0].removeprefix("agent-")]
            ):
                out.append(_agent_session(agents[agent_id], _sid(f, fresh), call_id))
        return out

    def session_ids(self, unit: Unit) -> list[str]:
        return [Path(f).stem for f in unit.files]

    def identities(self, unit: Unit) -> list[Identity]:
        return identities_of([pair for f in unit.files for pair in _where(Path(f))])


#: how many lines ``identities`` reads of a file for its first record with a ``cwd``
HEAD_LINES = 64


def _where(path: Path) -> list[tuple[str, Any]]:
    """The working folder and git branch of the file's first record that names a folder."""
    try:
        with path.open("rb") as fh:
            for _, line in zip(range(HEAD_LINES), fh, strict=False):
                d = json.loads(line) if line.strip() else None
                if isinstance(d, dict) and d.get("cwd"):
                    return [("workdir", d.get("cwd")), ("branch", d.get("gitBranch"))]
    except (OSError, ValueError, UnicodeDecodeError, RecursionError):
        pass
    return []


def _first_time(path: Path) -> tuple[str, str]:
    try:
        with path.open("rb") as fh:
            for line in fh:
                d = json.loads(line) if line.strip() else None
                if isinstance(d, dict) and d.get("timestamp"):
                    return str(d["timestamp"]), path.name
    except (OSError, ValueError, UnicodeDecodeError, RecursionError):
        pass
    return "", path.name


def _sid(path: Path, records: list[Record]) -> str:
    return next((str(r.raw["sessionId"]) for r in records if r.raw.get("sessionId")), path.stem)


def _links(records: list[Record], agents: dict[str, Path]) -> dict[str, tuple[str, str]]:
    """Tool-result record uuid -> (agent session id, spawning call id), for agents present."""
    out: dict[str, tuple[str, str]] = {}
    for r in records:
        result = r.raw.get("toolUseResult")
        agent = str(result.get("agentId") or "") if isinstance(result, dict) else ""
        if agent in agents and r.kind == "user":
            blocks = (r.raw.get("message") or {}).get("content") or []
            call = next(
                (
                    str(b.get("tool_use_id"))
                    for b in blocks
                    if isinstance(b, dict) and b.get("type") == "tool_result"
                ),
                "",
            )
            out[r.uuid] = (f"agent-{agent}", call)
    return out


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


def _agent_session(path: Path, parent: str, call_id: str) -> Session | SessionReadError:
    agent = path.stem
    try:
        records, issues = read_lines(path, 0)
        return _session(
            path, records, issues, {}, id=agent, parent_session=parent, spawned_by=call_id
        )
    except SessionReadError as exc:
        return exc
