"""GitHub Copilot CLI sessions made from code, for the benchmark: the same conversations as
``corpus.py`` (tool calls, regenerated turns, large tool outputs, planted secrets) as Copilot
CLI 1.0.78 writes them (specs/copilot-cli.md).

    python benchmarks/corpus.py corpus /tmp/cp --format copilot-cli --sessions 200 --tool-output-kb 36

One folder per session (``session-state/<id>/events.jsonl``). Each turn, as the real 1.0.78
files show it: the prompt (``content`` and ``transformedContent``), a turn with the model's
message (reasoning and a ``bash`` tool request, ``outputTokens``, ``apiCallId``), the tool's
start and completion, a second turn with the answer. A regenerated turn is a ``/rewind``:
Copilot rewrites the file without the rewound events, so the file holds the last attempt only.
"""

from __future__ import annotations

import random
import uuid
from pathlib import Path
from typing import Any

from texts import jsonl, play, sentence, timestamp

JSON = Any
MODEL = "claude-sonnet-4.6"


class _Session:
    """One events file being written: its events, the clock and the last event."""

    def __init__(self, rng: random.Random, sid: str, cwd: str, start_ms: int) -> None:
        self.rng, self.sid, self.ms = rng, sid, start_ms
        self.lines: list[JSON] = []
        self.leaf = 0  # how many events the conversation holds (``play`` sets it back)
        self.event("session.start", 0, sessionId=sid, version=1, producer="copilot-agent",
                   copilotVersion="1.0.78", startTime=timestamp(start_ms),
                   context={"cwd": cwd, "gitRoot": cwd, "branch": "main"})  # fmt: skip
        self.event("session.model_change", 10, newModel=MODEL, reasoningEffort=None)
        self.event("system.message", 10, role="system", content="You are the GitHub Copilot CLI.")

    def event(self, kind: str, step_ms: int, **data: JSON) -> None:
        del self.lines[self.leaf :]  # after a /rewind, the file is rewritten without them
        self.ms += step_ms
        parent = self.lines[-1]["id"] if self.lines else None
        eid = str(uuid.UUID(int=self.rng.getrandbits(128), version=4))
        self.lines.append({"type": kind, "data": data, "id": eid,
                           "timestamp": timestamp(self.ms), "parentId": parent})  # fmt: skip
        self.leaf = len(self.lines)

    def turn(self, index: int, prompt: str, output: str) -> None:
        rng = self.rng
        now = timestamp(self.ms + 30_000)
        self.event("user.message", 30_000, content=prompt,
                   transformedContent=f"<current_datetime>{now}</current_datetime>\n\n{prompt}",
                   attachments=[], delivery="idle")  # fmt: skip
        call = f"toolu_vrtx_{rng.getrandbits(96):024x}"
        command = f"pytest -q tests/test_{index}.py"
        self.event("assistant.turn_start", 10, turnId="0")
        self.event("assistant.message", 3_000, messageId=str(uuid.UUID(int=rng.getrandbits(128))),
                   model=MODEL, content="", reasoningText=sentence(rng, 20),
                   toolRequests=[{"toolCallId": call, "name": "bash",
                                  "arguments": {"command": command}, "type": "function"}],
                   turnId="0", outputTokens=rng.randint(40, 900),
                   apiCallId=f"msg_{rng.getrandbits(96):024x}")  # fmt: skip
        self.event("tool.execution_start", 10, toolCallId=call, toolName="bash",
                   arguments={"command": command}, turnId="0")  # fmt: skip
        failed = rng.random() < 0.25
        result = {"success": False, "error": {"message": output, "code": "failure"}} if failed \
            else {"success": True, "result": {"content": output}}  # fmt: skip
        self.event("tool.execution_complete", 900, toolCallId=call, turnId="0", **result)
        self.event("assistant.turn_end", 10, turnId="0")
        self.event("assistant.turn_start", 10, turnId="1")
        self.event("assistant.message", 3_000, messageId=str(uuid.UUID(int=rng.getrandbits(128))),
                   model=MODEL, content=sentence(rng, 18), toolRequests=[], turnId="1",
                   outputTokens=rng.randint(40, 900), apiCallId=f"msg_{rng.getrandbits(96):024x}")  # fmt: skip
        self.event("assistant.turn_end", 10, turnId="1")

    def write(self, home: Path) -> int:
        folder = home / "session-state" / self.sid
        folder.mkdir(parents=True, exist_ok=True)
        text = jsonl(self.lines)
        (folder / "events.jsonl").write_text(text, encoding="utf-8")
        return len(text.encode())


def build_copilot_corpus(
    dest: Path,
    sessions: int,
    seed: int = 1,
    *,
    turns: int = 8,
    fork_rate: float = 0.3,
    tool_output_bytes: int = 0,
) -> int:
    """Write ``sessions`` Copilot CLI sessions under ``dest/session-state/`` (``dest`` is then a
    ``~/.copilot``); the bytes written."""
    rng = random.Random(seed)
    total = 0
    for i in range(sessions):
        sid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        s = _Session(rng, sid, f"/work/project-{i // 8}", 1_780_000_000_000 + i * 3_600_000)
        play(s, rng, i, turns, fork_rate, tool_output_bytes)
        total += s.write(dest)
    return total
