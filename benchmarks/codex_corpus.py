"""Codex CLI rollouts made from code, for the benchmark: the same conversations as
``corpus.py`` (tool calls, regenerated turns, large tool outputs, planted secrets) in the
form Codex writes (specs/codex.md §1-§3).

    python benchmarks/corpus.py corpus /tmp/codex --format codex --sessions 200 --tool-output-kb 36

Each conversation is one ``sessions/YYYY/MM/DD/rollout-<time>-<thread>.jsonl`` as an
Extended build of 0.136 writes it: ``session_meta`` with ~12 KB of base instructions, then
per turn ``task_started``, ``turn_context``, the prompt as a user item and its
``user_message`` event, encrypted reasoning, an ``exec_command`` call whose output carries
the exec header (cut by Codex to 10,000 characters in ``exec_command_end``), the
``token_count`` after the call and its repeat after the output, the answer with its
``agent_message`` event, another ``token_count`` and ``task_complete``.  A regenerated turn
is a rollback: ``thread_rolled_back{num_turns: 1}`` after the turn, and the turn again with
another prompt.  One conversation in eight spawns a subagent, whose own rollout replays the
parent's history up to the spawn call before its own turn.
"""

from __future__ import annotations

import base64
import json
import random
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from texts import jsonl, sentence, timestamp, tool_output

JSON = Any
MODEL = "gpt-5.5"
INSTRUCTIONS = " ".join(
    "You are Codex, a coding agent. Keep changes small, run the tests, explain what you did."
    for _ in range(140)
)
EXEC_CUT = 10_000
SUBAGENT_EVERY = 8


def _uuid7(rng: random.Random, ms: int) -> str:
    return str(uuid.UUID(int=(ms << 80) | (0x7 << 76) | rng.getrandbits(76)))


class _Rollout:
    """One rollout being written: its lines, the clock, the running usage total."""

    def __init__(self, rng: random.Random, thread: str, start_ms: int) -> None:
        self.rng, self.thread, self.ms, self.start = rng, thread, start_ms, start_ms
        self.lines: list[JSON] = []
        self.total = dict.fromkeys(
            ("input_tokens", "cached_input_tokens", "output_tokens", "reasoning_output_tokens",
             "total_tokens"), 0,
        )  # fmt: skip

    def put(self, kind: str, payload: JSON, step_ms: int = 50) -> None:
        self.ms += step_ms
        self.lines.append({"timestamp": timestamp(self.ms), "type": kind, "payload": payload})

    def event(self, payload: JSON, step_ms: int = 1) -> None:
        self.put("event_msg", payload, step_ms)

    def item(self, payload: JSON, step_ms: int = 50) -> None:
        self.put("response_item", payload, step_ms)

    def token_count(self, repeat: bool = False) -> None:
        if not repeat:
            inp = self.rng.randint(6_000, 40_000)
            last = {
                "input_tokens": inp,
                "cached_input_tokens": inp * 7 // 8,
                "output_tokens": self.rng.randint(40, 900),
                "reasoning_output_tokens": self.rng.randint(0, 300),
            }
            last["total_tokens"] = last["input_tokens"] + last["output_tokens"]
            for k, v in last.items():
                self.total[k] += v
            self.last = last
        info = {"total_token_usage": dict(self.total), "last_token_usage": dict(self.last),
                "model_context_window": 272_000}  # fmt: skip
        self.event({"type": "token_count", "info": info, "rate_limits": None})

    def turn(self, index: int, turn: str, prompt: str, output: str, first: bool) -> None:
        rng = self.rng
        self.event(
            {"type": "task_started", "turn_id": turn, "model_context_window": 272_000}, 30_000
        )
        if first:
            self.item(
                _text("developer", "<permissions instructions>\nsandbox_mode is workspace-write.")
            )
            self.item(
                _text(
                    "user", "<environment_context>\n  <cwd>/work/app</cwd>\n</environment_context>"
                )
            )
        self.put("turn_context", {"turn_id": turn, "cwd": "/work/app", "model": MODEL,
                                  "effort": "medium", "summary": "auto"}, 1)  # fmt: skip
        self.item(_text("user", prompt))
        self.event({"type": "user_message", "message": prompt, "images": [], "local_images": []})
        self.item(_reasoning(rng), 1500)
        call = f"call_{rng.getrandbits(96):024x}"
        cmd = f"pytest -q tests/test_{index}.py"
        self.item({"type": "function_call", "name": "exec_command", "call_id": call,
                   "arguments": json.dumps({"cmd": cmd, "workdir": "/work/app"})})  # fmt: skip
        self.token_count()
        code = rng.choice([0, 0, 0, 1])
        header = f"Chunk ID: {rng.getrandbits(24):06x}\nWall time: 0.9 seconds\nProcess exited with code {code}\nOutput:\n"
        self.item({"type": "function_call_output", "call_id": call, "output": header + output}, 900)
        self.event({"type": "exec_command_end", "call_id": call, "turn_id": turn,
                    "command": ["/bin/zsh", "-lc", cmd], "aggregated_output": output[:EXEC_CUT],
                    "exit_code": code, "duration": {"secs": 0, "nanos": 900_000_000},
                    "status": "completed"})  # fmt: skip
        self.token_count(repeat=True)
        answer = sentence(rng, 18)
        self.item(_reasoning(rng), 1200)
        self.event({"type": "agent_message", "message": answer, "phase": "final_answer"})
        self.item({**_text("assistant", answer), "phase": "final_answer"})
        self.token_count()
        self.event({"type": "task_complete", "turn_id": turn, "last_agent_message": answer})

    def write(self, dest: Path) -> int:
        start = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=self.start)
        folder = dest / "sessions" / start.strftime("%Y/%m/%d")
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"rollout-{start.strftime('%Y-%m-%dT%H-%M-%S')}-{self.thread}.jsonl"
        text = jsonl(self.lines)
        path.write_text(text, encoding="utf-8")
        return len(text.encode())


