"""Pi sessions made from code, for the benchmark: the same conversations as ``corpus.py``
(tool calls, regenerated turns, large tool outputs, planted secrets) as Pi v3 writes them
(specs/pi.md §2-§4).

    python benchmarks/corpus.py corpus /tmp/pi --format pi --sessions 200 --tool-output-kb 36

Eight sessions per project folder (``--work-project-<n>--/<ts>_<uuid>.jsonl``). Each: the
header, a root ``model_change`` and ``thinking_level_change``, then per turn the prompt, an
assistant message with thinking (and its signature) and a ``bash`` tool call, the tool
result, and the answer with usage and cost. A regenerated turn is ``/tree`` back to the
turn's parent and the turn asked again: the two prompts are siblings.
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
    """One session file being written: its entries, the clock and the leaf."""

    def __init__(self, rng: random.Random, start_ms: int) -> None:
        self.rng, self.ms = rng, start_ms
        self.lines: list[JSON] = []
        self.leaf: str | None = None

    def entry(self, kind: str, step_ms: int, **body: JSON) -> str:
        self.ms += step_ms
        eid = f"{self.rng.getrandbits(32):08x}"
        self.lines.append(
            {
                "type": kind,
                "id": eid,
                "parentId": self.leaf,
                "timestamp": timestamp(self.ms),
                **body,
            }
        )
        self.leaf = eid
        return eid

    def message(self, step_ms: int, **message: JSON) -> str:
        return self.entry("message", step_ms, message={**message, "timestamp": self.ms + step_ms})

    def assistant(self, content: list[JSON], stop: str) -> str:
        rng = self.rng
        u = {"input": rng.randint(5, 50), "output": rng.randint(40, 900), "cacheRead": rng.randint(5_000, 40_000),
             "cacheWrite": rng.randint(0, 2_000)}  # fmt: skip
        u["totalTokens"] = sum(u.values())
        u["cost"] = {k: round(v * 1e-6, 6) for k, v in u.items() if k != "totalTokens"}
        return self.message(3_000, role="assistant", content=content, api="anthropic-messages",
                            provider="anthropic", model=MODEL, usage=u, stopReason=stop)  # fmt: skip

    def turn(self, index: int, prompt: str, output: str) -> None:
        rng = self.rng
        self.message(30_000, role="user", content=[{"type": "text", "text": prompt}])
        call = f"toolu_{rng.getrandbits(96):024x}"
        thinking = {
            "type": "thinking",
            "thinking": sentence(rng, 20),
            "thinkingSignature": f"{rng.getrandbits(512):0128x}",
        }
        self.assistant([thinking, {"type": "toolCall", "id": call, "name": "bash",
                                   "arguments": {"command": f"pytest -q tests/test_{index}.py"}}], "toolUse")  # fmt: skip
        self.message(900, role="toolResult", toolCallId=call, toolName="bash",
                     content=[{"type": "text", "text": output}], isError=rng.random() < 0.25)  # fmt: skip
        self.assistant([{"type": "text", "text": sentence(rng, 18)}], "stop")

    def write(self, folder: Path, sid: str, start_ms: int) -> int:
        folder.mkdir(parents=True, exist_ok=True)
        name = timestamp(start_ms).replace(":", "-").replace(".", "-")
        text = jsonl(self.lines)
        (folder / f"{name}_{sid}.jsonl").write_text(text, encoding="utf-8")
        return len(text.encode())


def build_pi_corpus(
    dest: Path,
    sessions: int,
    seed: int = 1,
    *,
    turns: int = 8,
    fork_rate: float = 0.3,
    tool_output_bytes: int = 0,
) -> int:
    """Write ``sessions`` Pi sessions under ``dest/--work-project-<n>--/``; the bytes written."""
    rng = random.Random(seed)
    total = 0
    for i in range(sessions):
        cwd = f"/work/project-{i // PER_PROJECT}"
        ms = 1_780_000_000_000 + i * 3_600_000
        sid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        s = _Session(rng, ms)
        s.lines.append(
            {"type": "session", "version": 3, "id": sid, "timestamp": timestamp(ms), "cwd": cwd}
        )
        s.entry("model_change", 5, provider="anthropic", modelId=MODEL)
        s.entry("thinking_level_change", 0, thinkingLevel="high")
        play(s, rng, i, turns, fork_rate, tool_output_bytes)
        total += s.write(dest / f"--work-project-{i // PER_PROJECT}--", sid, ms)
    return total
