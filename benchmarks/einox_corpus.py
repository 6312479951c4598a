"""einox session stores made from code, for the benchmark: the same conversations as
``corpus.py`` (tool calls, forks, large tool outputs, planted secrets) in einox's own form.

    python benchmarks/corpus.py corpus /tmp/einox --format einox --sessions 200 --tool-output-kb 36

Each conversation is one ``users/<owner>/sessions/<sid>/session.json`` (spec einox §2-§6):
events and messages turn by turn, tool outputs over 8,192 bytes cut to a
``<persisted-output>`` placeholder with the full text in ``spill/trunc/<call id>``. A
regenerated turn is what einox records for "retry from this answer": a ForkAt session
(§7) that copies the events up to the anchor's ``session_end`` and the messages up to its
``hist_len``, notes the fork, and goes on with its own turn after the source was last
used, so the reader marks the source's later turns abandoned. Eight conversations per
owner (an owner is a unit of work).
"""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from texts import sentence, tool_output

JSON = Any
#: einox cuts a tool output longer than this to a placeholder and spills the full text
SPILL_BYTES = 8192
PER_OWNER = 8
MODEL = "openai/gpt-5"


def _time(ms: int) -> str:
    """RFC 3339 with microseconds and an offset, as Go writes ``time.Time``."""
    return (datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=ms)).isoformat()


class _Session:
    """One session.json being written: events numbered from 1, messages, spilled outputs."""

    def __init__(self, sid: str, owner: str, start_ms: int) -> None:
        self.sid, self.owner, self.started = sid, owner, start_ms
        self.events: list[JSON] = []
        self.messages: list[JSON] = []
        self.spill: dict[str, str] = {}
        self.ts = start_ms

    def event(self, name: str, data: JSON, step_ms: int = 400) -> int:
        self.ts += step_ms
        self.events.append({"id": len(self.events) + 1, "event": name, "data": data, "ts": self.ts})
        return len(self.events)

    def turn(self, rng: random.Random, t: int, call: str, output: str, first: bool) -> None:
        """A user message, a tool call with its output, and the answer (spec einox §4.1, §5)."""
        text, reasoning = sentence(rng, rng.randint(8, 40)), sentence(rng, 15)
        answer, cmd = sentence(rng, rng.randint(10, 60)), f"pytest -k t{t} /srv/proj"
        self.event("user_message", {"text": text}, 20_000)
        if first:
            self.event("instruction_change", {"text": "You are a careful coding agent."})
        self.event("thinking_delta", {"delta": reasoning})
        self.event("usage", _usage(500 + 40 * t, 60))
        self.event("tool_call", {"call_id": call, "tool": "bash", "args_digest": f"cmd: {cmd}"})
        self.event(
            "tool_result", {"call_id": call, "ok": True, "digest": "ran", "preview": output[:400]}
        )
        half = len(answer) // 2
        self.event("text_delta", {"delta": answer[:half]})
        self.event("text_delta", {"delta": answer[half:]})
        self.event("usage", _usage(800 + 40 * t, 90))
        content = output
        if len(output.encode("utf-8")) > SPILL_BYTES:
            self.spill[call] = output
            content = (
                f"<persisted-output>\nOutput too large ({len(output)}). Full output saved to: "
                f"spill/trunc/{call}\nPreview (first 4096):\n{output[:4096]}\n</persisted-output>"
            )
        self.messages += [
            {"role": "user", "content": text},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "index": 0,
                        "id": call,
                        "type": "function",
                        "function": {"name": "bash", "arguments": json.dumps({"cmd": cmd})},
                    }
                ],
                "reasoning_content": reasoning,
            },
            {"role": "tool", "content": content, "tool_call_id": call},
            {"role": "assistant", "content": answer},
        ]
        self.event("session_end", {"summary": answer[-60:], "hist_len": len(self.messages)})

    def write(self, dest: Path, task: str) -> int:
        folder = dest / "users" / self.owner / "sessions" / self.sid
        (folder / "spill" / "trunc").mkdir(parents=True, exist_ok=True)
        record = {
            "sid": self.sid,
            "owner": self.owner,
            "task": task[:16] + ("…" if len(task) > 16 else ""),
            "title": task[:40],
            "state": "ended",
            "mode": "auto",
            "model": {"model": MODEL, "effort": "low", "mode": "auto"},
            "last_used_model": MODEL,
            "last_instruction": "You are a careful coding agent.",
            "started_at": _time(self.started),
            "updated_at": _time(self.ts),
            "events": self.events,
            "summary": self.messages[-1]["content"][-60:],
            "file_changes": None,
            "messages": self.messages,
            "pending_due": "0001-01-01T00:00:00Z",
        }
        data = json.dumps(record, ensure_ascii=False, indent=2).encode("utf-8")
        (folder / "session.json").write_bytes(data)
        for call, text in self.spill.items():
            (folder / "spill" / "trunc" / call).write_text(text, encoding="utf-8")
        return len(data) + sum(len(t.encode("utf-8")) for t in self.spill.values())


def _usage(prompt: int, completion: int) -> JSON:
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "est_instruction": 8,
        "est_tools": 420,
        "est_messages": prompt - 428,
    }


def _sid(rng: random.Random) -> str:
    return f"s{rng.getrandbits(32):08x}"


def _fork(rng: random.Random, source: _Session, anchor: int, k: int, index: int) -> _Session:
    """A ForkAt of ``source`` at the ``session_end`` event ``anchor``, made after the source
    was last used, with one turn of its own (spec einox §7.2)."""
    fork = _Session(_sid(rng), source.owner, source.ts + 60_000 * (k + 1))
    fork.events = [dict(e) for e in source.events[:anchor]]
    fork.messages = [
        dict(m) for m in source.messages[: source.events[anchor - 1]["data"]["hist_len"]]
    ]
    inherited = {m.get("tool_call_id") for m in fork.messages}
    fork.spill = {c: t for c, t in source.spill.items() if c in inherited}  # spill is copied
    fork.ts = fork.started
    detail = f"锚定分叉自会话 {source.sid}（锚点事件 #{anchor}；工作区不随行）"
    fork.event("harness_note", {"kind": "fork", "title": "会话分叉", "detail": detail}, 0)
    call = f"call_f{k}"
    fork.turn(rng, k, call, tool_output(rng, index, 0), first=False)
    return fork


def build_einox_corpus(
    dest: Path,
    sessions: int,
    seed: int = 1,
    *,
    turns: int = 8,
    fork_rate: float = 0.3,
    tool_output_bytes: int = 0,
) -> int:
    """Write ``sessions`` conversations (plus a fork session per regenerated turn) under
    ``dest``; return the bytes written (session files and spilled outputs)."""
    rng = random.Random(seed)
    total = 0
    for i in range(sessions):
        owner = f"user{i // PER_OWNER}"
        s = _Session(_sid(rng), owner, 1_767_261_600_000 + i * 86_400_000)
        anchors: list[int] = []
        for t in range(turns):
            s.turn(rng, t, f"call_{t}", tool_output(rng, i, tool_output_bytes), first=t == 0)
            if t < turns - 1 and rng.random() < fork_rate:  # the source goes on after it
                anchors.append(len(s.events))
        task = s.messages[0]["content"]
        total += s.write(dest, task)
        for k, anchor in enumerate(anchors):
            total += _fork(rng, s, anchor, k, i).write(dest, task)
    return total
