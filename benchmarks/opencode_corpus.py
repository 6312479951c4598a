"""An OpenCode data folder made from code, for the benchmark: the same conversations as
``corpus.py`` (tool calls, regenerated turns, large tool outputs, planted secrets) as a
v1.2 ``opencode.db`` holds them (specs/opencode.md §2-§4).

    python benchmarks/corpus.py corpus /tmp/oc --format opencode --sessions 200 --tool-output-kb 36

Eight sessions per project.  Each turn: the prompt, an assistant message whose step holds a
reasoning part (with its signature), a ``bash`` tool part (the output) and a step-finish with
usage, then a second assistant message with the answer.  A regenerated turn is OpenCode's
"Fork from message": a new session copying the messages before the turn's prompt (new ids,
the same data and creation times) and the turn asked again.  The database is in WAL mode.
"""

from __future__ import annotations

import json
import random
import sqlite3
from pathlib import Path
from typing import Any

from texts import sentence, tool_output

JSON = Any
PER_PROJECT = 8
SCHEMA = """
CREATE TABLE project (id TEXT PRIMARY KEY, worktree TEXT NOT NULL, vcs TEXT, name TEXT,
  icon_url TEXT, icon_color TEXT, time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL,
  time_initialized INTEGER, sandboxes TEXT NOT NULL, commands TEXT);
CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT NOT NULL, parent_id TEXT,
  slug TEXT NOT NULL, directory TEXT NOT NULL, title TEXT NOT NULL, version TEXT NOT NULL,
  share_url TEXT, summary_additions INTEGER, summary_deletions INTEGER, summary_files INTEGER,
  summary_diffs TEXT, revert TEXT, permission TEXT, time_created INTEGER NOT NULL,
  time_updated INTEGER NOT NULL, time_compacting INTEGER, time_archived INTEGER);
CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, time_created INTEGER NOT
  NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL);
CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT NOT NULL, session_id TEXT NOT NULL,
  time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL);
CREATE TABLE todo (session_id TEXT NOT NULL, content TEXT NOT NULL, status TEXT NOT NULL,
  priority TEXT NOT NULL, position INTEGER NOT NULL, time_created INTEGER NOT NULL,
  time_updated INTEGER NOT NULL);
CREATE INDEX message_session_idx ON message (session_id);
CREATE INDEX part_message_idx ON part (message_id);
CREATE INDEX part_session_idx ON part (session_id);
CREATE INDEX session_project_idx ON session (project_id);
"""
MODEL = {"providerID": "anthropic", "modelID": "claude-sonnet-4-5"}


class _Writer:
    """Rows of the database being built, and OpenCode-shaped ids."""

    def __init__(self, rng: random.Random) -> None:
        self.rng, self.n = rng, 0
        self.rows: dict[str, list[tuple[JSON, ...]]] = {"session": [], "message": [], "part": []}
        self.of: dict[str, list[tuple[tuple[JSON, ...], list[tuple[JSON, ...]]]]] = {}

    def copy(self, source: str, fork: str, at: int) -> None:
        """``Session.fork``: the source's messages so far, new ids, the same data and times."""
        for m, parts in list(self.of.get(source, [])):
            new = (self.id("msg", m[2]), fork, m[2], at, m[4])
            self.rows["message"].append(new)
            copied = [(self.id("prt", at), new[0], fork, at, at, p[5]) for p in parts]
            self.rows["part"].extend(copied)
            self.of.setdefault(fork, []).append((new, copied))

    def id(self, prefix: str, ms: int) -> str:
        self.n += 1
        value = (ms * 4096 + self.n % 4096) % (1 << 48)
        if prefix == "ses":
            value ^= (1 << 48) - 1
        return f"{prefix}_{value:012x}{self.rng.getrandbits(80):020x}"[: len(prefix) + 27]

    def message(self, sid: str, ms: int, data: JSON, parts: list[JSON]) -> str:
        mid = self.id("msg", ms)
        row = (mid, sid, ms, ms, json.dumps({**data, "time": {"created": ms}}))
        rows = [(self.id("prt", ms), mid, sid, ms, ms, json.dumps(p)) for p in parts]
        self.rows["message"].append(row)
        self.rows["part"].extend(rows)
        self.of.setdefault(sid, []).append((row, rows))
        return mid


