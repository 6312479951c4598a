"""Qwen Code sessions made from code, for the benchmark: the same conversations as
``corpus.py`` (tool calls, regenerated turns, large tool outputs, planted secrets) as Qwen
Code records them (specs/qwen-code.md).

    python benchmarks/corpus.py corpus /tmp/qw --format qwen-code --sessions 200 --tool-output-kb 36

Eight sessions per project (``projects/-work-project-<n>/chats/<sessionId>.jsonl``). Each
turn, as ``chatRecordingService.ts`` writes it: the prompt (``parts`` and ``systemPayload``),
a ``ui_telemetry`` ``api_response``, the model's record with a thought and a
``run_shell_command`` call, a telemetry ``tool_call``, the ``tool_result``, another
``api_response`` and the answer with its ``usageMetadata``. A regenerated turn is a
``/rewind``: a ``system/rewind`` record under the record before the rewound prompt (with
``parentUuid: null`` for the first prompt), and the prompt asked again under it.
"""

from __future__ import annotations

import random
import uuid
from pathlib import Path
from typing import Any

from texts import jsonl, play, sentence, timestamp

JSON = Any
PER_PROJECT = 8
MODEL = "qwen3-coder-plus"


class _Session:
    """One session file being written: its records, the clock and the tail."""

    def __init__(self, rng: random.Random, sid: str, cwd: str, start_ms: int) -> None:
        self.rng, self.sid, self.cwd, self.ms = rng, sid, cwd, start_ms
        self.lines: list[JSON] = []
        self.leaf: str | None = None
        self.tail: str | None = None  # the last record written (a rewind goes back from it)
        self.prompts = 0

    def record(self, kind: str, step_ms: int, **more: JSON) -> str:
        self.ms += step_ms
        uid = str(uuid.UUID(int=self.rng.getrandbits(128), version=4))
        self.lines.append({
            "uuid": uid, "parentUuid": self.leaf, "sessionId": self.sid,
            "timestamp": timestamp(self.ms), "type": kind, "cwd": self.cwd,
            "version": "0.21.0", "gitBranch": "main", **more,
        })  # fmt: skip
        self.leaf = self.tail = uid
        return uid

    def telemetry(self, event: JSON) -> None:
        self.record("system", 200, subtype="ui_telemetry", systemPayload={"uiEvent": event})

    def model(self, parts: list[JSON], prompt: int) -> None:
        rng = self.rng
        usage = {"promptTokenCount": rng.randint(5_000, 40_000),
                 "candidatesTokenCount": rng.randint(40, 900)}  # fmt: skip
        usage["thoughtsTokenCount"] = rng.randint(0, usage["candidatesTokenCount"] // 2)
        usage["cachedContentTokenCount"] = rng.randint(0, usage["promptTokenCount"])
        usage["totalTokenCount"] = usage["promptTokenCount"] + usage["candidatesTokenCount"]
        self.telemetry({"event.name": "qwen-code.api_response", "model": MODEL,
                        "input_token_count": usage["promptTokenCount"],
                        "output_token_count": usage["candidatesTokenCount"],
                        "prompt_id": f"{self.sid}########{prompt}"})  # fmt: skip
        self.record("assistant", 3_000, model=MODEL, message={"role": "model", "parts": parts},
                    usageMetadata=usage, contextWindowSize=1_000_000)  # fmt: skip

    def turn(self, index: int, prompt: str, output: str) -> None:
        rng = self.rng
        if self.tail is not None and self.leaf != self.tail:  # the turn is asked again
            self.record("system", 10_000, subtype="rewind", systemPayload={"truncatedCount": 7})
        n, self.prompts = self.prompts, self.prompts + 1
        self.record("user", 30_000, message={"role": "user", "parts": [{"text": prompt}]},
                    systemPayload={"displayText": prompt, "hookContext": ""},
                    promptId=f"{self.sid}########{n}")  # fmt: skip
        call = f"call_{rng.getrandbits(96):024x}"
        command = f"pytest -q tests/test_{index}.py"
        self.model([{"text": sentence(rng, 20), "thought": True},
                    {"functionCall": {"id": call, "name": "run_shell_command",
                                      "args": {"command": command, "is_background": False}}}], n)  # fmt: skip
        failed = rng.random() < 0.25
        self.telemetry({"event.name": "qwen-code.tool_call", "function_name": "run_shell_command",
                        "status": "error" if failed else "success"})  # fmt: skip
        text = f"Command: {command}\nDirectory: (root)\nOutput: {output}\nExit Code: {int(failed)}"
        response = {"error": text} if failed else {"output": text}
        self.record("tool_result", 900,
                    message={"role": "user", "parts": [{"functionResponse": {
                        "id": call, "name": "run_shell_command", "response": response}}]},
                    toolCallResult={"callId": call, "status": "error" if failed else "success",
                                    "resultDisplay": output[:200]})  # fmt: skip
        self.model([{"text": sentence(rng, 18)}], n)

    def write(self, folder: Path) -> int:
        folder.mkdir(parents=True, exist_ok=True)
        text = jsonl(self.lines)
        (folder / f"{self.sid}.jsonl").write_text(text, encoding="utf-8")
        return len(text.encode())


def build_qwen_corpus(
    dest: Path,
    sessions: int,
    seed: int = 1,
    *,
    turns: int = 8,
    fork_rate: float = 0.3,
    tool_output_bytes: int = 0,
) -> int:
    """Write ``sessions`` Qwen Code sessions under ``dest/projects/-work-project-<n>/chats/``
    (``dest`` is then a ``~/.qwen``); the bytes written."""
    rng = random.Random(seed)
    total = 0
    for i in range(sessions):
        sid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        project = f"-work-project-{i // PER_PROJECT}"
        start = 1_780_000_000_000 + i * 3_600_000
        s = _Session(rng, sid, f"/work/project-{i // PER_PROJECT}", start)
        play(s, rng, i, turns, fork_rate, tool_output_bytes)
        total += s.write(dest / "projects" / project / "chats")
    return total
