"""A replayed Gemini CLI chat as Agent Session Format entries (specs/gemini-cli.md §3).

A ``user`` record is a user message (its ``inlineData`` parts images or files);
context records (the environment message, slash commands, hooks, "Please
continue") are hidden context, never prompts.  A ``gemini`` record is a model
call: one reasoning item for its thought summaries, its visible text, a
function call per tool call, a ``response`` entry with its usage (counted once
per id however often it was written), then each call's output; calls that later
model calls appended to the record follow as model calls of their own
(``calls``), with no usage (the CLI gave theirs to no record).  A tool-response
``user`` record whose calls already have outputs is kept as
``gemini:tool_response_record``; one that holds a function response rendered as text
(``[Function Response: <tool>]…``) is that tool's output.  ``info``/``warning``/``error`` records are
``gemini:<type>`` entries (an error is also an outcome that does not pass);
rewinds, checkpoints and replacements are ``gemini:`` entries on the path, a
compaction a compaction entry whose window keeps the whole earlier history.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from trajset.schemas.entries import TOOL_FAILED
from trajset.schemas.openresponses import text_message
from trajset.schemas.session import Issue

from .. import numbers
from ..draft import SessionDraft
from ..jsonl import json_kind
from ..numbers import counts
from .calls import call_time, model_calls
from .parts import response_failed, response_text, user_parts
from .replay import (
    Message,
    Node,
    Replay,
    is_context,
    is_tool_response,
    rendered_response,
    text_of,
)

JSON = Any
ROOT = "config"


#: members of a message record of one type: one of another is left out, with a row
TYPED: dict[str, type] = {"thoughts": list, "toolCalls": list, "tokens": dict}


class Converter:
    """The entries of one replayed chat; ``tail`` maps a node to its last entry."""

    def __init__(self, replay: Replay, children: dict[str, str], draft: SessionDraft) -> None:
        self.replay = replay
        self.draft = draft
        self.children = children  # agentId -> child session id present in the unit
        self.tail: dict[str, str] = {}
        self.counts: Counter[str] = Counter()
        self.model = ""
        #: call id -> the output text its call record gave (the record's result)
        self.answered: dict[str, str] = {
            c: _result_text(x.get("result"))
            for m in replay.messages.values()
            for c, x in m.calls.items()
            if x.get("result") is not None
        }

    def stamp(self, record: JSON) -> None:
        """Entries from now on take ``record``'s time, when it has one."""
        self.draft.stamp(record.get("timestamp") if isinstance(record, dict) else None)

    def node(self, n: Node) -> None:
        parent = self.tail.get(n.parent, ROOT) if n.parent else ROOT
        if n.message is not None:
            last = self.message(n.message, parent)
        elif n.kind == "compaction":
            last = self.compaction(n, parent)
        elif n.kind == "summary":
            last = self.draft.add("info", n.key, parent, name=n.body["name"])
        else:
            last = self.draft.add(f"gemini:{n.kind}", n.key, parent, **n.body)
        self.tail[n.key] = last

    def message(self, m: Message, parent: str) -> str:
        rec = m.record
        self.stamp(rec)
        kind = rec.get("type")
        for key, typed in TYPED.items():
            if rec.get(key) is not None and not isinstance(rec[key], typed):
                self.draft.issues.append(Issue("bad_field", m.line, f"message {m.id!r}: {key} "
                                               f"is {json_kind(rec[key])}, not "
                                               f"{json_kind(typed())}; left out"))  # fmt: skip
                m.record = rec = {k: v for k, v in rec.items() if k != key}
        content = rec.get("content")
        for i, part in enumerate(content if isinstance(content, list) else []):
            if isinstance(part, dict) and not isinstance(part.get("text", ""), str):
                self.draft.issues.append(Issue("bad_field", m.line, f"message {m.id!r}: "
                                               f"content[{i}].text is {json_kind(part['text'])}, "
                                               "not a string; left out"))  # fmt: skip
        if content is not None and not isinstance(content, str | list):
            self.draft.issues.append(Issue("bad_field", m.line, f"message {m.id!r}: content is "
                                           f"{json_kind(content)}, read as its text"))  # fmt: skip
            m.record = rec = {**rec, "content": json.dumps(content)}
        if m.copied or m.rolled_back:
            what = "copied" if m.copied else "rolled_back"
            self.counts[f"messages_{what}"] += 1
            return self.draft.add(f"gemini:{what}", m.id, parent, record=rec)
        if kind == "gemini":
            return self.gemini(m, parent)
        if kind == "user" and is_tool_response(rec):
            return self.tool_responses(m, parent)
        if (rendered := rendered_response(rec)) is not None:
            return self.rendered_response(m, parent, *rendered)
        if kind == "user" or (kind == "info" and _parts(rec, "inlineData")):
            return self.user(m, parent)
        last = self.draft.add(f"gemini:{kind or 'record'}", m.id, parent, record=rec)
        if kind == "error":
            body = {"kind": "error", "target": parent, "pass": False, "label": "gemini:error",
                    "details": {"content": text_of(rec.get("content"))}}  # fmt: skip
            last = self.draft.add("outcome", f"{m.id}:outcome", last, **body)
        self.counts[f"records/{kind}"] += 1
        return last

    def user(self, m: Message, parent: str) -> str:
        rec = m.record
        item = {"type": "message", "role": "user", "content": user_parts(rec.get("content"))}
        extra: dict[str, JSON] = {}
        if is_context(rec):
            extra = {"visible": False, "gemini:context": True}
        else:
            self.counts["prompts"] += 1
        if rec.get("displayContent") is not None:
            extra["gemini:displayContent"] = rec["displayContent"]
        return self.draft.add("item", m.id, parent, item=item, **extra)

    def tool_responses(self, m: Message, parent: str) -> str:
        """Outputs a tool-response record gives that no call record gave; the record itself
        as ``gemini:tool_response_record``, a part that repeats its call's output by call id
        only (it is that output, sent back to the model)."""
        cur = parent
        parts: list[JSON] = []
        for i, p in enumerate(m.record.get("content") or []):
            fr = p["functionResponse"]
            cid, text = str(fr.get("id") or ""), response_text(fr)
            if self.answered.get(cid) == text:
                parts.append({"functionResponse": {"id": cid, "repeats_the_output": True}})
                continue
            parts.append(p)
            if cid in self.answered:
                continue
            item = {"type": "function_call_output", "call_id": cid, "output": text}
            extra = {TOOL_FAILED: True} if response_failed(fr) else {}
            cur = self.draft.add("item", f"{m.id}:{i}", cur, item=item, **extra)
            self.answered[cid] = text
        record = {**m.record, "content": parts}
        return self.draft.add("gemini:tool_response_record", m.id, cur, record=record)

    def rendered_response(self, m: Message, parent: str, name: str, output: str) -> str:
        """A tool's output the record holds as text: a tool message (its call, not recorded,
        is named by the record's id), not a prompt."""
        item = {"type": "function_call_output", "call_id": m.id, "output": output}
        self.counts["rendered_function_responses"] += 1
        return self.draft.add("item", m.id, parent, item=item, **{"gemini:tool_name": name})

    def gemini(self, m: Message, parent: str) -> str:
        rec = m.record
        self.model = str(rec.get("model") or self.model)
        cur = parent
        summary = [
            {"type": "summary_text", "text": _thought(t)}
            for t in rec.get("thoughts") or []
            if isinstance(t, dict)
        ]
        if summary:
            cur = self.draft.add(
                "item",
                f"{m.id}:thoughts",
                cur,
                item={"type": "reasoning", "summary": summary},
                response=m.id,
            )
        for i, p in enumerate(_parts(rec, "thought")):
            item = {
                "type": "reasoning",
                "summary": [{"type": "summary_text", "text": str(p.get("text") or "")}],
            }
            extra = (
                {"gemini:thoughtSignature": p["thoughtSignature"]}
                if p.get("thoughtSignature")
                else {}
            )
            cur = self.draft.add(
                "item", f"{m.id}:thought{i}", cur, item=item, response=m.id, **extra
            )
        text = text_of(rec.get("content"))
        if text:
            cur = self.draft.add(
                "item", m.id, cur, item=text_message("assistant", text), response=m.id
            )
        calls = dict(m.calls)
        for p in _parts(rec, "functionCall"):  # calls only its parts name (a normalised copy)
            fc = p["functionCall"]
            if isinstance(fc, dict) and isinstance(fc.get("id"), str) and fc["id"] not in calls:
                calls[fc["id"]] = {"id": fc["id"], "name": fc.get("name"), "args": fc.get("args")}
        for n, group in enumerate(model_calls(calls) or [[]]):
            # the record's own model call first; then each call appended to it (``calls``)
            rid, ts = (m.id, None) if n == 0 else (f"{m.id}:{n}", call_time(group[0]))
            for cid in group:
                call = calls[cid]
                item = {"type": "function_call", "call_id": cid, "name": str(call.get("name") or ""),
                        "arguments": json.dumps(call.get("args") if call.get("args") is not None else {}, ensure_ascii=False)}  # fmt: skip
                cur = self.draft.add("item", f"{m.id}:call:{cid}", cur, ts, item=item, response=rid)
                self.counts["tool_calls"] += 1
            if n == 0:
                cur = self.draft.add("response", f"{m.id}:response", cur, **self.response(m))
            else:
                body = {"response_id": rid, "status": "completed", **self.model_of(m)}
                cur = self.draft.add("response", f"{m.id}:response:{n}", cur, ts, **body)
                self.counts["responses_appended_to_a_record"] += 1
            for cid in group:
                cur = self.output(m, cid, calls[cid], cur)
        return cur

    def model_of(self, m: Message) -> dict[str, JSON]:
        return {"model": str(m.record["model"])} if m.record.get("model") else {}

    def response(self, m: Message) -> dict[str, JSON]:
        rec = m.record
        body: dict[str, JSON] = {"response_id": m.id, "status": "completed"}
        if rec.get("model"):
            body["model"] = str(rec["model"])
        tokens = rec.get("tokens")
        got = self.tokens(tokens, m) if isinstance(tokens, dict) else None
        if got is not None and any(got[k] for k in ("input", "output", "thoughts", "tool")):
            inp, out, thoughts, cached = got["input"], got["output"], got["thoughts"], got["cached"]
            body["usage"] = numbers.usage(inp, out + thoughts, cached, thoughts)
            if got["tool"]:
                body["gemini:toolUsePromptTokens"] = got["tool"]
            for k, name in (("input", "input_tokens"), ("output", "output_tokens"),
                            ("cached", "cached_tokens"), ("thoughts", "reasoning_tokens")):  # fmt: skip
                self.counts[f"usage/{name}"] += got[k]
        elif tokens is not None:
            self.counts["responses_with_unknown_usage"] += 1
        self.counts["responses"] += 1
        if m.copies > 1:
            body["gemini:copies"] = m.copies
        return body

    def tokens(self, tokens: dict[str, JSON], m: Message) -> dict[str, int] | None:
        """A record's token counts by key (a missing one 0); None when one is out of range
        (noted with the record's file and line)."""
        keys = ("input", "output", "thoughts", "cached", "tool")
        got = counts(self.draft.notes, tokens, keys, "tokens", self.draft.source, m.line or None)
        return None if got is None else dict(zip(keys, got, strict=True))

    def output(self, m: Message, cid: str, call: dict[str, JSON], parent: str) -> str:
        result = call.get("result")
        if result is None and call.get("status") is None:
            return parent  # a call only a part names: its output comes in a response record
        responses = [
            p["functionResponse"]
            for p in result or []
            if isinstance(p, dict) and isinstance(p.get("functionResponse"), dict)
        ]
        text = "\n".join(response_text(fr) for fr in responses)
        images = [p for p in result or [] if isinstance(p, dict) and "inlineData" in p]
        output: JSON = (
            [{"type": "input_text", "text": text}, *user_parts(images)] if images else text
        )
        extra: dict[str, JSON] = {"gemini:status": call.get("status")}
        if call.get("status") == "error" or any(response_failed(fr) for fr in responses):
            extra[TOOL_FAILED] = True
        for k in ("resultDisplay", "displayName", "description", "agentId"):
            shown = call.get(k)
            if shown is not None and not (
                k == "resultDisplay" and isinstance(shown, str) and shown.strip() in text
            ):
                extra[f"gemini:{k}"] = shown  # (a display that repeats the output is that output)
        if cid in m.rewrites:
            extra["gemini:rewrites"] = m.rewrites[cid]
        item = {"type": "function_call_output", "call_id": cid, "output": output}
        cur = self.draft.add("item", f"{m.id}:out:{cid}", parent, item=item, **extra)
        child = self.children.get(str(call.get("agentId") or ""))
        if child:
            cur = self.draft.add(
                "link", f"{m.id}:link:{child}", cur, rel="subsession", session=child, call_id=cid
            )
            self.counts["children"] += 1
        return cur

    def compaction(self, n: Node, parent: str) -> str:
        summary = n.body["summary"]
        self.stamp(summary)
        item = {"type": "message", "role": "user", "content": user_parts(summary.get("content"))}
        return self.draft.add("compaction", n.key, parent, first_kept=ROOT, summary=item, config={"model": self.model} if self.model else {}, **{"gemini:summary_id": summary.get("id"), "gemini:dropped": n.body["dropped"]})  # fmt: skip


