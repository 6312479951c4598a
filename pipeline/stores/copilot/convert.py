"""A Copilot CLI events file as Agent Session Format entries (specs/copilot-cli.md §2.3, §3).

Requests are rebuilt from the events in file order, as the CLI's replay does: a
``user.message`` is its ``transformedContent`` (what was sent) with its images; one model
call is one ``assistant.message`` (1.0.78+ splits a call into chunks of one ``apiCallId``:
merged) with its reasoning, text and tool requests, then a ``response`` with the call's
``outputTokens`` (input tokens are on disk nowhere); the first ``tool.execution_complete``
of a model's call is its output (``result.content``, else the error message).  The user's
own shell commands, a second complete, turns, notices and every other event are
``copilot:<type>`` records, never messages.  After an ``abort`` or a resume, a call that
never completed gets the output the CLI sends in its place before the next prompt.
Subagent events (``agentId``, or ``parentToolCallId`` before 1.0.32) are sessions of their
own (``Stream``), whose first message is the ``task`` call's prompt.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from trajset.schemas.entries import TOOL_FAILED
from trajset.schemas.openresponses import text_message

from ..draft import SessionDraft
from .calls import call_id, continues, items, task_prompt, typed, without
from .legacy import chat_messages

JSON = Any
HARNESS = "copilot-cli"
#: what the CLI sends for a call an abort or a restart left without a result (``@1.0.10``)
INTERRUPTED = "The execution of this tool, or a previous tool was interrupted."
#: events that are the session's own and never a subagent's
FRAMING = ("subagent.started", "subagent.completed", "subagent.failed")


@dataclass
class Stream:
    """One agent's entries (the main agent's, or a subagent's): the draft, the last entry,
    the calls asked and not yet answered, a model call's chunks not yet closed."""

    draft: SessionDraft
    cursor: str = ""
    model: str = ""
    open: dict[str, str] = field(default_factory=dict)  # call id -> tool name
    answered: set[str] = field(default_factory=set)
    chunks: list[tuple[str, dict[str, JSON], JSON]] = field(default_factory=list)  # (id, data, ts)
    interrupted: bool = False
    linked: bool = False

    def add(self, kind: str, eid: str, ts: JSON = None, /, **body: JSON) -> str:
        self.cursor = self.draft.add(kind, eid, self.cursor or None, ts, **body)
        return self.cursor


