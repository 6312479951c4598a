"""A tree of Codex lines as Agent Session Format entries (specs/codex.md, mapping).

The lines are read in the order they were written; a line whose parent is not
the line before it (a rollback's fork, a fork's or a revert segment's first
line) continues from the state saved at its parent.  The state is small: the
last entry on the path, the model in force, the last usage total counted, the
open model call (``calls``: where a call ends and whose usage is whose), turn and
prompt.  Turns are runs; an aborted turn an outcome that never passes.  Events that
repeat an item are members of its entry; every other record is a ``codex:<type>``
entry.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from trajset.schemas.session import Issue

from ..draft import SessionDraft
from ..jsonl import json_kind
from .calls import Calls, Counted, State
from .events import Duplicates, is_context, is_prompt
from .items import call_item, output_item, reasoning_config, reasoning_item, text_message, usage
from .lineage import Tree
from .rollouts import Line

JSON = Any
CALLS = ("function_call", "custom_tool_call", "local_shell_call", "tool_search_call")
OUTPUTS = ("function_call_output", "custom_tool_call_output", "tool_search_output")
#: the line kinds of the outputs (``Line.kind``)
OUTPUT_KINDS = frozenset(f"response_item/{k}" for k in OUTPUTS)


class Converter(Calls):
    """Entries of one tree (``convert``)."""

    def __init__(self, tree: Tree, draft: SessionDraft) -> None:
        self.tree = tree
        self.paths = {pl.rollout.rollout: pl.rollout.path for pl in tree.placed}
        self.draft = draft
        self.counts: Counter[str] = Counter()
        self.current = ""  # the entry the thread's current leaf is
        self.instructions = _instructions(tree.root.meta)
        self.first_model = _first_model(tree)
        self.answered = frozenset(
            str(pl.line.payload.get("call_id") or "")
            for pl in tree.placed
            if pl.line.kind in OUTPUT_KINDS and isinstance(pl.line.payload, dict)
        )

    def line(self, s: State, line: Line, dups: Duplicates, is_root: bool) -> None:
        """The entries of one line (none for an event that repeats an item)."""
        if self.draft.is_time(line.ts, line.n):
            s.ts = line.ts
        if line.key in dups.repeated:
            self.counts["events_merged_into_items"] += 1
            return
        handler = HANDLERS.get(line.type)
        if line.type == "session_meta":
            self.session_meta(s, line, is_root)
        elif handler is not None and isinstance(line.payload, dict):
            handler(self, s, line, dups)
        else:
            self.counts[f"unknown/{line.type or 'untyped'}"] += 1
            self.put(s, line.key, f"codex:{line.type or 'untyped'}", payload=line.payload)

    def session_meta(self, s: State, line: Line, is_root: bool) -> None:
        payload = line.payload if isinstance(line.payload, dict) else {}
        if is_root:
            body: dict[str, JSON] = {}
            if self.first_model:
                body["model"] = self.first_model
            if self.instructions:
                body["instructions"] = self.instructions
            if isinstance(payload.get("dynamic_tools"), list):
                body["codex:dynamic_tools"] = payload["dynamic_tools"]
            self.put(s, line.key, "config", **body)
            s.model = self.first_model
            return
        kept = dict(payload)
        if _instructions(kept) == self.instructions:
            kept.pop("base_instructions", None)
        self.put(s, line.key, "codex:session_meta", payload=kept)


def _first_model(tree: Tree) -> str:
    """The model of the tree's first ``turn_context``: the root config's model."""
    for pl in tree.placed:
        p = pl.line.payload
        if pl.line.type == "turn_context" and isinstance(p, dict) and p.get("model"):
            return str(p["model"])
    return ""


def _instructions(meta: JSON) -> str:
    base = meta.get("base_instructions") if isinstance(meta, dict) else None
    text = base.get("text") if isinstance(base, dict) else base
    return text if isinstance(text, str) else ""


# -------------------------------------------------------------------- handlers


def _turn_context(c: Converter, s: State, line: Line, dups: Duplicates) -> None:
    p = line.payload
    c.close_call(s)
    body: dict[str, JSON] = {}
    if isinstance(p.get("model"), str) and p["model"]:
        body["model"] = s.model = p["model"]
    if (reasoning := reasoning_config(p)) is not None:
        body["reasoning"] = s.reasoning = reasoning
    c.put(s, line.key, "config", **body, **{"codex:turn_context": p})


def _response_item(c: Converter, s: State, line: Line, dups: Duplicates) -> None:
    p = line.payload
    kind = str(p.get("type") or "")
    events = {"codex:events": dups.events[line.key]} if line.key in dups.events else {}
    if kind == "message" and p.get("role") == "assistant":
        c.output(s, line, p, **events)
    elif kind == "message":
        c.close_call(s)
        if is_prompt(line, dups):
            c.settle(s)
            s.prompt = c.put(s, line.key, "item", item=p, **events)
            c.counts["prompts"] += 1
        else:
            c.put(s, line.key, "item", item=p, visible=False, **{"codex:context": True}, **events)
    elif kind == "reasoning":
        c.output(s, line, p, **events)
    elif kind in CALLS:
        item, extra = call_item(p)
        got = item.get("call_id")
        if not got or not isinstance(got, str):  # damaged: the call kept, under an id of its own
            item = {**item, "call_id": f"trajset-missing-call-id-{line.key}"}
            what = "without a call_id" if not got else f"whose call_id is {json_kind(got)}"
            c.draft.issues.append(Issue("bad_field", line.n, f"{kind} {what}; given "
                                        f"{item['call_id']!r}, so no output answers it"))  # fmt: skip
        c.output(s, line, item, **extra)
        cid = str(item.get("call_id") or "")
        s.pending = (*s.pending, cid)
        if cid not in c.answered:
            s.unanswered = (*s.unanswered, cid)
        c.counts["tool_calls"] += 1
    elif kind in OUTPUTS:
        c.close_call(s)
        if not isinstance(p.get("call_id"), str):
            c.draft.issues.append(Issue("bad_field", line.n, f"{kind} whose call_id is "
                                        f"{json_kind(p.get('call_id'))}: it answers no call"))  # fmt: skip
        item, extra = output_item(p, dups.ends.get(line.key, []))
        c.put(s, line.key, "item", item=item, **extra)
        s.pending = tuple(x for x in s.pending if x != item["call_id"])
    elif kind == "ghost_snapshot":
        c.counts["ghost_snapshots_skipped"] += 1
    elif kind.endswith("_output") or kind in ("compaction", "agent_message"):
        # agent_message (0.146+): a message between agents, delivered to the thread
        c.close_call(s)
        c.put(s, line.key, "item", item={"type": f"codex:{kind}", "payload": p})
    else:  # web_search_call, image_generation_call, tool_search_call, ...: model output
        c.counts[f"extension_items/{kind or 'untyped'}"] += 1
        c.output(s, line, {"type": f"codex:{kind or 'untyped'}", "payload": p})


def _compacted(c: Converter, s: State, line: Line, dups: Duplicates) -> None:
    p = line.payload
    c.close_call(s)
    message = p.get("message")
    history = p.get("replacement_history")
    remote = [x for x in history or [] if isinstance(x, dict) and x.get("type") == "compaction"]
    if isinstance(message, str) and message:
        summary = text_message("user", message)
    elif remote:
        summary = {k: v for k, v in remote[-1].items() if k in ("type", "id", "encrypted_content")}
    else:
        summary = text_message("user", "")
    config = {"model": s.model, "instructions": c.instructions, "reasoning": s.reasoning}
    body: dict[str, JSON] = {
        "first_kept": s.prompt or s.tail or "",
        "summary": summary,
        "config": {k: v for k, v in config.items() if v},
    }
    if history is not None:
        body["codex:replacement_history"] = history
    rest = {k: v for k, v in p.items() if k not in ("message", "replacement_history")}
    if rest:
        body["codex:compacted"] = rest
    c.put(s, line.key, "compaction", **body)
    s.compaction = c.draft.last
    c.counts["compactions"] += 1


def _token_count(c: Converter, s: State, line: Line) -> None:
    info = line.payload.get("info")
    total = info.get("total_token_usage") if isinstance(info, dict) else None
    use = usage(c.draft.notes, info, c.paths[line.rollout], line.n)
    if use is None:
        c.counts["token_counts_without_usage"] += 1
        return
    if total is not None and total == s.total:
        c.counts["token_counts_repeated"] += 1
        return
    s.total = total
    c.note_usage(use)
    c.place_usage(s, Counted(line.key, use, {k: v for k, v in line.payload.items() if k != "type"}))


def _run_end(c: Converter, s: State, line: Line, reason: str, aborted: bool) -> None:
    p = line.payload
    c.close_call(s, "incomplete" if aborted else "completed")
    run = str(p.get("turn_id") or s.run or line.key)
    if aborted:
        body = {"kind": "task", "target": s.tail, "pass": False, "label": "codex:turn_aborted",
                "details": {"reason": p.get("reason")}}  # fmt: skip
        c.put(s, f"{line.key}:outcome", "outcome", **body)
        c.counts["turns_aborted"] += 1
    c.put(s, line.key, "run", run_id=run, phase="end", reason=reason, pending=list(s.pending), **{"codex:event": p})  # fmt: skip
    s.run, s.pending, s.prompt = "", (), ""


def _event(c: Converter, s: State, line: Line, dups: Duplicates) -> None:
    p = line.payload
    etype = str(p.get("type") or "")
    if etype == "token_count":
        _token_count(c, s, line)
    elif etype == "task_started":
        c.close_call(s)
        s.run, s.pending, s.prompt = str(p.get("turn_id") or line.key), (), ""
        c.put(s, line.key, "run", run_id=s.run, phase="start", source="input", **{"codex:event": p})
        c.counts["runs"] += 1
    elif etype == "task_complete":
        _run_end(c, s, line, "done", aborted=False)
    elif etype == "turn_aborted":
        reason = "interrupted" if p.get("reason") in (None, "interrupted") else "aborted"
        _run_end(c, s, line, reason, aborted=True)
    elif etype == "user_message":
        c.close_call(s)
        c.settle(s)
        item = text_message("user", event_message(p), p.get("images"))
        s.prompt = c.put(s, line.key, "item", item=item, **{"codex:from_event": True})
        c.counts["prompts_from_events"] += 1
    elif etype == "agent_message":
        item = text_message("assistant", event_message(p))
        if isinstance(p.get("phase"), str):
            item["phase"] = p["phase"]
        c.output(s, line, item, **{"codex:from_event": True})
    elif etype == "agent_reasoning":
        c.output(s, line, reasoning_item(str(p.get("text") or "")), **{"codex:from_event": True})
    elif etype == "thread_name_updated" and isinstance(p.get("thread_name"), str):
        c.put(s, line.key, "info", name=p["thread_name"], **{"codex:event": p})
    else:
        if etype == "thread_rolled_back":
            c.close_call(s)
        c.put(s, line.key, f"codex:{etype or 'event'}", payload=p)


def event_message(p: JSON) -> str:
    return str(p.get("message") or "")


def _record(c: Converter, s: State, line: Line, dups: Duplicates) -> None:
    """Newer record types kept verbatim (``inter_agent_communication``, ``world_state``...)."""
    c.put(s, line.key, f"codex:{line.type}", payload=line.payload)


HANDLERS: dict[str, Callable[[Converter, State, Line, Duplicates], None]] = {
    "turn_context": _turn_context,
    "response_item": _response_item,
    "event_msg": _event,
    "compacted": _compacted,
    **{t: _record for t in ("inter_agent_communication", "inter_agent_communication_metadata",
                           "token_usage_record", "world_state", "retained_context",
                           "security_risk_score", "realtime_item")},
}  # fmt: skip


def convert(tree: Tree, dups: dict[str, Duplicates], draft: SessionDraft) -> Converter:
    """The tree's entries, in the order its lines were written, into ``draft``."""
    c = Converter(tree, draft)
    placed = tree.placed
    forks = {pl.parent for i, pl in enumerate(placed) if i and pl.parent != placed[i - 1].line.key}
    saved: dict[str | None, State] = {None: State()}
    s = State()
    _prime(s, tree)
    saved[None] = replace(s)
    prev: str | None = None
    root = tree.root.lines[0].key
    ends: dict[str, str | None] = {}
    for pl in placed:
        if pl.parent != prev:
            _end_path(c, s, ends, prev)
            s = replace(saved.get(pl.parent) or saved[None])
        key = pl.line.key
        c.line(s, pl.line, dups[pl.rollout.rollout], is_root=key == root)
        for child, call in tree.links.get(key, ()):
            body = {"rel": "subsession", "session": child, **({"call_id": call} if call else {})}
            c.put(s, f"{key}:link:{child}", "link", **body)
        if key in forks:
            saved[key] = replace(s)
        ends[key] = s.tail
        prev = key
    _end_path(c, s, ends, prev)
    c.current = ends.get(tree.current) or ""
    return c


def _end_path(c: Converter, s: State, ends: dict[str, str | None], last: str | None) -> None:
    """A path's last call, when the file ends before anything closes it (0.47 writes its
    usage before its items, so nothing follows a final answer)."""
    if s.call or s.held is not None:
        c.close_call(s)
        if last is not None:
            ends[last] = s.tail


def _prime(s: State, tree: Tree) -> None:
    """A child's state after the parent's prefix it replays (left out): the usage total and
    model it continues from, so nothing of the parent is counted again."""
    for line in tree.replayed:
        p = line.payload if isinstance(line.payload, dict) else {}
        if line.type == "turn_context" and isinstance(p.get("model"), str):
            s.model = p["model"]
        elif line.kind == "event_msg/token_count" and isinstance(p.get("info"), dict):
            s.total = p["info"].get("total_token_usage")


__all__ = ["Converter", "convert", "is_context"]
