"""Cursor CLI stores made from code, for the benchmark: the same conversations as ``corpus.py``
(tool calls, regenerated turns, large tool outputs, planted secrets) as ``cursor-agent``
keeps them (specs/cursor.md §2).

    python benchmarks/corpus.py corpus /tmp/cu --format cursor --sessions 200 --tool-output-kb 36

One ``chats/<md5(cwd)>/<agentId>/store.db`` per session: content-addressed JSON message blobs
(system prompt, prompt, an assistant message with reasoning and a ``Shell`` call, its tool
result, the answer) and, after every turn, a protobuf root listing the history sent to the
model.  A regenerated turn is a rewind: a later root leaves the stored path before the
rewound prompt, and the older root stays (the abandoned branch).
"""

from __future__ import annotations

import hashlib
import json
import random
import sqlite3
import uuid
from pathlib import Path
from typing import Any

from texts import play, sentence

JSON = Any
MODEL = "claude-4.5-sonnet-thinking"


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b, n = n & 0x7F, n >> 7
        out.append(b | 0x80 if n else b)
        if not n:
            return bytes(out)


def _field(number: int, data: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(data)) + data


class _Store:
    """One CLI store being written: its blobs in order, the path of the current root."""

    def __init__(self, rng: random.Random, sid: str) -> None:
        self.rng, self.sid = rng, sid
        self.blobs: dict[str, bytes] = {}
        self.path: list[bytes] = []
        self.leaf = 0  # how many messages the current path holds (``play`` sets it back)
        self.latest = ""
        self.add(
            {"role": "system", "content": "You are an AI coding assistant. You operate in Cursor."}
        )
        self.root()

    def put(self, data: bytes) -> bytes:
        digest = hashlib.sha256(data).digest()
        self.blobs.setdefault(digest.hex(), data)
        return digest

    def add(self, message: JSON) -> None:
        del self.path[self.leaf :]  # a rewind: the path goes on from an earlier message
        self.path.append(self.put(json.dumps(message, separators=(",", ":")).encode()))
        self.leaf = len(self.path)

    def root(self) -> None:
        self.latest = self.put(b"".join(_field(1, m) for m in self.path[: self.leaf])).hex()

    def turn(self, index: int, prompt: str, output: str) -> None:
        rng = self.rng
        request = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        self.add({"role": "user", "content": [{"type": "text", "text": f"<user_query>\n{prompt}\n</user_query>"}],
                  "providerOptions": {"cursor": {"requestId": request}}})  # fmt: skip
        call = f"toolu_{rng.getrandbits(96):024x}"
        command = f"pytest -q tests/test_{index}.py"
        self.add({"role": "assistant", "id": str(len(self.path)), "content": [
            {"type": "reasoning", "text": sentence(rng, 20), "signature": f"{rng.getrandbits(256):064x}",
             "providerOptions": {"cursor": {"modelName": MODEL}}},
            {"type": "tool-call", "toolCallId": call, "toolName": "Shell", "args": {"command": command}}]})  # fmt: skip
        failed = rng.random() < 0.25
        result = f"Exit code: {int(failed)}\n\nCommand output:\n\n{output}"
        self.add({"role": "tool", "id": call, "content": [{"type": "tool-result", "toolCallId": call,
                  "toolName": "Shell", "result": result}]})  # fmt: skip
        self.add(
            {
                "role": "assistant",
                "id": str(len(self.path)),
                "content": [{"type": "text", "text": sentence(rng, 18)}],
            }
        )
        self.root()

    def write(self, folder: Path, created_ms: int) -> int:
        folder.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(folder / "store.db")
        db.execute("CREATE TABLE blobs (id TEXT PRIMARY KEY, data BLOB)")
        db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
        db.executemany("INSERT INTO blobs VALUES (?, ?)", list(self.blobs.items()))
        meta = {"agentId": self.sid, "latestRootBlobId": self.latest, "name": "bench", "mode": "default",
                "createdAt": created_ms, "lastUsedModel": MODEL}  # fmt: skip
        db.execute("INSERT INTO meta VALUES ('0', ?)", (json.dumps(meta).encode().hex(),))
        db.commit()
        db.close()
        return (folder / "store.db").stat().st_size


def build_cursor_corpus(
    dest: Path,
    sessions: int,
    seed: int = 1,
    *,
    turns: int = 8,
    fork_rate: float = 0.3,
    tool_output_bytes: int = 0,
) -> int:
    """Write ``sessions`` Cursor CLI stores under ``dest/chats/`` (``dest`` is then a
    ``~/.cursor``); the bytes written."""
    rng = random.Random(seed)
    total = 0
    for i in range(sessions):
        sid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        s = _Store(rng, sid)
        play(s, rng, i, turns, fork_rate, tool_output_bytes)
        workspace = hashlib.md5(f"/work/project-{i // 8}".encode()).hexdigest()
        total += s.write(dest / "chats" / workspace / sid, 1_780_000_000_000 + i * 3_600_000)
    return total
