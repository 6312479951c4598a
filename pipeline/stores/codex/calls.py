"""Codex model calls: where one begins and ends, and whose usage is whose (specs/codex.md).

A model call is the output items since the last input (a prompt, a tool output, a turn
boundary); they get one ``response`` entry carrying the call's usage.  Where a
``token_count`` sits differs by version, so its new ``last_token_usage`` goes to:

- the open call, when it has items (0.7x-0.130: items, ``token_count``, outputs);
- the last call closed without usage, when no call opened since (0.140+: items,
  outputs, then ``token_count``, emitted once pending tools resolve:
  ``codex-rs/core/src/session/turn.rs``);
- else the next call to open (0.47: ``token_count``, then the call's items);
- a compaction's summarising call, when one waits for it.

A repeat of the previous total is skipped.  A call closed by an input ends at its last
item's time, not the input's.  A call the rollout never answers gets the ``aborted``
output Codex sends in its place, before the next request.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any, NamedTuple

from trajset.schemas.entries import TOOL_FAILED

from ..draft import SessionDraft
from .rollouts import Line

JSON = Any


class Counted(NamedTuple):
    """A ``token_count``'s new usage: its line's key, the usage, the event's other members."""

    key: str
    usage: JSON
    member: JSON


@dataclass
class State:
    """What the conversion of a path knows after a line (copied at forks)."""

    tail: str | None = None  # the last entry on the path
    ts: str = "1970-01-01T00:00:00Z"
    model: str = ""
    reasoning: JSON = None
    total: JSON = None  # the last total_token_usage counted
    call: str = ""  # the open model call's response id
    call_last: str = ""  # its last item
    call_ts: str = ""  # that item's time
    held: Counted | None = None  # usage written before its call's items (0.47)
    unpriced: JSON = None  # the last call's response entry, closed with no usage (0.140+)
    run: str = ""  # the open turn
    pending: tuple[str, ...] = ()  # calls of the open turn without an output
    prompt: str = ""  # the open turn's typed prompt
    compaction: JSON = None  # the last compaction, until a model call follows it
    unanswered: tuple[str, ...] = ()  # calls made that the rollout never answers


class Calls:
    """The model-call half of a tree's conversion: entries go into ``draft``."""

    draft: SessionDraft
    counts: Counter[str]
    #: the call ids the tree's outputs answer
    answered: frozenset[str]

    def put(self, s: State, eid: str, entry_type: str, **body: JSON) -> str:
        """An entry below the segment's tail, at its time; it becomes the tail."""
        s.tail = self.draft.add(entry_type, eid, s.tail, s.ts, **body)
        return eid

    # ---------------------------------------------------------------- model calls

    def open_call(self, s: State, line: Line) -> str:
        if not s.call:
            self.settle(s)
            s.call = line.key
        return s.call

    def settle(self, s: State) -> None:
        """Before the next request (a model call, a prompt): an ``aborted`` output for each
        call the rollout never answers, as Codex puts in that request
        (``ensure_call_outputs_present``, ``codex-rs/core/src/context_manager/normalize.rs``)."""
        for cid in s.unanswered:
            item = {"type": "function_call_output", "call_id": cid, "output": "aborted"}
            more = {TOOL_FAILED: True, "codex:synthetic_output": True}
            self.put(s, f"{s.tail}:aborted:{cid}", "item", item=item, **more)
            self.counts["synthetic_outputs"] += 1
        s.unanswered = ()

    def close_call(self, s: State, status: str = "completed", use: Counted | None = None) -> None:
        """The open call's ``response`` entry: at ``use``'s line, given the usage it closes
        with, else after its last item and at its time, with the usage held for it if any
        (usage and no open call: ``unclaimed_usage``)."""
        eid, ts = (use.key, s.ts) if use is not None else ("", "")
        if use is None and s.held is not None:
            use, s.held = s.held, None
        if not s.call:
            if use is not None:
                self.unclaimed_usage(s, use)
            return
        body: dict[str, JSON] = {"response_id": s.call, "status": status}
        if s.model:
            body["model"] = s.model
        if use is not None:
            body["usage"] = use.usage
            body["codex:token_count"] = use.member
        if not eid:
            eid, ts = f"{s.call_last}:response", s.call_ts or s.ts
        s.tail = self.draft.add("response", eid, s.tail, ts, **body)
        s.unpriced = None if use is not None else self.draft.last
        self.counts["responses"] += 1
        s.call = s.call_last = s.call_ts = ""
        s.compaction = None

    def place_usage(self, s: State, use: Counted) -> None:
        """A new usage record's call: the open one
        (0.7x-0.130: items, usage, outputs), else the last one closed without usage when
        none opened since (0.140+: items, outputs, usage), else the next to open (0.47:
        usage, items); a compaction's when one waits for its summarising call."""
        if s.call:
            self.close_call(s, use=use)
        elif s.unpriced is not None:
            s.unpriced["usage"], s.unpriced["codex:token_count"] = use.usage, use.member
            s.unpriced = None
            self.counts["usage_after_outputs"] += 1
        elif isinstance(s.compaction, dict) and "usage" not in s.compaction:
            self.unclaimed_usage(s, use)
        else:
            s.held = use
            self.counts["usage_before_items"] += 1

    def unclaimed_usage(self, s: State, use: Counted) -> None:
        """Usage no call claimed: the summarising call of the compaction just made, else a
        call whose output was not written (a ``response`` entry with no items)."""
        if isinstance(s.compaction, dict) and "usage" not in s.compaction:
            s.compaction["usage"] = use.usage
            s.compaction = None
            return
        body = {"response_id": use.key, "status": "completed", "usage": use.usage}
        if s.model:
            body["model"] = s.model
        self.put(s, use.key, "response", **body, **{"codex:token_count": use.member})
        self.counts["responses_without_items"] += 1

    def output(self, s: State, line: Line, item: JSON, **extra: JSON) -> None:
        """An item the model produced, in the open call."""
        rid = self.open_call(s, line)
        s.unpriced = None
        s.call_last = self.put(s, line.key, "item", item=item, response=rid, **extra)
        s.call_ts = s.ts

    def note_usage(self, use: JSON) -> None:
        """The thread's usage totals, for ``inspect``."""
        self.counts["usage/input_tokens"] += use["input_tokens"]
        self.counts["usage/cached_tokens"] += use["input_tokens_details"]["cached_tokens"]
        self.counts["usage/output_tokens"] += use["output_tokens"]
        self.counts["usage/reasoning_tokens"] += use["output_tokens_details"]["reasoning_tokens"]

    # ---------------------------------------------------------------- the lines
