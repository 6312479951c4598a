"""Gemini CLI chats made from code, for the benchmark: the same conversations as
``corpus.py`` (tool calls, regenerated turns, large tool outputs, planted secrets) as a
v0.44+ build records them (specs/gemini-cli.md §2).

    python benchmarks/corpus.py corpus /tmp/gemini --format gemini-cli --sessions 200 --tool-output-kb 36

One project folder per eight conversations (``tmp/project-<n>/chats/session-*.jsonl``, with
``.project_root``).  Each chat: the metadata line, the start checkpoint with the environment
message, then per turn the prompt, the model's record written twice (before and with its
``run_shell_command`` call and result), the tool-response ``user`` record, the answer, and a
``$set {lastUpdated}`` after each.  A regenerated turn is a ``/rewind`` to its prompt
(``$rewindTo`` and the normalisation checkpoint that follows it) and the turn asked again.
"""

from __future__ import annotations

import random
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from texts import jsonl, sentence, timestamp, tool_output

JSON = Any
ENVIRONMENT_ID = "d04923d38bb0f6017037e74183378ef4"
MODEL = "gemini-3.1-pro-preview"
PER_PROJECT = 8


class _Chat:
    """One chat being written: its lines, the clock, the live messages (for checkpoints)."""

    def __init__(self, rng: random.Random, sid: str, start_ms: int) -> None:
        self.rng, self.sid, self.ms, self.start = rng, sid, start_ms, start_ms
        self.lines: list[JSON] = []
        self.live: list[JSON] = []

    def put(self, record: JSON) -> None:
        self.lines.append(record)

    def message(self, kind: str, content: JSON, step_ms: int, **extra: JSON) -> JSON:
        self.ms += step_ms
        rec = {"id": str(uuid.UUID(int=self.rng.getrandbits(128), version=4)),
               "timestamp": timestamp(self.ms), "type": kind, "content": content, **extra}  # fmt: skip
        self.put(rec)
        self.put({"$set": {"lastUpdated": timestamp(self.ms + 5)}})
        self.live.append(rec)
        return rec

    def turn(self, index: int, prompt: str, output: str) -> JSON:
        rng = self.rng
        asked = self.message("user", [{"text": prompt}], 30_000)
        tokens = {"input": rng.randint(6_000, 40_000), "output": rng.randint(20, 300),
                  "cached": 0, "thoughts": rng.randint(50, 400), "tool": 0}  # fmt: skip
        tokens["cached"] = tokens["input"] * 3 // 4
        tokens["total"] = tokens["input"] + tokens["output"] + tokens["thoughts"]
        thought = [
            {
                "subject": sentence(rng, 3),
                "description": sentence(rng, 12),
                "timestamp": timestamp(self.ms),
            }
        ]
        call_id = f"run_shell_command__{rng.getrandbits(40):010x}"
        model = self.message("gemini", "", 2_000, thoughts=thought, tokens=tokens, model=MODEL)
        response = {"functionResponse": {"id": call_id, "name": "run_shell_command",
                                         "response": {"output": output}}}  # fmt: skip
        call = {"id": call_id, "name": "run_shell_command", "args": {"command": f"pytest -q tests/test_{index}.py"},
                "result": [response], "status": "success", "timestamp": timestamp(self.ms + 900),
                "resultDisplay": output[:2000], "displayName": "Shell", "description": "Run the tests"}  # fmt: skip
        self.put({**model, "toolCalls": [call]})
        self.message("user", [response], 1_000)
        answer = dict(tokens, input=tokens["input"] + 2_000)
        self.message(
            "gemini", sentence(rng, 18), 3_000, thoughts=thought, tokens=answer, model=MODEL
        )
        return asked

    def rewind(self, to: JSON) -> None:
        """``/rewind`` to a prompt: the marker, then the normalisation of what stays."""
        self.put({"$rewindTo": to["id"]})
        self.live = self.live[: next(i for i, m in enumerate(self.live) if m["id"] == to["id"])]
        kept = [m for m in self.live if m["id"] != ENVIRONMENT_ID]
        self.put({"$set": {"messages": [{**m, "content": m["content"] if isinstance(m["content"], list)
                                         else [{"text": m["content"]}]} for m in kept],
                           "lastUpdated": timestamp(self.ms + 10)}})  # fmt: skip

    def write(self, project: Path) -> int:
        folder = project / "chats"
        folder.mkdir(parents=True, exist_ok=True)
        start = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=self.start)
        path = folder / f"session-{start.strftime('%Y-%m-%dT%H-%M')}-{self.sid[:8]}.jsonl"
        text = jsonl(self.lines)
        path.write_text(text, encoding="utf-8")
        return len(text.encode())


def build_gemini_corpus(
    dest: Path,
    sessions: int,
    seed: int = 1,
    *,
    turns: int = 8,
    fork_rate: float = 0.3,
    tool_output_bytes: int = 0,
) -> int:
    """Write ``sessions`` chats under ``dest/tmp/project-<n>/``; return the bytes written."""
    rng = random.Random(seed)
    total = 0
    for i in range(sessions):
        project = dest / "tmp" / f"project-{i // PER_PROJECT}"
        if not (project / ".project_root").exists():
            project.mkdir(parents=True, exist_ok=True)
            (project / ".project_root").write_text(f"/work/project-{i // PER_PROJECT}")
        ms = 1_780_000_000_000 + i * 3_600_000
        sid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        c = _Chat(rng, sid, ms)
        c.put({"sessionId": sid, "projectHash": f"{rng.getrandbits(256):064x}", "startTime": timestamp(ms),
               "lastUpdated": timestamp(ms), "kind": "main"})  # fmt: skip
        env = {"id": ENVIRONMENT_ID, "timestamp": timestamp(ms), "type": "user",
               "content": [{"text": "<session_context>\nThis is the Gemini CLI.\n"
                            f"I'm currently working in the directory: /work/project-{i // PER_PROJECT}\n</session_context>"}]}  # fmt: skip
        c.put({"$set": {"messages": [env], "lastUpdated": timestamp(ms)}})
        c.live.append(env)
        for t in range(turns):
            task = f"Fix failing test {t} of module {i}: {sentence(rng, 8)}"
            out = tool_output(rng, i, tool_output_bytes)
            asked = c.turn(i, task, out)
            if t < turns - 1 and rng.random() < fork_rate:  # regenerated: rewound and asked again
                c.rewind(asked)
                c.turn(i, "Try again, differently: " + task, out)
        total += c.write(project)
    return total