def _turn(w: _Writer, sid: str, ms: int, cwd: str, index: int, prompt: str, output: str) -> int:
    """One turn's three messages from ``ms`` on; the time after it."""
    rng = w.rng
    user = w.message(sid, ms, {"role": "user", "agent": "build", "model": MODEL},
                     [{"type": "text", "text": prompt}])  # fmt: skip
    head = {"role": "assistant", "parentID": user, "mode": "build", "agent": "build",
            "path": {"cwd": cwd, "root": cwd}, **MODEL}  # fmt: skip

    def finish(reason: str) -> JSON:
        tokens = {"input": rng.randint(5, 50), "output": rng.randint(40, 900), "reasoning": 0,
                  "cache": {"read": rng.randint(5_000, 40_000), "write": rng.randint(0, 2_000)}}  # fmt: skip
        return {"type": "step-finish", "reason": reason, "cost": 0.01, "tokens": tokens}

    call = {"type": "tool", "tool": "bash", "callID": f"toolu_{rng.getrandbits(96):024x}",
            "state": {"status": "completed", "title": "Run the test",
                      "input": {"command": f"pytest -q tests/test_{index}.py"}, "output": output,
                      "metadata": {"exit": 1 if rng.random() < 0.25 else 0}}}  # fmt: skip
    thinking = {"type": "reasoning", "text": sentence(rng, 20),
                "metadata": {"anthropic": {"signature": f"{rng.getrandbits(512):0128x}"}}}  # fmt: skip
    w.message(sid, ms + 300, {**head, "finish": "tool-calls"},
              [{"type": "step-start"}, thinking, call, finish("tool-calls")])  # fmt: skip
    w.message(sid, ms + 3_300, {**head, "finish": "stop"},
              [{"type": "step-start"}, {"type": "text", "text": sentence(rng, 18)}, finish("stop")])  # fmt: skip
    return ms + 30_000


def _session(w: _Writer, project: str, cwd: str, ms: int, title: str) -> str:
    sid = w.id("ses", ms)
    w.rows["session"].append((sid, project, None, "s", cwd, title, "1.2.10", None, None, None,
                              None, None, None, None, ms, ms, None, None))  # fmt: skip
    return sid


def build_opencode_corpus(
    dest: Path,
    sessions: int,
    seed: int = 1,
    *,
    turns: int = 8,
    fork_rate: float = 0.3,
    tool_output_bytes: int = 0,
) -> int:
    """Write ``dest/opencode.db`` holding ``sessions`` sessions (and their forks); its bytes."""
    rng = random.Random(seed)
    w = _Writer(rng)
    projects = []
    for i in range(sessions):
        project, cwd = f"{rng.getrandbits(160):040x}", f"/work/project-{i // PER_PROJECT}"
        if i % PER_PROJECT:
            project = projects[-1][0]
        else:
            projects.append((project, cwd))
        ms = 1_780_000_000_000 + i * 3_600_000
        sid = _session(w, project, cwd, ms, f"Fix the tests of module {i}")
        at = ms + 500
        for t in range(turns):
            task = f"Fix failing test {t} of module {i}: {sentence(rng, 8)}"
            out = tool_output(rng, i, tool_output_bytes)
            if t and t < turns - 1 and rng.random() < fork_rate:  # forked before this prompt
                fork = _session(w, project, cwd, at + 10, f"Fix the tests of module {i} (fork #1)")
                w.copy(sid, fork, at + 10)
                _turn(w, fork, at + 20, cwd, i, "Try again, differently: " + task, out)
            at = _turn(w, sid, at + 60_000, cwd, i, task, out)
    dest.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(dest / "opencode.db")
    db.execute("PRAGMA journal_mode=WAL")
    db.executescript(SCHEMA)
    db.executemany("INSERT INTO project VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                   [(p, c, "git", None, None, None, 1, 1, None, "[]", None) for p, c in projects])  # fmt: skip
    for table, rows in w.rows.items():
        marks = ",".join("?" * len(rows[0])) if rows else ""
        db.executemany(f"INSERT INTO {table} VALUES ({marks})", rows)
    db.commit()
    db.close()
    return (dest / "opencode.db").stat().st_size
