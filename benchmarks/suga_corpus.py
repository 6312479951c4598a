"""A suga export made from code, for the benchmark: the same conversations as ``corpus.py``
(tool calls, retried turns, large tool outputs, planted secrets) as the ``suga-export``
folder of specs/suga.md §4 holds them.

    python benchmarks/corpus.py corpus /tmp/sx --format suga --sessions 200 --tool-output-kb 36

One export folder: ``manifest.json``, then ``sessions.jsonl`` (each session's
``SessionInfo``), ``entries.jsonl`` (per turn the prompt, an assistant record with its
reasoning and a ``bash`` call, the tool result and the answer, numbered by ``seq``),
``trace_events.jsonl`` (an ``llm`` event per model call with its usage and latency, a
``tool`` event per call) and ``session_meta.jsonl`` (each turn's request state). suga does
not fork, so a retried turn is asked again after the first answer, as a user of a chat
does. The whole export is one unit of work (the reader's), so workers share no suga store.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from texts import jsonl, sentence, timestamp, tool_output

JSON = Any
MODEL = "model-x"


class _Export:
    """The export's four files being written, a session at a time."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.sessions: list[JSON] = []
        self.entries: list[JSON] = []
        self.traces: list[JSON] = []
        self.meta: list[JSON] = []

    def session(self, index: int, turns: int, fork_rate: float, tool_output_bytes: int) -> None:
        rng, sid = self.rng, f"sess-{index:05d}-{self.rng.getrandbits(32):08x}"
        start = ms = 1_780_000_000_000 + index * 3_600_000
        seq, requests = 0, []

        def entry(turn: str, kind: str, body: JSON, step_ms: int) -> None:
            nonlocal seq, ms
            seq, ms = seq + 1, ms + step_ms
            self.entries.append({"session_id": sid, "seq": seq, "turn_id": turn, "type": kind,
                                 "json": body, "created_at": timestamp(ms)})  # fmt: skip

        asked = 0
        for t in range(turns):
            task = f"Fix failing test {t} of module {index}: {sentence(rng, 8)}"
            out = tool_output(rng, index, tool_output_bytes)
            again = t < turns - 1 and rng.random() < fork_rate
            for prompt in [task, *(["Try again, differently: " + task] if again else [])]:
                asked += 1
                turn, call = f"turn-{asked}", f"call_{rng.getrandbits(64):016x}"
                entry(turn, "user", {"text": prompt}, 30_000)
                cmd = {"command": f"pytest -q tests/test_{index}.py"}
                entry(turn, "assistant", {"text": "", "reasoning": sentence(rng, 20),
                      "tool_calls": [{"id": call, "name": "bash", "arguments": cmd}]}, 3_000)  # fmt: skip
                self._llm(sid, turn, ms)
                self._tool(sid, turn, call, ms)
                entry(turn, "tool_result", {"tool_call_id": call, "ok": rng.random() > 0.25,
                                            "content": out}, 900)  # fmt: skip
                entry(turn, "assistant", {"text": sentence(rng, 18)}, 3_000)
                self._llm(sid, turn, ms)
                requests.append({"turn_id": turn, "state": "done",
                                 "usage": {"input_tokens": 0, "output_tokens": 0}})  # fmt: skip
        self.sessions.append({"id": sid, "title": f"module {index}", "cwd": f"/work/project-{index // 8}",
                              "status": "idle", "origin": "chat", "created_at": timestamp(start),
                              "updated_at": timestamp(ms), "hidden": None, "parent_session_id": None,
                              "pinned": False, "segment_count": 1})  # fmt: skip
        self.meta.append({"session_id": sid, "segment_count": 1, "pinned": False,
                          "requests": requests, "raw": {}})  # fmt: skip

    def _llm(self, sid: str, turn: str, ms: int) -> None:
        rng = self.rng
        self.traces.append({"id": f"tr-{len(self.traces) + 1}", "session_id": sid, "turn_id": turn,
                            "kind": "llm", "name": MODEL, "status": "ok", "started_at": timestamp(ms - 2_800),
                            "duration_ms": rng.randint(400, 9_000), "ttft_ms": rng.randint(100, 900),
                            "input_tokens": rng.randint(2_000, 40_000), "output_tokens": rng.randint(40, 900),
                            "cache_read_tokens": rng.randint(0, 30_000), "cache_write_tokens": 0,
                            "error": "", "attrs": {}})  # fmt: skip

    def _tool(self, sid: str, turn: str, call: str, ms: int) -> None:
        self.traces.append({"id": f"tr-{len(self.traces) + 1}", "session_id": sid, "turn_id": turn,
                            "kind": "tool", "name": "bash", "status": "ok", "started_at": timestamp(ms),
                            "duration_ms": 800, "ttft_ms": 0, "input_tokens": 0, "output_tokens": 0,
                            "cache_read_tokens": 0, "cache_write_tokens": 0, "error": "",
                            "attrs": {"tool_call_id": call}})  # fmt: skip

    def write(self, dest: Path) -> int:
        dest.mkdir(parents=True, exist_ok=True)
        files = {"sessions.jsonl": self.sessions, "entries.jsonl": self.entries,
                 "trace_events.jsonl": self.traces, "session_meta.jsonl": self.meta}  # fmt: skip
        manifest = {"format": "suga-export", "format_version": 1, "files": list(files),
                    "producer": {"name": "trajset-benchmark"}, "include_hidden": True}  # fmt: skip
        total = 0
        for name, lines in {"manifest.json": [manifest], **files}.items():
            data = jsonl(lines).encode("utf-8")
            (dest / name).write_bytes(data)
            total += len(data)
        return total


def build_suga_corpus(
    dest: Path,
    sessions: int,
    seed: int = 1,
    *,
    turns: int = 8,
    fork_rate: float = 0.3,
    tool_output_bytes: int = 0,
) -> int:
    """Write one suga export of ``sessions`` sessions to ``dest``; the bytes written."""
    export = _Export(random.Random(seed))
    for i in range(sessions):
        export.session(i, turns, fork_rate, tool_output_bytes)
    return export.write(dest)
