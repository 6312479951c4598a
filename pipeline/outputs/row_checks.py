"""What every training row must satisfy, whatever store it came from.

A reader that misplaces a model call's boundary, trains on what the model did not say,
or reads one prompt twice writes rows that load and render but teach the wrong thing.
These checks catch that from the rows alone, so the same code counts violations while
an export runs (the manifest's ``row_checks``) and ``trajset validate`` finds them in a
finished folder:

- ``empty_trainable``: a trainable assistant message with no text, reasoning or tool call;
- ``unanswered_call``: a tool call no tool message of its row answers (calls in the row's
  last message are excepted: the path ended there);
- ``repeated_prompt``: a user message whose text (or, with none, images) the next message
  repeats;
- ``trained_twice``: one model answer trainable in two ``sft`` rows of a session (an
  answer is known by its session, its message and the message before it);
- ``usage_twice``: two steps of one path that are one model call (the store's response
  id) and both carry its usage: counted twice.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

Row = dict[str, Any]
_IMAGE = re.compile(r"\[image: [^\]]*\]")

#: the prefix of the run's counts of violations (``row_checks/<check>``)
COUNTED = "row_checks/"
#: check -> what a violation means
CHECKS: dict[str, str] = {
    "empty_trainable": "a trainable assistant message with no text, reasoning or tool call",
    "unanswered_call": "a tool call that no tool message of its row answers",
    "repeated_prompt": "a user message repeated in the next message",
    "trained_twice": "a model answer trainable in more than one sft row",
    "usage_twice": "one model call's usage on two steps of a path",
}


@dataclass(frozen=True)
class Violation:
    check: str
    where: str

    def __str__(self) -> str:
        return f"{self.where}: {CHECKS[self.check]} ({self.check})"


def _said(m: Row) -> bool:
    return bool(m.get("content") or m.get("reasoning_content") or m.get("tool_calls"))


def _prompt(m: Row) -> str:
    """A user message's text without its image markers, else its markers (an image alone)."""
    content = str(m.get("content") or "")
    return _IMAGE.sub("", content).strip() or content


def _repeated(m: Row, nxt: Row | None) -> bool:
    if nxt is None or m["role"] != "user" or nxt["role"] != "user":
        return False
    return bool(_prompt(m)) and _prompt(m) == _prompt(nxt)


def _key(m: Row | None) -> str:
    if m is None:
        return ""
    keys = ("role", "content", "reasoning_content", "tool_calls", "tool_call_id")
    return json.dumps([m.get(k) for k in keys], sort_keys=True, default=str)


def sft_violations(rows: Iterable[Row]) -> Iterator[Violation]:
    """Violations of the checks over ``sft`` rows (rows of one session's trees, or more)."""
    trained: dict[tuple[str, str, str], str] = {}
    for row in rows:
        msgs: list[Row] = row["messages"] or []
        place = f"sft {row['session_id']} {row['leaf_id']} window {row.get('window', 0)}"
        # each call id's last tool message: a call is answered by one after it
        answered = {m.get("tool_call_id"): i for i, m in enumerate(msgs) if m["role"] == "tool"}
        for i, m in enumerate(msgs):
            at = f"{place} message {i}"
            nxt = msgs[i + 1] if i + 1 < len(msgs) else None
            if m["role"] == "assistant" and m.get("trainable"):
                if not _said(m):
                    yield Violation("empty_trainable", at)
                key = (str(row["session_id"]), _key(msgs[i - 1] if i else None), _key(m))
                first = trained.setdefault(key, place)
                if first != place:
                    yield Violation("trained_twice", f"{at} (also in {first})")
            if m["role"] == "assistant" and nxt is not None:
                for call in m.get("tool_calls") or []:
                    if answered.get(call.get("id"), -1) < i:
                        yield Violation("unanswered_call", f"{at} call {call.get('id')}")
            if _repeated(m, nxt):
                yield Violation("repeated_prompt", at)


def _response_id(row: Row) -> str | None:
    """The store's id of the model call a step is (``extra.openresponses.response``)."""
    extra = row.get("extra")
    try:
        got = json.loads(extra)["openresponses"]["response"]["response_id"] if extra else None
    except (ValueError, KeyError, TypeError):
        return None
    return got if isinstance(got, str) else None


def steps_violations(rows: Iterable[Row]) -> Iterator[Violation]:
    """``usage_twice`` over ``steps`` rows: two steps of one path that are the same model
    call (its response id) and both carry usage."""
    seen: dict[tuple[str, str, str], object] = {}
    for row in rows:
        if row.get("is_copied_context") or row.get("prompt_tokens") is None:
            continue
        call = _response_id(row)
        if call is None:
            continue
        first = seen.setdefault((str(row["session_id"]), str(row["leaf_id"]), call), row["step_id"])
        if first != row["step_id"]:
            where = f"steps {row['session_id']} {row['leaf_id']} step {row['step_id']}"
            yield Violation("usage_twice", f"{where} (model call {call}, as step {first})")


def found(counts: Mapping[str, int]) -> dict[str, int]:
    """Every check's violations in a run's counts (0 for a check none broke)."""
    return {name: counts.get(f"{COUNTED}{name}", 0) for name in CHECKS}


def count(sft: Iterable[Row], steps: Iterable[Row]) -> Counter[str]:
    """How many violations of each check (every check present, 0 when none)."""
    counts = Counter({name: 0 for name in CHECKS})
    for v in (*sft_violations(sft), *steps_violations(steps)):
        counts[v.check] += 1
    return counts
