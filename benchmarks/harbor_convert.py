"""Harbor's own session → ATIF converters over a whole store, one session at a time.

    python harbor_convert.py {claude-code|codex|gemini-cli|pi} STORE OUT

Run with Harbor's Python (``peers.py`` does): Harbor converts the one session of an agent's
logs folder after a trial (``convert_trajectory(logs_dir)`` of its ``ClaudeCode`` and
``Codex`` agents, ``populate_context_post_run`` of its ``GeminiCli`` and ``Pi`` agents, which
write ``trajectory.json`` into the logs folder), so a user converting a store with it calls
that once per session.  Each session gets a logs folder holding a link to its files where
the agent looks for them (``sessions/projects/<slug>/`` with the session's ``subagents/``
folder for Claude Code, ``sessions/YYYY/MM/DD/`` for Codex, ``gemini-cli.trajectory.json``
or ``.jsonl`` for Gemini CLI, ``pi/sessions/`` for Pi), and its trajectory is written as
Harbor writes it after a trial.  Nothing of Harbor outside the converters runs; nothing reaches the network.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any


def _claude(store: Path, out: Path) -> int:
    from harbor.agents.installed.claude_code import ClaudeCode

    agent = ClaudeCode(logs_dir=out)
    written = 0
    for i, session in enumerate(sorted(store.rglob("*.jsonl"))):
        if "subagents" in session.parts:
            continue
        with tempfile.TemporaryDirectory() as tmp:
            project = Path(tmp) / "sessions" / "projects" / session.parent.name
            project.mkdir(parents=True)
            (project / session.name).symlink_to(session)
            if (subagents := session.with_suffix("") / "subagents").is_dir():
                (project / session.stem).mkdir()
                (project / session.stem / "subagents").symlink_to(subagents)
            trajectory = agent.convert_trajectory(Path(tmp))
        if trajectory is not None:
            with open(out / f"{i:05d}.trajectory.json", "w", encoding="utf-8") as handle:
                json.dump(trajectory.to_json_dict(), handle, indent=2, ensure_ascii=False)
            written += 1
    return written


def _codex(store: Path, out: Path) -> int:
    from harbor.agents.installed.codex import Codex
    from harbor.utils.trajectory_utils import format_trajectory_json

    agent = Codex(logs_dir=out)
    written = 0
    for i, rollout in enumerate(sorted(store.rglob("rollout-*.jsonl"))):
        with tempfile.TemporaryDirectory() as tmp:
            day = Path(tmp) / "sessions" / Path(*rollout.parent.parts[-3:])
            day.mkdir(parents=True)
            (day / rollout.name).symlink_to(rollout)
            trajectory = agent.convert_trajectory(Path(tmp))
        if trajectory is not None:
            text = format_trajectory_json(trajectory.to_json_dict())
            (out / f"{i:05d}.trajectory.json").write_text(text, encoding="utf-8")
            written += 1
    return written


def _after_trial(
    agent: Any, sessions: list[Path], place: Callable[[Path, Path], Path], out: Path
) -> int:
    """What a trial runs after the agent, once per session: ``populate_context_post_run``
    with the session linked into a fresh logs folder (``place`` says where); the
    ``trajectory.json`` it writes there is kept."""
    from harbor.models.agent.context import AgentContext

    written = 0
    for i, session in enumerate(sessions):
        with tempfile.TemporaryDirectory() as tmp:
            place(Path(tmp), session).symlink_to(session)
            agent.logs_dir = Path(tmp)
            agent.populate_context_post_run(AgentContext())
            if (Path(tmp) / "trajectory.json").exists():
                shutil.move(Path(tmp) / "trajectory.json", out / f"{i:05d}.trajectory.json")
                written += 1
    return written


def _gemini(store: Path, out: Path) -> int:
    from harbor.agents.installed.gemini_cli import GeminiCli

    chats = sorted(p for p in store.rglob("chats/session-*") if p.suffix in (".json", ".jsonl"))
    return _after_trial(
        GeminiCli(logs_dir=out), chats, lambda tmp, p: tmp / f"gemini-cli.trajectory{p.suffix}", out
    )


def _pi(store: Path, out: Path) -> int:
    from harbor.agents.installed.pi import Pi

    def place(tmp: Path, session: Path) -> Path:
        (tmp / "pi" / "sessions").mkdir(parents=True)
        return tmp / "pi" / "sessions" / session.name

    return _after_trial(Pi(logs_dir=out), sorted(store.rglob("*.jsonl")), place, out)


def main() -> None:
    kind, store, out = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    out.mkdir(parents=True, exist_ok=True)
    converters = {"claude-code": _claude, "codex": _codex, "gemini-cli": _gemini, "pi": _pi}
    written = converters[kind](store, out)
    print(f"{written} trajectories", file=sys.stderr)


if __name__ == "__main__":
    main()
