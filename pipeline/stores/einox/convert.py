"""One einox session as a linear list of Agent Session Format entries (spec §5-§9).

Messages give the content (complete arguments, final text); events give the
time, the usage of each model call, the model in force, human verdicts and
outcomes.  Each turn's entries are contiguous, so a fork can be hung on its
source after the turns they share (``lineage.py``).  Events without an
equivalent are kept as ``einox:event`` extension entries; members without
one as ``einox:``-prefixed members.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trajset.schemas.entries import TOOL_FAILED
from trajset.schemas.openresponses import text_message

from .. import numbers
from ..numbers import counts
from ..regular import read_text
from . import outcomes, texts
from .compaction import Compaction
from .decisions import Decisions
from .entries import Converted, Entries
from .record import Event, Record
from .turns import Turn, assign_messages, split_events

JSON = Any
#: events whose content is carried by messages, config or decisions (not kept as einox:event)
CARRIED = frozenset(
    {
        "user_message", "text_delta", "thinking_delta", "tool_call", "tool_result", "usage",
        "model_change", "instruction_change",
        "approval_request", "approval_decision", "approval_timeout",
        "ask_user_request", "ask_decision", "ask_timeout", "ask_ignored",
        "plan_request", "plan_decision", "plan_timeout",
    }
)  # fmt: skip


@dataclass
class Converter:
    record: Record
    keep_truncated: bool = False
    model: str = ""
    instructions: str = ""
    calls: int = 0
    out: Entries = field(init=False)
    message_entry: dict[int, str] = field(default_factory=dict)  # message index -> first entry
    compaction: Compaction | None = None

    def __post_init__(self) -> None:
        self.out = Entries(self.record.sid, str(self.record.path), clock=self.record.started_ms())
        self.compaction = Compaction.of(self.record)

    # -- whole session ------------------------------------------------------------

    def run(self, inherited: int = 0) -> Converted:
        r = self.record
        turns, trailing = split_events(r.events)
        assign_messages(turns, r.messages, inherited)
        self.model = str((r.raw.get("model") or {}).get("model") or "")
        first_change = next((e for e in r.events if e.event == "model_change"), None)
        if first_change is not None and isinstance(first_change.data, dict):
            self.model = str(first_change.data.get("from") or self.model)
        self._session_config(turns)
        self.out.add("einox:session", r.started_ms(), **session_facts(r))
        if inherited:
            self._messages(Turn(start=0, end=inherited), inherited=True)
        ends = [len(self.out.raws)]
        for turn in turns:
            self._turn(turn)
            ends.append(len(self.out.raws))
        for e in trailing:
            self._keep_event(e)
        outcomes.session_outcome(self.out, self.record, turns)
        return Converted(r, self.out, ends)

    def _session_config(self, turns: list[Turn]) -> None:
        r = self.record
        first = next((e for t in turns for e in t.events if e.event == "instruction_change"), None)
        self.instructions = str(
            (first.data or {}).get("text")
            if first is not None and isinstance(first.data, dict)
            else r.raw.get("last_instruction") or ""
        )
        body: dict[str, JSON] = {"model": self.model} if self.model else {}
        if self.instructions:
            body["instructions"] = self.instructions
        self.out.add("config", r.started_ms(), **body)

    # -- one turn -----------------------------------------------------------------

    def _turn(self, turn: Turn) -> None:
        usage = [e for e in turn.events if e.event == "usage" and not _get(e, "spawn_id")]
        results = {_get(e, "call_id"): e for e in turn.events if e.event == "tool_result"}
        decisions = Decisions.of(turn.events)
        opening = next(
            (
                e
                for e in turn.events
                if e.event in ("user_message", "steer_injected", "notify_injected")
            ),
            None,
        )
        self.out.clock = max(self.out.clock, (opening.ts if opening else None) or 0)
        for e in turn.events:
            if e.event == "model_change" and isinstance(e.data, dict) and e.data.get("to"):
                self.model = str(e.data["to"])
            if (
                e.event == "instruction_change"
                and _get(e, "text")
                and _get(e, "text") != self.instructions
            ):
                self.instructions = str(_get(e, "text"))
                self.out.add("config", e.ts, instructions=self.instructions)
        self._messages(turn, usage=usage, results=results, decisions=decisions)
        for e in turn.events:
            if e.event not in CARRIED:
                self._keep_event(e)
        outcomes.turn_outcomes(self.out, turn, decisions)

    def _messages(
        self,
        turn: Turn,
        *,
        inherited: bool = False,
        usage: list[Event] | None = None,
        results: dict[str, Event] | None = None,
        decisions: Decisions | None = None,
    ) -> None:
        calls = iter(usage or [])  # one usage event per model call of this turn, in order
        opening = _opening_index(self.record.messages, turn)
        for index in range(turn.start, turn.end):
            m = self.record.messages[index]
            role = m.get("role")
            own_call = role == "assistant" and index > opening  # earlier: history the turn carries
            if own_call and self.compaction and self.compaction.due(turn):
                self._compaction(self.compaction)
            self.message_entry[index] = f"{self.out.sid}-{len(self.out.raws) + 1:04d}"
            if role == "assistant":
                self._assistant(m, next(calls, None) if own_call else None, decisions, inherited)
            elif role == "tool":
                self._tool(m, (results or {}).get(str(m.get("tool_call_id") or "")), inherited)
            else:
                self._user_or_system(m, str(role), inherited)

    def _user_or_system(self, m: JSON, role: str, inherited: bool) -> None:
        text = str(m.get("content") or "")
        item = {"type": "message", "role": role, "content": [{"type": "input_text", "text": text}]}
        extra: dict[str, JSON] = {"einox:inherited": True} if inherited else {}
        mark = texts.injected(text) if role == "user" else None
        if mark is not None:
            extra["einox:injected"] = mark[0]
            if not mark[1]:
                extra["visible"] = False
            if mark[0] == "gate_feedback":
                outcomes.gate_failed(self.out, text)
        if m.get("extra"):
            extra["einox:extra"] = m["extra"]
        self.out.add("item", None, item=item, **extra)

    def _assistant(
        self, m: JSON, usage: Event | None, decisions: Decisions | None, inherited: bool
    ) -> None:
        self.calls += 1
        rid = f"{self.record.sid}-resp{self.calls}"
        mark = {"einox:inherited": True} if inherited else {}
        ts = usage.ts if usage is not None else None
        items: list[dict[str, JSON]] = []
        if m.get("reasoning_content"):
            items.append(
                {
                    "type": "reasoning",
                    "summary": [{"type": "summary_text", "text": str(m["reasoning_content"])}],
                }
            )
        if m.get("content"):
            items.append(text_message("assistant", str(m["content"])))
        calls = [c for c in m.get("tool_calls") or [] if isinstance(c, dict)]
        for c in calls:
            fn = c.get("function") or {}
            items.append(
                {
                    "type": "function_call",
                    "call_id": str(c.get("id") or ""),
                    "name": str(fn.get("name") or ""),
                    "arguments": str(fn.get("arguments") or ""),
                }
            )
        call_ids = {}
        for item in items:
            eid = self.out.add("item", ts, item=item, response=rid, **mark)
            if item["type"] == "function_call":
                call_ids[item["call_id"]] = eid
        body: dict[str, JSON] = {"response_id": rid}
        if self.model:
            body["model"] = self.model
        body["status"] = "completed" if items else "failed"
        if usage is not None and isinstance(usage.data, dict):
            d = usage.data
            keys = ("prompt_tokens", "completion_tokens", "total_tokens")
            where = f"events[id={usage.id}].data"
            if (got := counts(self.out.notes, d, keys, where, self.out.source, None)) is not None:
                pt, ct, total = got
                body["usage"] = numbers.usage(pt, ct, total=total)
            body["einox:usage"] = d
        self.out.add("response", ts, **body, **mark)
        for cid, target in call_ids.items():
            for verdict in decisions.of_call(cid) if decisions else []:
                self.out.add("decision", verdict.ts, call_id=cid, target=target, **verdict.body)

    def _tool(self, m: JSON, result: Event | None, inherited: bool) -> None:
        cid = str(m.get("tool_call_id") or "")
        output = self._restored(str(m.get("content") or ""), cid)
        extra: dict[str, JSON] = {"einox:inherited": True} if inherited else {}
        if result is not None and isinstance(result.data, dict):
            extra["einox:result"] = {
                k: v for k, v in result.data.items() if k not in ("call_id", "preview")
            }
            if result.data.get("ok") is False:
                extra[TOOL_FAILED] = True
        item = {"type": "function_call_output", "call_id": cid, "output": output}
        self.out.add("item", result.ts if result else None, item=item, **extra)

    def _restored(self, content: str, call_id: str) -> str:
        """A truncated tool output restored from ``spill/trunc/`` unless told to keep the placeholder."""
        if self.keep_truncated or texts.PLACEHOLDER not in content:
            return content
        m = texts.SPILL_RE.search(content)
        path = self.record.ws / "spill" / "trunc" / (m.group(1) if m else call_id)
        try:
            return read_text(path)
        except (OSError, UnicodeDecodeError):
            return content

    def _compaction(self, c: Compaction) -> None:
        """The summary that replaced the first ``watermark`` messages (once, where it fired)."""
        self.compaction = None
        first_kept = self.message_entry.get(c.watermark)
        if first_kept is None:
            return
        summary = {
            "type": "message",
            "role": "system",
            "content": [{"type": "input_text", "text": c.summary}],
        }
        config = (
            {"model": self.model, "instructions": self.instructions}
            if self.instructions
            else {"model": self.model}
        )
        self.out.add(
            "compaction",
            c.ts,
            first_kept=first_kept,
            summary=summary,
            config=config,
            **{"einox:compact": c.state},
        )

    def _keep_event(self, e: Event) -> None:
        self.out.add("einox:event", e.ts, event=e.event, event_id=e.id, data=e.data)


def session_facts(r: Record) -> dict[str, JSON]:
    """The record's members without an equivalent (``einox:session`` entry): all but the
    event stream, the history and the prompt (those become entries)."""
    skip = ("events", "messages", "last_instruction", "anchor_instruction")
    return {"record": {k: v for k, v in r.raw.items() if k not in skip}}


def _opening_index(messages: list[dict[str, JSON]], turn: Turn) -> int:
    """The turn's own user input: the last user message of its slice carrying the opening text."""
    text = turn.opening_text()
    hits = [
        i
        for i in range(turn.start, turn.end)
        if messages[i].get("role") == "user"
        and text
        and text in str(messages[i].get("content") or "")
    ]
    return hits[-1] if hits else turn.start


def _get(e: Event, key: str) -> JSON:
    return e.data.get(key) if isinstance(e.data, dict) else None


def convert(record: Record, inherited: int = 0, keep_truncated: bool = False) -> Converted:
    return Converter(record, keep_truncated).run(inherited)


__all__ = ["Converted", "Entries", "Path", "convert"]