class Converter:
    """The sessions of one events file: the main agent's and each subagent's (``streams``)."""

    def __init__(self, sid: str, source: str, version: str, start: str) -> None:
        self.sid, self.source, self.version, self.begun = sid, source, version, start
        self.main = Stream(SessionDraft(sid, source, HARNESS, HARNESS, version, ts=start))
        self.agents: dict[str, Stream] = {}
        self.tasks: dict[str, str] = {}  # task call id -> its prompt
        self.assets: dict[str, tuple[str, str]] = {}  # asset id -> (mime type, base64)
        self.counts: Counter[str] = Counter()

    # ------------------------------------------------------------------ dispatch

    def event(self, line: int, e: dict[str, JSON]) -> None:
        kind, data, eid = e["type"], e["data"], str(e.get("id") or f"line{line}")
        key = e.get("agentId") or data.get("parentToolCallId")
        s = (
            self.main
            if kind in FRAMING or not isinstance(key, str) or not key
            else self.agent(key, e)
        )
        if not s.draft.is_time(ts := e.get("timestamp"), line, self.source):
            ts = None
        if kind != "assistant.message" or not continues(s.chunks, data):
            self.close_call(s)
        if not s.cursor and kind != "session.start":  # the start line is gone (cut, damaged)
            self.root(s, f"{eid}:config", ts, {})
        handler = _HANDLERS.get(kind)
        if handler is not None:
            handler(self, s, eid, ts, data)
        else:
            self.record(s, kind, eid, ts, data)

    def agent(self, key: str, e: dict[str, JSON]) -> Stream:
        """The subagent's stream, begun with the task's prompt as its first message."""
        if key not in self.agents:
            sid = f"{self.sid}:{key}"
            s = Stream(
                SessionDraft(sid, self.source, HARNESS, HARNESS, self.version, ts=self.begun)
            )
            s.draft.members |= {"parent_session": self.sid, "spawned_by": key}
            self.agents[key] = s
            self.root(s, f"{key}:config", e.get("timestamp"), {})
            if prompt := self.tasks.get(key):
                item = {
                    "type": "message",
                    "role": "user",
                    "content": [{"type": "input_text", "text": prompt}],
                }
                s.add(
                    "item",
                    f"{key}:prompt",
                    e.get("timestamp"),
                    item=item,
                    **{"copilot:task_prompt": True},
                )
        return self.agents[key]

    def root(self, s: Stream, eid: str, ts: JSON, data: dict[str, JSON]) -> None:
        model = data.get("selectedModel")
        s.model = model if isinstance(model, str) else s.model
        s.add("config", eid, ts, **({"model": s.model} if s.model else {}))

    def record(self, s: Stream, kind: str, eid: str, ts: JSON, data: JSON) -> None:
        s.add(f"copilot:{kind}", eid, ts, record=data)

    # ------------------------------------------------------------------ events

    def start(self, s: Stream, eid: str, ts: JSON, data: dict[str, JSON]) -> None:
        if s.cursor:  # a second start (a file joined to another): a record
            self.record(s, "session.start", eid, ts, data)
        else:
            self.root(s, eid, ts, data)

    def model_change(self, s: Stream, eid: str, ts: JSON, data: dict[str, JSON]) -> None:
        body: dict[str, JSON] = {}
        if isinstance(data.get("newModel"), str):
            s.model = body["model"] = data["newModel"]
        if isinstance(data.get("reasoningEffort"), str):
            body["reasoning"] = {"effort": data["reasoningEffort"]}
        s.add("config", eid, ts, **body, **{"copilot:record": data})

    def system(self, s: Stream, eid: str, ts: JSON, data: dict[str, JSON]) -> None:
        content = typed(data.get("content"), str, "")
        if data.get("role") == "developer":
            s.add("item", eid, ts, item=text_message("developer", content))
        else:  # each request builds the system prompt afresh: it is the settings'
            s.add(
                "config",
                eid,
                ts,
                instructions=content,
                **{"copilot:record": without(data, "content")},
            )

    def user(self, s: Stream, eid: str, ts: JSON, data: dict[str, JSON]) -> None:
        self.interrupt(s, eid, ts)
        sent = data.get("transformedContent")
        text = sent if isinstance(sent, str) else data.get("content")
        parts: list[JSON] = [{"type": "input_text", "text": text if isinstance(text, str) else ""}]
        parts += [p for a in data.get("attachments") or [] if (p := self.image(a))]
        injected = bool(data.get("source") or data.get("isAutopilotContinuation"))
        extra: dict[str, JSON] = {"copilot:prompt_kind": "injected" if injected else "typed"}
        if injected:
            extra["visible"] = False
        item = {"type": "message", "role": "user", "content": parts}
        s.add(
            "item",
            eid,
            ts,
            item=item,
            **extra,
            **{"copilot:fields": without(data, "transformedContent")},
        )

    def notification(self, s: Stream, eid: str, ts: JSON, data: dict[str, JSON]) -> None:
        text = typed(data.get("content"), str, "")
        item = {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": text}],
        }
        s.add(
            "item",
            eid,
            ts,
            item=item,
            visible=False,
            **{"copilot:notification": without(data, "content")},
        )

    def image(self, a: JSON) -> dict[str, JSON] | None:
        """An attachment the model saw as an image: a blob inline, or a binary asset's."""
        if not isinstance(a, dict) or a.get("type") != "blob":
            return None
        mime, data = str(a.get("mimeType") or ""), a.get("data")
        if not isinstance(data, str) and a.get("assetId") in self.assets:
            mime, data = self.assets[a["assetId"]]
        if not isinstance(data, str) or not mime.startswith("image/"):
            return None
        return {"type": "input_image", "image_url": f"data:{mime};base64,{data}", "detail": "auto"}

    def asset(self, s: Stream, eid: str, ts: JSON, data: dict[str, JSON]) -> None:
        if isinstance(data.get("assetId"), str) and isinstance(data.get("data"), str):
            self.assets[data["assetId"]] = (str(data.get("mimeType") or ""), data["data"])
        self.record(s, "session.binary_asset", eid, ts, without(data, "data"))

    def message(self, s: Stream, eid: str, ts: JSON, data: dict[str, JSON]) -> None:
        s.chunks.append((eid, data, ts))
        count, index = data.get("chunkCount"), data.get("chunkIndex")
        if not isinstance(count, int) or not isinstance(index, int) or index >= count - 1:
            self.close_call(s)

    def close_call(self, s: Stream) -> None:
        """The model call whose chunks were read, as its items and one response."""
        if not s.chunks:
            return
        chunks, s.chunks = s.chunks, []
        rid, head = call_id(chunks), chunks[0][0]
        n = 0
        for _, d, ts in chunks:
            for item, extra in items(d):
                s.add(
                    "item", head if n == 0 else f"{head}:{n}", ts, item=item, response=rid, **extra
                )
                n += 1
            for r in typed(d.get("toolRequests"), list, []):
                if isinstance(r, dict) and isinstance(r.get("toolCallId"), str):
                    s.open[r["toolCallId"]] = str(r.get("name") or "")
                    if r.get("name") == "task":
                        self.tasks[r["toolCallId"]] = task_prompt(r.get("arguments"))
        datas = [d for _, d, _ in chunks]
        model = next((d["model"] for d in datas if isinstance(d.get("model"), str)), s.model)
        body: dict[str, JSON] = {"response_id": rid, "status": "completed"}
        if model:
            body["model"] = model
        tokens = [d["outputTokens"] for d in datas if type(d.get("outputTokens")) is int]
        if tokens and all(0 <= t < 2**63 for t in tokens):
            body["usage"] = {"output_tokens": sum(tokens)}
        body["copilot:messages"] = [
            without(d, "content", "toolRequests", "reasoningText") for d in datas
        ]
        s.add("response", f"{chunks[-1][0]}:response", chunks[-1][2], **body)

    def complete(self, s: Stream, eid: str, ts: JSON, data: dict[str, JSON]) -> None:
        cid = data.get("toolCallId")
        if data.get("isUserRequested") or not isinstance(cid, str) or cid in s.answered:
            self.record(s, "tool.execution_complete", eid, ts, data)
            return
        result, error = data.get("result"), data.get("error")
        ok = data.get("success") is not False
        text = result.get("content") if ok and isinstance(result, dict) else None
        if not ok:
            text = error.get("message") if isinstance(error, dict) else None
            text = text or "Tool execution failed"
        images = result.get("binaryResultsForLlm") if isinstance(result, dict) else None
        parts = (
            [p for b in images if (p := self.image({"type": "blob", **b}))]
            if isinstance(images, list)
            else []
        )
        output: JSON = (
            str(text or "")
            if not parts
            else [{"type": "input_text", "text": str(text or "")}, *parts]
        )
        extra: dict[str, JSON] = {"copilot:fields": without(data, "result")}
        if not ok:
            extra[TOOL_FAILED] = True
        if isinstance(result, dict) and result.get("detailedContent") not in (None, text):
            extra["copilot:detailedContent"] = result["detailedContent"]
        item = {"type": "function_call_output", "call_id": cid, "output": output}
        s.add("item", eid, ts, item=item, **extra)
        s.answered.add(cid)
        s.open.pop(cid, None)
        self.link(s, cid, ts)

    def link(self, s: Stream, cid: str, ts: JSON) -> None:
        """A link to the subagent the call started, after the call's output."""
        child = self.agents.get(cid)
        if child is not None and not child.linked:
            child.linked = True
            s.add("link", f"{cid}:link", ts, rel="subsession", session=child.draft.id, call_id=cid)

    def interrupt(self, s: Stream, eid: str, ts: JSON) -> None:
        """After an abort or a resume, the CLI's output for each call left without one."""
        if not s.interrupted:
            return
        s.interrupted = False
        for cid in list(s.open):
            item = {"type": "function_call_output", "call_id": cid, "output": INTERRUPTED}
            s.add(
                "item",
                f"{eid}:interrupted:{cid}",
                ts,
                item=item,
                **{TOOL_FAILED: True, "copilot:synthetic": True},
            )
            s.answered.add(cid)
        s.open.clear()

    def abort(self, s: Stream, eid: str, ts: JSON, data: dict[str, JSON]) -> None:
        self.record(s, "abort", eid, ts, data)
        s.interrupted = True

    def resume(self, s: Stream, eid: str, ts: JSON, data: dict[str, JSON]) -> None:
        self.record(s, "session.resume", eid, ts, data)
        s.interrupted = True

    def compaction(self, s: Stream, eid: str, ts: JSON, data: dict[str, JSON]) -> None:
        if data.get("success") is not True or not isinstance(data.get("summaryContent"), str):
            self.record(s, "session.compaction_complete", eid, ts, data)
            return
        summary = {"type": "message", "role": "user",
                   "content": [{"type": "input_text", "text": data["summaryContent"]}]}  # fmt: skip
        body: dict[str, JSON] = {"first_kept": _root(s), "summary": summary,
                                 "config": {"model": s.model} if s.model else {}}  # fmt: skip
        if isinstance(data.get("preCompactionTokens"), int) and data["preCompactionTokens"] >= 0:
            body["tokens_before"] = data["preCompactionTokens"]
        s.add("compaction", eid, ts, **body, **{"copilot:record": without(data, "summaryContent")})

    def task_complete(self, s: Stream, eid: str, ts: JSON, data: dict[str, JSON]) -> None:
        self.record(s, "session.task_complete", eid, ts, data)
        s.add("outcome", f"{eid}:outcome", ts, kind="copilot:task_complete", target=s.cursor,
              label="copilot:task_complete", details=data)  # fmt: skip

    def legacy(self, s: Stream, eid: str, ts: JSON, data: dict[str, JSON]) -> None:
        history = typed(data.get("legacySession"), dict, {})
        self.record(s, "session.import_legacy", eid, ts, without(data, "legacySession"))
        chat_messages(s, history.get("chatMessages"), eid, self.counts)

    def sessions(self) -> list[SessionDraft]:
        """The main session and each subagent's; a subagent no output named is linked last."""
        self.close_call(self.main)
        for cid, child in self.agents.items():
            self.close_call(child)
            self.link(self.main, cid, None)
        self.main.draft.counts.update(self.counts)
        return [self.main.draft, *(a.draft for a in self.agents.values())]


def _root(s: Stream) -> str:
    return s.draft.entries[0]["id"] if s.draft.entries else "config"


_HANDLERS = {
    "session.start": Converter.start,
    "session.model_change": Converter.model_change,
    "system.message": Converter.system,
    "user.message": Converter.user,
    "system.notification": Converter.notification,
    "session.binary_asset": Converter.asset,
    "assistant.message": Converter.message,
    "tool.execution_complete": Converter.complete,
    "abort": Converter.abort,
    "session.resume": Converter.resume,
    "session.compaction_complete": Converter.compaction,
    "session.task_complete": Converter.task_complete,
    "session.import_legacy": Converter.legacy,
}
