"""Harbor's own session → ATIF converters over a whole store, one session at a time.

    python harbor_convert.py {claude-code|codex} STORE OUT

Run with Harbor's Python (``peers.py`` does): Harbor converts the one session of an agent's
logs folder after a trial (``convert_trajectory(logs_dir)`` of its ``ClaudeCode`` and
``Codex`` agents), so a user converting a store with it calls that once per session.  Each
session gets a logs folder holding links to its files where the agent looks for them
(``sessions/projects/<slug>/`` with the session's ``subagents/`` folder for Claude Code,
``sessions/YYYY/MM/DD/`` for Codex), and its trajectory is written as Harbor writes it
after a trial.  Nothing of Harbor outside the converters runs; nothing reaches the network.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path


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


def main() -> None:
    kind, store, out = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    out.mkdir(parents=True, exist_ok=True)
    written = {"claude-code": _claude, "codex": _codex}[kind](store, out)
    print(f"{written} trajectories", file=sys.stderr)


if __name__ == "__main__":
    main()
