"""Claude Code sessions made from code, for the benchmark: the same conversations as
``corpus.py`` (tool calls, regenerated turns, large tool outputs, planted secrets) as Claude
Code writes them (specs/claude-code.md).

    python benchmarks/corpus.py corpus /tmp/cc --format claude-code --sessions 200 --tool-output-kb 36

Eight sessions per project folder (``-work-project-<n>/<sessionId>.jsonl``). Each turn: the
prompt, an assistant line with thinking and a ``Bash`` ``tool_use``, the ``tool_result``
(with its ``toolUseResult``), and the answer with usage. A regenerated turn is the prompt
asked again with the same parent: the two prompts are siblings in the ``parentUuid`` tree.
"""

from __future__ import annotations

import random
import uuid
from pathlib import Path
from typing import Any

from texts import jsonl, play, sentence, timestamp

JSON = Any
PER_PROJECT = 8
MODEL = "claude-opus-4-5"


class _Session:
    """One session file being written: its lines, the clock and the leaf."""

    def __init__(self, rng: random.Random, sid: str, cwd: str, start_ms: int) -> None:
        self.rng, self.sid, self.cwd, self.ms = rng, sid, cwd, start_ms
        self.lines: list[JSON] = []
        self.leaf: str | None = None

    def line(self, kind: str, step_ms: int, message: JSON, **more: JSON) -> str:
        self.ms += step_ms
        uid = str(uuid.UUID(int=self.rng.getrandbits(128), version=4))
        self.lines.append({
            "parentUuid": self.leaf, "isSidechain": False, "userType": "external",
            "cwd": self.cwd, "sessionId": self.sid, "version": "2.1.77", "gitBranch": "main",
            "type": kind, "message": message, "uuid": uid, "timestamp": timestamp(self.ms), **more,
        })  # fmt: skip
        self.leaf = uid
        return uid

    def assistant(self, content: list[JSON], stop: str) -> str:
        rng = self.rng
        usage = {"input_tokens": rng.randint(3, 50), "output_tokens": rng.randint(40, 900),
                 "cache_creation_input_tokens": rng.randint(0, 2_000),
                 "cache_read_input_tokens": rng.randint(5_000, 40_000)}  # fmt: skip
        message = {"model": MODEL, "id": f"msg_{rng.getrandbits(96):024x}", "type": "message",
                   "role": "assistant", "content": content, "stop_reason": stop, "usage": usage}  # fmt: skip
        return self.line("assistant", 3_000, message, requestId=f"req_{rng.getrandbits(96):024x}")

    def turn(self, index: int, prompt: str, output: str) -> None:
        rng = self.rng
        self.line("user", 30_000, {"role": "user", "content": prompt})
        call = f"toolu_{rng.getrandbits(96):024x}"
        command = f"pytest -q tests/test_{index}.py"
        thinking = {"type": "thinking", "thinking": sentence(rng, 20),
                    "signature": f"{rng.getrandbits(512):0128x}"}  # fmt: skip
        use = {"type": "tool_use", "id": call, "name": "Bash", "input": {"command": command}}
        asked = self.assistant([thinking, use], "tool_use")
        failed = rng.random() < 0.25
        result = {"type": "tool_result", "tool_use_id": call, "content": output, "is_error": failed}
        self.line("user", 900, {"role": "user", "content": [result]},
                  toolUseResult={"stdout": output, "stderr": "", "interrupted": False},
                  sourceToolAssistantUUID=asked)  # fmt: skip
        self.assistant([{"type": "text", "text": sentence(rng, 18)}], "end_turn")

    def write(self, folder: Path) -> int:
        folder.mkdir(parents=True, exist_ok=True)
        text = jsonl(self.lines)
        (folder / f"{self.sid}.jsonl").write_text(text, encoding="utf-8")
        return len(text.encode())


def build_claude_corpus(
    dest: Path,
    sessions: int,
    seed: int = 1,
    *,
    turns: int = 8,
    fork_rate: float = 0.3,
    tool_output_bytes: int = 0,
) -> int:
    """Write ``sessions`` Claude Code sessions under ``dest/-work-project-<n>/``; the bytes
    written."""
    rng = random.Random(seed)
    total = 0
    for i in range(sessions):
        sid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        s = _Session(
            rng, sid, f"/work/project-{i // PER_PROJECT}", 1_780_000_000_000 + i * 3_600_000
        )
        play(s, rng, i, turns, fork_rate, tool_output_bytes)
        total += s.write(dest / f"-work-project-{i // PER_PROJECT}")
    return total
