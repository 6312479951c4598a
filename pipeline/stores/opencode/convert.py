"""An OpenCode tree as Agent Session Format entries (specs/opencode.md, "Mapping").

A synthetic ``config`` root holds the first prompt's model (``providerID/modelID``)
and agent; a later change is a ``config`` entry before the prompt that makes it.
A user message is one user item of its typed text and files (its synthetic parts
a hidden item after it; agent mentions, subtasks and ignored text kept as
``opencode:parts``).  An assistant message is, per LLM step, its reasoning, text
and tool entries (``tools.py``) and one ``response`` per step-finish with that
step's usage, so usage is counted once (the message's own tokens only when it
has no step-finish).  A compaction request and its summary are one
``compaction`` entry keeping the whole history as copied context.  An assistant
error is an outcome that never passes; an abort also ends the run ``aborted``.
Messages of all the tree's sessions are written in time order, so ``latest``
prefers the branch written last (``branches.py``, which also makes a pending
revert a fork).
Each message's info is kept as ``opencode:info`` on its first entry.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from typing import Any

from trajset.schemas.entries import RECORDED_COST
from trajset.schemas.openresponses import text_message
from trajset.schemas.session import Issue
from trajset.schemas.timestamps import MAX_MS, ms_to_rfc3339

from ..draft import SessionDraft
from ..jsonl import json_kind
from ..numbers import cost
from .forks import Segment, Tree
from .records import Message, as_ms, obj
from .tools import (
    attachment,
    call_item,
    child_of,
    output_of,
    rejection,
    tokens_total,
    usage,
)  # fmt: skip

JSON = Any
ROOT = "config"
ABORTED = "MessageAbortedError"


@dataclass
class Revert:
    """A session's pending ``/undo``: its anchor message and part, and where the path stood
    before the anchor (``before``) and before the part (``fork_point``)."""

    body: JSON = None
    anchor: str = ""
    part: str = ""
    before: str | None = None
    fork_point: str | None = None


@dataclass
class State:
    """Where a segment's path stands: its last entry, model and agent, last step's tokens."""

    tail: str = ROOT
    model: str = ""
    agent: str = ""
    tokens: int = 0


def model_of(info: dict[str, JSON]) -> str:
    m = obj(info.get("model"))
    provider = info.get("providerID") or m.get("providerID")
    model = info.get("modelID") or m.get("modelID")
    return f"{provider}/{model}" if provider and model else str(model or "")


def ts_of(ms: int) -> str:
    try:
        return ms_to_rfc3339(ms) if ms > 0 else "1970-01-01T00:00:00Z"
    except (OverflowError, OSError, ValueError):
        return "1970-01-01T00:00:00Z"


def _start(part: dict[str, JSON]) -> int:
    t = part.get("time")
    if not isinstance(t, dict) and isinstance(part.get("state"), dict):
        t = part["state"].get("time")
    return as_ms(t.get("start")) if isinstance(t, dict) else 0


class Converter:
    """The entries of one tree; ``tail_of`` maps a message id to its last entry."""

    def __init__(
        self, tree: Tree, children: dict[str, dict[str, tuple[int, str]]], draft: SessionDraft
    ) -> None:
        self.tree = tree
        self.children = children  # session id -> its child sessions (id -> (created, parent))
        self.draft = draft
        self.counts: Counter[str] = Counter()
        self.tail_of: dict[str, str] = {}
        self.state_of: dict[str, State] = {}  # message id -> the path's state after it
        self.spawned: dict[str, str] = {}  # child session id -> the call that ran it
        self.info: dict[str, JSON] | None = None
        self.ms = 0
        self.beyond: set[int] = set()  # the times beyond year 9999 noted so far
        self.summaries: dict[str, Message] = {}  # compaction request id -> its summary
        self.requests: dict[str, Message] = {}  # summary id -> its request
        #: the open step's tool calls (part, call item), whose results follow its response
        self.results: list[tuple[dict[str, JSON], dict[str, JSON]]] = []
        for seg in tree.segments:
            own = {m.id: m for m in seg.session.messages[seg.start :]}
            for m in own.values():
                req = own.get(str(m.info.get("parentID") or ""))
                if m.info.get("summary") is True and req is not None and _is_request(req):
                    self.summaries[req.id], self.requests[m.id] = m, req

    def ts(self, eid: str) -> str:
        """The time of entry ``eid``: ``self.ms``; one beyond year 9999 is noted (once)."""
        if self.ms > MAX_MS and self.ms not in self.beyond:
            self.beyond.add(self.ms)
            self.draft.note(self.ms, f"time of {eid}", None, "a time in years 1 to 9999 (ms)",
                            f"written as {ts_of(0)} (unknown)")  # fmt: skip
        return ts_of(self.ms)

    def text(self, part: dict[str, JSON]) -> str:
        """A text or reasoning part's text; one of another type is read as its JSON, noted."""
        got = part.get("text")
        if got is None or isinstance(got, str):
            return got or ""
        self.draft.issues.append(Issue("bad_field", None, f"part {part.get('id')}: text is "
                                       f"{json_kind(got)}, read as its JSON text"))  # fmt: skip
        return json.dumps(got)

    def put(self, entry_type: str, eid: str, parent: str | None, **body: JSON) -> str:
        """An entry at the message's time; the first after a message's info carries it."""
        if self.info is not None:
            body["opencode:info"], self.info = self.info, None
        return self.draft.add(entry_type, eid, parent, self.ts(eid), **body)

    def root(self) -> State:
        """The config root (and the title as an ``info`` entry); the root path's state."""
        first = next((m for m in self.tree.root.messages if m.role == "user"), None)
        info = first.info if first else {}
        self.ms = first.created if first else self.tree.root.created
        body: dict[str, JSON] = {}
        if model_of(info):
            body["model"] = model_of(info)
        if info.get("agent"):
            body["opencode:agent"] = info["agent"]
        tail = self.put("config", ROOT, None, **body)
        title = self.tree.root.info.get("title")
        if isinstance(title, str) and title:
            tail = self.put("info", "info", ROOT, name=title)
        return State(tail, body.get("model", ""), str(body.get("opencode:agent", "")))

    def message(self, seg: Segment, st: State, m: Message, revert: Revert) -> None:
        self.ms = m.created
        if revert.anchor == m.id:
            revert.before = st.tail
        if m.id in self.summaries:
            pass  # the request is written with its summary, as one compaction entry
        elif m.role == "user":
            self.user(st, m)
        elif m.role == "assistant" and (m.id in self.requests or m.info.get("summary") is True):
            self.compaction(st, m)
        elif m.role == "assistant":
            self.assistant(seg, st, m, revert)
        else:
            self.counts[f"extensions/message/{m.role or 'untyped'}"] += 1
            role = m.info.get("role")
            if role is not None and not isinstance(role, str):
                self.draft.issues.append(Issue("bad_field", None, f"message {m.id}: role is "
                                               f"{json_kind(role)}; kept as an extension entry, "
                                               "in no step"))  # fmt: skip
            self.info = m.info
            st.tail = self.put(f"opencode:message/{m.role or 'untyped'}", m.id, st.tail, parts=m.parts)  # fmt: skip
        self.tail_of[m.id] = st.tail
        self.state_of[m.id] = State(st.tail, st.model, st.agent, st.tokens)

    def user(self, st: State, m: Message) -> None:
        model, agent = model_of(m.info), str(m.info.get("agent") or "")
        if (model or st.model, agent or st.agent) != (st.model, st.agent):
            body: dict[str, JSON] = {"model": model} if model and model != st.model else {}
            if agent and agent != st.agent:
                body["opencode:agent"] = agent
            st.tail = self.put("config", f"{m.id}:config", st.tail, **body)
            st.model, st.agent = model or st.model, agent or st.agent
        typed: list[JSON] = []
        hidden: list[JSON] = []
        other: list[JSON] = []
        for p in m.parts:
            kind = p.get("type")
            if kind == "text" and not p.get("ignored"):
                text = {"type": "input_text", "text": self.text(p)}
                (hidden if p.get("synthetic") else typed).append(text)
            elif kind == "file":
                typed.append(attachment(p))
            else:
                other.append(p)
        self.info = m.info
        more = {"opencode:parts": other} if other else {}
        if typed:
            self.counts["prompts"] += 1
            item = {"type": "message", "role": "user", "content": typed}
            st.tail = self.put("item", m.id, st.tail, item=item, **more)
            more = {}
        if hidden:
            item = {"type": "message", "role": "user", "content": hidden}
            st.tail = self.put("item", f"{m.id}:synthetic" if typed else m.id, st.tail, item=item, visible=False, **{"opencode:synthetic": True}, **more)  # fmt: skip
        elif not typed:
            self.counts["extensions/user_message"] += 1
            st.tail = self.put("opencode:user_message", m.id, st.tail, parts=other)

    def compaction(self, st: State, m: Message) -> None:
        """The request (when there is one) and its summary as one compaction entry."""
        text = "".join(self.text(p) for p in m.parts if p.get("type") == "text")
        finish = next((p for p in m.parts if p.get("type") == "step-finish"), None)
        body: dict[str, JSON] = {
            "first_kept": ROOT,
            "summary": text_message("user", text),
            "config": {},
        }
        if st.tokens:
            body["tokens_before"] = st.tokens
        tokens = finish.get("tokens") if finish else m.info.get("tokens")
        u = usage(self.draft.notes, tokens, f"message {m.id} tokens")
        if u is not None:
            body["usage"] = u
        req = self.requests.get(m.id)
        if req is not None:
            body["opencode:request"] = {"id": req.id, "info": req.info, "parts": req.parts}
        body["opencode:parts"] = [p for p in m.parts if p.get("type") != "text"]
        self.counts["compactions"] += 1
        self.info = m.info
        st.tail = self.put("compaction", m.id, st.tail, **body)

    def assistant(self, seg: Segment, st: State, m: Message, revert: Revert) -> None:
        steps: list[list[dict[str, JSON]]] = [[]]
        for p in m.parts:
            if p.get("type") == "step-start" and steps[-1]:
                steps.append([])
            steps[-1].append(p)
        self.info = m.info
        last: dict[str, JSON] | None = None
        for n, step in enumerate(steps):
            finish = next((p for p in step if p.get("type") == "step-finish"), None)
            rid = str(finish["id"]) if finish else f"{m.id}:step{n}"
            start = next((p for p in step if p.get("type") == "step-start"), None)
            wrote = False
            self.results = []  # the step's tool results: after its response (one model call)
            for p in step:
                if revert.anchor == m.id and revert.part == p["id"]:
                    self.answer(seg, st)  # what ran before the undone part is kept, results too
                    revert.fork_point = st.tail
                if p is finish:
                    last = self.response(st, m, rid, p, start)
                    self.answer(seg, st)
                elif p is not start:
                    wrote |= self.part(seg, st, m, p, rid)
            if finish is None and (wrote or (n == len(steps) - 1 and last is None)):
                last = self.response(st, m, rid, None, start)
            self.answer(seg, st)
        error = m.info.get("error")
        if isinstance(error, dict) and last is not None:
            self.failed(st, m, error, last)

    def part(self, seg: Segment, st: State, m: Message, p: dict[str, JSON], rid: str) -> bool:
        """One part of an assistant step; True when it is something the model said or did."""
        self.ms = _start(p) or self.ms
        kind, pid = str(p.get("type") or ""), str(p["id"])
        more = {f"opencode:{k}": p[k] for k in ("time", "metadata", "synthetic") if k in p}
        if kind == "text" and not p.get("ignored"):
            item = text_message("assistant", self.text(p))
            st.tail = self.put("item", pid, st.tail, item=item, response=rid, **more)
        elif kind == "reasoning":
            item = {"type": "reasoning",
                    "summary": [{"type": "summary_text", "text": self.text(p)}]}  # fmt: skip
            st.tail = self.put("item", pid, st.tail, item=item, response=rid, **more)
        elif kind == "tool":
            self.tool(seg, st, p, rid)
        else:
            self.counts[f"extensions/{kind or 'untyped'}"] += 1
            st.tail = self.put(f"opencode:{kind or 'untyped'}", pid, st.tail, part=p)
            return False
        return True

    def tool(self, seg: Segment, st: State, p: dict[str, JSON], rid: str) -> None:
        pid, item = str(p["id"]), call_item(p)
        more = {"opencode:metadata": p["metadata"]} if "metadata" in p else {}
        st.tail = call = self.put("item", pid, st.tail, item=item, response=rid, **more)
        self.counts["tool_calls"] += 1
        reason = rejection(p)
        if reason is not None:
            st.tail = self.put("decision", f"{pid}:decision", st.tail, call_id=item["call_id"], target=call, verdict="reject", by="human", reason=reason)  # fmt: skip
            self.counts["rejections"] += 1
        self.results.append((p, item))

    def answer(self, seg: Segment, st: State) -> None:
        """The results of the step's tool calls, after the step's response: the model made
        its calls in one call, and saw their results in the next."""
        for p, item in self.results:
            pid = str(p["id"])
            output, extra = output_of(p)
            out = {"type": "function_call_output", "call_id": item["call_id"], "output": output}
            st.tail = self.put("item", f"{pid}:output", st.tail, item=out, **extra)
            name = item["name"]
            child = child_of(p, self.children.get(seg.session.id, {})) if name == "task" else ""
            if child:
                self.spawned.setdefault(child, item["call_id"])
                st.tail = self.put("link", f"{pid}:link", st.tail, rel="subsession", session=child, call_id=item["call_id"])  # fmt: skip
        self.results = []

    def response(
        self, st: State, m: Message, rid: str, finish: JSON, start: JSON
    ) -> dict[str, JSON]:
        """The ``response`` of one step: its step-finish's usage, else (no step-finish in the
        whole message) the message's own tokens."""
        body: dict[str, JSON] = {"response_id": rid, "status": "completed"}
        if model_of(m.info):
            body["model"] = model_of(m.info)
        has_finish = any(p.get("type") == "step-finish" for p in m.parts)
        of = finish if finish else None if has_finish else m.info  # the step's, else the message's
        tokens = of.get("tokens") if of else None
        where = f"message {m.id} step {rid} tokens"
        if (u := usage(self.draft.notes, tokens, where)) is not None:
            body["usage"] = u
            st.tokens = tokens_total(self.draft.notes, tokens, u, where)
            spent = of.get("cost") if of else None
            usd = cost(self.draft.notes, spent, f"message {m.id} step {rid} cost", "", None)
            if usd is not None:
                body[RECORDED_COST] = usd
        if finish is None:
            body |= {"status": "incomplete", "incomplete": {"reason": "interrupted"}}
        elif finish.get("reason") == "length":
            body |= {"status": "incomplete", "incomplete": {"reason": "max_output_tokens"}}
        if finish is not None:
            body |= {f"opencode:{k}": finish[k] for k in ("reason", "cost", "tokens", "snapshot")
                     if k in finish}  # fmt: skip
        if isinstance(start, dict) and "snapshot" in start:
            body["opencode:start_snapshot"] = start["snapshot"]
        self.counts["responses"] += 1
        st.tail = self.put("response", rid, st.tail, **body)
        return self.draft.last

    def failed(self, st: State, m: Message, error: dict[str, JSON], last: dict[str, JSON]) -> None:
        """An assistant error: on the message's last response, an outcome that does not pass,
        and for an abort the run's end."""
        name = str(error.get("name") or "error")
        data = obj(error.get("data"))
        last["status"] = "cancelled" if name == ABORTED else "failed"
        last["error"] = {"code": name, "message": str(data.get("message") or name)}
        last.pop("incomplete", None)
        target = st.tail
        st.tail = self.put("outcome", f"{m.id}:outcome", st.tail, kind="custom", target=target, **{"pass": False}, label="opencode:error", details=error)  # fmt: skip
        self.counts[f"errors/{name}"] += 1
        if name == ABORTED:
            pending = [
                str(p.get("callID") or p["id"])
                for p in m.parts
                if p.get("type") == "tool"
                and (p.get("state") or {}).get("status") not in ("completed", "error")
            ]
            run = str(m.info.get("parentID") or m.id)
            st.tail = self.put("run", f"{m.id}:run", st.tail, run_id=run, phase="end", reason="aborted", pending=pending)  # fmt: skip


def _is_request(m: Message) -> bool:
    return m.role == "user" and any(p.get("type") == "compaction" for p in m.parts)
