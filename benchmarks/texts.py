"""The words the generated corpora are made of: sentences and test-runner-like tool outputs,
one in five with a planted key and e-mail address, and their times (shared by ``corpus.py``
and the other store kinds' builders, so every store kind holds the same text)."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta
from typing import Any

WORDS = [
    "the",
    "build",
    "fails",
    "because",
    "the",
    "config",
    "path",
    "is",
    "wrong",
    "so",
    "we",
    "patch",
    "loader",
    "and",
    "rerun",
    "tests",
    "then",
    "check",
    "output",
    "parse",
    "json",
    "handle",
    "error",
    "retry",
    "request",
    "update",
    "docs",
    "review",
    "diff",
]


def sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def tool_text(rng: random.Random, size: int) -> str:
    """Test-runner-like output: 3-30 sentences, or about ``size`` bytes of them."""
    if not size:
        return "\n".join(sentence(rng, 12) for _ in range(rng.randint(3, 30)))
    target = rng.randint(size // 2, size * 3 // 2)
    lines: list[str] = []
    n = 0
    while n < target:
        lines.append(f"{rng.choice(WORDS)}.py:{rng.randint(1, 900)}: {sentence(rng, 12)}")
        n += len(lines[-1]) + 1
    return "\n".join(lines)


def tool_output(rng: random.Random, index: int, size: int, secrets: bool = True) -> str:
    """A tool output (``tool_text``), one in five with a planted key and e-mail address."""
    out = tool_text(rng, size)
    if secrets and rng.random() < 0.2:
        out += f"\nexport OPENAI_API_KEY=sk-proj-{rng.getrandbits(160):040x}\ncontact: dev{index}@example.com"
    return out


def play(session: Any, rng: random.Random, index: int, turns: int, fork_rate: float,
         tool_output_bytes: int) -> None:  # fmt: skip
    """Conversation ``index``'s turns into a tree-shaped ``session`` (one with a ``leaf`` and
    a ``turn(index, prompt, output)``): a regenerated turn goes back to the turn's parent and
    asks again, so the two prompts are siblings."""
    for t in range(turns):
        task = f"Fix failing test {t} of module {index}: {sentence(rng, 8)}"
        out = tool_output(rng, index, tool_output_bytes)
        before = session.leaf
        session.turn(index, task, out)
        if t < turns - 1 and rng.random() < fork_rate:
            session.leaf = before
            session.turn(index, "Try again, differently: " + task, out)


def timestamp(ms: int) -> str:
    """RFC 3339 UTC with milliseconds and ``Z`` (``2026-06-02T15:40:09.120Z``), as the agents write."""
    return (datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=ms)).strftime(
        "%Y-%m-%dT%H:%M:%S.%f"
    )[:-3] + "Z"


def jsonl(lines: list[Any]) -> str:
    """JSON Lines as the agents write them: one compact object per line, UTF-8 kept."""
    return "".join(json.dumps(x, ensure_ascii=False, separators=(",", ":")) + "\n" for x in lines)