def _thought(t: dict[str, JSON]) -> str:
    subject, description = str(t.get("subject") or ""), str(t.get("description") or "")
    return f"**{subject}** {description}".strip() if subject else description


def _parts(rec: JSON, key: str) -> list[dict[str, JSON]]:
    content = rec.get("content") if isinstance(rec, dict) else None
    if not isinstance(content, list):
        return []
    return [p for p in content if isinstance(p, dict) and p.get(key)]


def _responses(result: JSON) -> list[dict[str, JSON]]:
    return [
        p["functionResponse"]
        for p in result or []
        if isinstance(p, dict) and isinstance(p.get("functionResponse"), dict)
    ]


def _result_text(result: JSON) -> str:
    """A call record's output: the text of its ``functionResponse`` parts."""
    return "\n".join(
        response_text(fr) for fr in _responses(result if isinstance(result, list) else [])
    )


def convert(replay: Replay, children: dict[str, str], draft: SessionDraft) -> Converter:
    """Every node's entries, into ``draft``, after a root config (its model: the chat's first
    model's)."""
    c = Converter(replay, children, draft)
    first = next(
        (m.record.get("model") for m in replay.messages.values() if m.record.get("model")), None
    )
    c.draft.add("config", ROOT, None, **({"model": str(first)} if first else {}))
    for rec in (n.message.record for n in replay.nodes if n.message is not None):
        c.stamp(rec)
        break
    draft.entries[0]["ts"] = draft.ts
    for n in replay.nodes:
        c.node(n)
    return c
