"""Writing Agent Session Format sessions from code: the sample store, tests, benchmark corpora
(not installed: the package never writes sessions this way).

``SessionBuilder`` appends entries the way the reference library does (an
entry without an explicit parent hangs under the current leaf; ``branch``
makes the next append fork), mints readable ids and deterministic
timestamps, and records each response's ``request_hash`` from the context
the response answered, so built sessions verify.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from trajset.pipeline.stores.agentsession import read_session_text, session_text
from trajset.pipeline.tree.context import canonical_request, request_context, request_hash
from trajset.schemas.session import Session

JSON = Any


class SessionBuilder:
    def __init__(
        self,
        session_id: str,
        created_at: str = "2026-09-01T10:00:00Z",
        *,
        harness: dict[str, str] | None = None,
        cwd: str = "",
        records: list[str] | None = None,
        hashes: bool = True,
        **header: JSON,
    ) -> None:
        self.header: dict[str, JSON] = {
            "type": "session",
            "format": "agentsession/0.2",
            "id": session_id,
            "created_at": created_at,
            "payload": "openresponses/2026-04-24",
        }
        if harness:
            self.header["harness"] = harness
        if records:
            self.header["records"] = records
        if cwd:
            self.header["cwd"] = cwd
        self.header.update(header)
        self.entries: list[dict[str, JSON]] = []
        self.leaf: str | None = None
        self.hashes = hashes
        self._clock = datetime.fromisoformat(created_at.replace("Z", "+00:00"))
        self._counts: dict[str, int] = {}
        self._responses = 0

    # -- plumbing ---------------------------------------------------------------

    def _id(self, kind: str) -> str:
        prefix = {
            "item": "i",
            "response": "r",
            "config": "c",
            "compaction": "k",
            "branch_summary": "b",
            "label": "l",
            "info": "n",
            "env": "e",
            "outcome": "o",
            "link": "k",
            "custom": "u",
            "run": "u",
            "dispatch": "p",
            "decision": "d",
        }.get(kind, "x")
        n = self._counts.get(prefix, 0) + 1
        self._counts[prefix] = n
        return f"{prefix}{n:07d}"

    def _ts(self) -> str:
        self._clock += timedelta(seconds=1)
        return self._clock.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")

    def add(self, kind: str, /, parent: str | bool | None = True, **body: JSON) -> str:
        """Append one entry; ``parent=True`` hangs it under the current leaf, ``None`` makes a root."""
        eid = body.pop("id", None) or self._id(kind)
        par = self.leaf if parent is True else parent
        entry = {"type": kind, "id": eid, "parent": par or None, "ts": self._ts(), **body}
        self.entries.append(entry)
        self.leaf = eid
        return eid

    def branch(self, at: str | None) -> SessionBuilder:
        """The next append forks at ``at`` (``None``: a new root)."""
        self.leaf = at
        return self

    # -- conversation -------------------------------------------------------------

    def config(self, **settings: JSON) -> str:
        return self.add("config", **settings)

    def message(self, role: str, content: JSON, **extra: JSON) -> str:
        if isinstance(content, str):
            kind = "output_text" if role == "assistant" else "input_text"
            part: dict[str, JSON] = {"type": kind, "text": content}
            if kind == "output_text":
                part["annotations"] = []
            content = [part]
        return self.add("item", item={"type": "message", "role": role, "content": content}, **extra)

    def user(self, text: JSON) -> str:
        return self.message("user", text)

    def tool_output(self, call_id: str, output: JSON, **extra: JSON) -> str:
        return self.add(
            "item",
            item={"type": "function_call_output", "call_id": call_id, "output": output},
            **extra,
        )

    def respond(
        self,
        *,
        text: str | None = None,
        calls: Sequence[tuple[str, str, JSON]] = (),
        reasoning: str | None = None,
        model: str = "",
        usage: tuple[int, int, int] | None = (0, 0, 0),
        status: str = "completed",
        phase: str | None = None,
        **response: JSON,
    ) -> str:
        """One model call: its output items, then the response entry with its hash."""
        self._responses += 1
        rid = f"resp_{self._responses}"
        ctx_parent = self.leaf
        for item in self._output_items(text, calls, reasoning, phase):
            if item["type"] == "reasoning":  # member order as the sample store was written
                self.add("item", item=item, response=rid)
            else:
                self.add("item", response=rid, item=item)
        body: dict[str, JSON] = {"response_id": rid}
        if model:
            body["model"] = model
        body["status"] = status
        if usage is not None:
            i, o, c = usage
            body["usage"] = {
                "input_tokens": i,
                "output_tokens": o,
                "total_tokens": i + o,
                "input_tokens_details": {"cached_tokens": c},
                "output_tokens_details": {"reasoning_tokens": 0},
            }
        body.update(response)
        eid = self.add("response", **body)
        if self.hashes and status == "completed" and ctx_parent is not None:
            ctx = request_context(self.session(), eid)
            self.entries[-1]["request_hash"] = request_hash(
                canonical_request(ctx.settings, ctx.items)
            )
        return eid

    def _output_items(
        self,
        text: str | None,
        calls: Sequence[tuple[str, str, JSON]],
        reasoning: str | None,
        phase: str | None,
    ) -> list[dict[str, JSON]]:
        n = self._responses
        items: list[dict[str, JSON]] = []
        if reasoning:
            summary = [{"type": "summary_text", "text": reasoning}]
            items.append({"type": "reasoning", "id": f"rs_{n}", "summary": summary})
        for call_id, name, args in calls:
            items.append(
                {
                    "type": "function_call",
                    "id": f"fc_{call_id}",
                    "status": "completed",
                    "call_id": call_id,
                    "name": name,
                    "arguments": args if isinstance(args, str) else json.dumps(args),
                }
            )
        if text is not None:
            msg: dict[str, JSON] = {
                "type": "message",
                "id": f"msg_{n}",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            }
            if phase:
                msg["phase"] = phase
            items.append(msg)
        return items

    # -- output ----------------------------------------------------------------

    def text(self) -> str:
        return session_text(self.header, self.entries)

    def session(self, source: str = "") -> Session:
        return read_session_text(self.text(), source=source)


#: the reference's SQLite store (spec §8.2), as its tests lay it out
SQLITE_SCHEMA = """
CREATE TABLE sessions (id TEXT PRIMARY KEY, created_at TEXT, updated_at TEXT, cwd TEXT, parent_session TEXT,
                       name TEXT, superseded_by TEXT, header TEXT) STRICT;
CREATE TABLE entries (session_id TEXT REFERENCES sessions(id) ON DELETE CASCADE, seq INTEGER, id TEXT, parent TEXT,
                      type TEXT, line TEXT, UNIQUE(session_id, seq), UNIQUE(session_id, id)) STRICT;
"""


def write_sqlite_store(path: Path, files: list[Path]) -> None:
    """An agentsession SQLite store (spec §8.2) holding the given session files."""
    db = sqlite3.connect(path)
    db.executescript(SQLITE_SCHEMA)
    for f in files:
        lines = [line for line in f.read_text().splitlines() if line]
        header = json.loads(lines[0])
        db.execute(
            "INSERT INTO sessions VALUES (?,?,?,?,?,?,?,?)",
            (
                header["id"],
                header["created_at"],
                header["created_at"],
                header.get("cwd"),
                None,
                None,
                None,
                lines[0],
            ),
        )
        for seq, line in enumerate(lines[1:]):
            e = json.loads(line)
            db.execute(
                "INSERT INTO entries VALUES (?,?,?,?,?,?)",
                (header["id"], seq, e["id"], e["parent"], e["type"], line),
            )
    db.commit()
    db.close()
