"""OpenCode v1.2 databases written for a test: the fixture's schema, rows of the test's own.

Ids follow OpenCode's layout (``<prefix>_<12 hex><14 base62>``, sessions bit-inverted),
times are integer ms, ``data`` is the record without its ids, as ``Session.updateMessage``
and ``updatePart`` store them (specs/opencode.md §2).
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

from .conftest import UPSTREAM

FIXTURE = UPSTREAM / "opencode" / "sqlite" / "opencode.db"
PROJECT = "56a86b29df7e04f91b34f4597147578783f1d5d9"  # the fixture's wordfreq project
ANTHROPIC = {"providerID": "anthropic", "modelID": "claude-sonnet-4-5"}


class OpenCodeDb:
    """A data folder holding ``opencode.db`` with the fixture's schema and projects, and no
    sessions until the test writes them."""

    def __init__(self, folder: Path, clock: int = 1_771_400_000_000) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.folder, self.path = folder, folder / "opencode.db"
        shutil.copy(FIXTURE, self.path)
        with self.connect() as db:
            for table in ("part", "message", "session", "todo"):
                db.execute(f"DELETE FROM {table}")
        self.clock, self.n = clock, 0

    def connect(self) -> sqlite3.Connection:
        return sqlite3.connect(self.path)

    def id(self, prefix: str, at: int) -> str:
        self.n += 1
        value = (at * 4096 + self.n) % (1 << 48)
        if prefix == "ses":
            value ^= (1 << 48) - 1
        return f"{prefix}_{value:012x}{self.n:014d}"

    def tick(self, ms: int = 1000) -> int:
        self.clock += ms
        return self.clock

    def session(self, title: str, *, parent: str | None = None, **columns: Any) -> str:
        at = self.tick()
        sid = self.id("ses", at)
        row = {"id": sid, "project_id": PROJECT, "parent_id": parent, "slug": "s",
               "directory": "/home/dev/wordfreq", "title": title, "version": "1.2.10",
               "time_created": at, "time_updated": at, **columns}  # fmt: skip
        for k in ("revert", "permission"):
            if isinstance(row.get(k), dict | list):
                row[k] = json.dumps(row[k])
        with self.connect() as db:
            db.execute(f"INSERT INTO session ({', '.join(row)}) VALUES "
                       f"({', '.join('?' * len(row))})", list(row.values()))  # fmt: skip
        return sid

    def message(self, sid: str, data: dict[str, Any], parts: list[dict[str, Any]]) -> str:
        at = self.tick()
        mid = self.id("msg", at)
        data = {**data, "time": {"created": at, **data.get("time", {})}}
        with self.connect() as db:
            db.execute("INSERT INTO message VALUES (?,?,?,?,?)",
                       (mid, sid, at, at, json.dumps(data)))  # fmt: skip
            for p in parts:
                pid = self.id("prt", self.tick(5))
                db.execute("INSERT INTO part VALUES (?,?,?,?,?,?)",
                           (pid, mid, sid, at, at, json.dumps(p)))  # fmt: skip
        return mid

    def user(self, sid: str, text: str, *parts: dict[str, Any]) -> str:
        data = {"role": "user", "agent": "build", "model": ANTHROPIC}
        return self.message(sid, data, [{"type": "text", "text": text}, *parts])

    def assistant(
        self, sid: str, prompt: str, *parts: dict[str, Any], finish: bool = True, **info: Any
    ) -> str:
        data = {"role": "assistant", "parentID": prompt, "agent": "build", "mode": "build",
                "providerID": "anthropic", "modelID": "claude-sonnet-4-5", **info}  # fmt: skip
        steps = [{"type": "step-start"}, *parts]
        if finish:
            steps.append({"type": "step-finish", "reason": "stop", "cost": 0.001,
                          "tokens": {"input": 100, "output": 10, "reasoning": 0,
                                     "cache": {"read": 50, "write": 5}}})  # fmt: skip
        return self.message(sid, data, steps)

    def fork(self, source: str, copied: int, title: str) -> str:
        """``Session.fork``: a new session holding copies of the source's first messages,
        new ids, ``data`` and message times unchanged, part times the fork's."""
        sid = self.session(title)
        at = self.clock
        with self.connect() as db:
            q = "SELECT id, time_created, data FROM message WHERE session_id=? ORDER BY time_created, id"
            for old, created, data in db.execute(q, (source,)).fetchall()[:copied]:
                mid = self.id("msg", created)
                db.execute("INSERT INTO message VALUES (?,?,?,?,?)", (mid, sid, created, at, data))
                parts = db.execute("SELECT data FROM part WHERE message_id=? ORDER BY id", (old,))
                for (pdata,) in parts.fetchall():
                    db.execute("INSERT INTO part VALUES (?,?,?,?,?,?)",
                               (self.id("prt", at), mid, sid, at, at, pdata))  # fmt: skip
        return sid

    def part_ids(self, mid: str) -> list[str]:
        with self.connect() as db:
            return [r[0] for r in db.execute("SELECT id FROM part WHERE message_id=? ORDER BY id",
                                             (mid,))]  # fmt: skip


def text(t: str) -> dict[str, Any]:
    return {"type": "text", "text": t}


def tool(name: str, call: str, status: str = "completed", **state: Any) -> dict[str, Any]:
    return {"type": "tool", "tool": name, "callID": call,
            "state": {"status": status, "input": {"command": "ls"}, **state}}  # fmt: skip