def _text(role: str, text: str) -> JSON:
    kind = "output_text" if role == "assistant" else "input_text"
    return {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}


def _reasoning(rng: random.Random) -> JSON:
    blob = base64.urlsafe_b64encode(rng.randbytes(rng.randint(600, 2400))).decode()
    return {"type": "reasoning", "summary": [{"type": "summary_text", "text": sentence(rng, 10)}],
            "content": None, "encrypted_content": "gAAAAA" + blob}  # fmt: skip


def _meta(thread: str, ms: int, **extra: JSON) -> JSON:
    return {"id": thread, "timestamp": timestamp(ms), "cwd": "/work/app", "originator": "codex-tui",
            "cli_version": "0.136.0", "source": "cli", "model_provider": "openai",
            "base_instructions": {"text": INSTRUCTIONS}, **extra}  # fmt: skip


def _start(r: _Rollout, meta: JSON) -> None:
    r.lines.append({"timestamp": meta["timestamp"], "type": "session_meta", "payload": meta})


def build_codex_corpus(
    dest: Path,
    sessions: int,
    seed: int = 1,
    *,
    turns: int = 8,
    fork_rate: float = 0.3,
    tool_output_bytes: int = 0,
) -> int:
    """Write ``sessions`` conversations (and their subagents) under ``dest/sessions``;
    return the bytes written."""
    rng = random.Random(seed)
    total = 0
    for i in range(sessions):
        ms = 1_780_000_000_000 + i * 3_600_000
        thread = _uuid7(rng, ms)
        r = _Rollout(rng, thread, ms)
        _start(r, _meta(thread, ms))
        for t in range(turns):
            task = f"Fix failing test {t} of module {i}: {sentence(rng, 8)}"
            out = tool_output(rng, i, tool_output_bytes)
            r.turn(i, _uuid7(rng, r.ms), task, out, first=t == 0)
            if t < turns - 1 and rng.random() < fork_rate:  # regenerated: rolled back, asked again
                r.event({"type": "thread_rolled_back", "num_turns": 1}, 20_000)
                r.turn(i, _uuid7(rng, r.ms), "Try again, differently: " + task, out, first=False)
        if i % SUBAGENT_EVERY == SUBAGENT_EVERY - 1:
            total += _subagent(rng, r, dest, i, tool_output_bytes)
        total += r.write(dest)
    return total


def _subagent(rng: random.Random, parent: _Rollout, dest: Path, i: int, size: int) -> int:
    """A spawn call in the parent's last turn, and the child's rollout: the parent's lines up
    to the call (the replay), then the child's own turn."""
    child_ms = parent.ms + 100
    child = _uuid7(rng, child_ms)
    call = f"call_{rng.getrandbits(96):024x}"
    message = f"Find every caller of module {i}."
    parent.item({"type": "function_call", "name": "spawn_agent", "call_id": call,
                 "arguments": json.dumps({"message": message, "agent_type": "explorer"})})  # fmt: skip
    replay = list(parent.lines[1:])
    parent.token_count()
    parent.item({"type": "function_call_output", "call_id": call,
                 "output": json.dumps({"agent_id": child, "nickname": "Ada"})})  # fmt: skip
    c = _Rollout(rng, child, child_ms)
    c.total = dict(parent.total)
    spawn = {"parent_thread_id": parent.thread, "depth": 1, "agent_role": "explorer"}
    _start(c, _meta(child, child_ms, source={"subagent": {"thread_spawn": spawn}}))
    c.lines.extend({**x, "timestamp": timestamp(child_ms)} for x in replay)
    c.turn(i, _uuid7(rng, child_ms), message, tool_output(rng, i, size), first=False)
    return c.write(dest)
