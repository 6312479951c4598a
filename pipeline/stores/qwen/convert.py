"""One Qwen Code session (its tree) as Agent Session Format entries (specs/qwen-code.md §3, §5, §6).

A typed ``user`` record is a prompt (its parts as sent: ``@file`` expansions, images,
hook context); other ``user`` subtypes (notifications, cron, mid-turn messages) are
user messages in context, not prompts.  An ``assistant`` record is one model call:
its thoughts, its visible text and each function call, then a ``response`` with its
usage, counted once (the ``ui_telemetry`` copies never).  A failed attempt keeps its
usage on a response the model never saw again (``NOT_RESENT``).  A ``tool_result`` is
one output per call.  A ``chat_compression`` is a compaction whose kept window is the
tail Qwen Code kept.  Every other record is a ``qwen:<subtype>`` entry on the path; the
title is an ``info`` entry.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from trajset.schemas.entries import NOT_RESENT, TOOL_FAILED
from trajset.schemas.openresponses import text_message

from ..draft import SessionDraft
from ..gemini.parts import response_failed, response_text, user_parts
from ..numbers import counts, usage
from ..uuid_tree import Record
from .tree import ROOT, Tree, is_prompt, parts, subtype

JSON = Any
#: the members every record carries; the others are kept on its entries
BASE = ("uuid", "parentUuid", "sessionId", "timestamp", "type")
#: members every record carries that say where and by what it ran: kept where they differ
#: from the session's first record (a ``cd``, a new branch, an update while resumed)
PLACE = ("cwd", "gitBranch", "version")
#: the usage members of an assistant record, in the order ``_usage`` reads them
USAGE = ("promptTokenCount", "candidatesTokenCount", "cachedContentTokenCount",
         "thoughtsTokenCount", "totalTokenCount")  # fmt: skip
#: subtypes of ``user`` records that are model-facing input nobody typed
UNTYPED = frozenset({"notification", "cron", "goal_runtime", "realtime_message"})
FAILED_ATTEMPT = {
    "code": "failed_attempt",
    "message": "an empty or partial response Qwen Code retried; it never entered the history",
}


def fields(r: Record, head: dict[str, JSON], *drop: str) -> dict[str, JSON]:
    """The record's own members: not ``drop``, nor those every record carries (the
    ``PLACE`` ones where they are the session's ``head``'s)."""
    return {
        k: v
        for k, v in r.raw.items()
        if k not in BASE and k not in drop and not (k in PLACE and v == head.get(k))
    }


@dataclass
class Emitter:
    """The session's entries in tree order (``draft``): ``tail`` maps a record to the last
    entry made from it, ``head`` to the first."""

    draft: SessionDraft
    tree: Tree
    links: dict[str, tuple[str, str]]
    tail: dict[str, str] = field(default_factory=dict)
    head: dict[str, str] = field(default_factory=dict)
    counts: Counter[str] = field(default_factory=Counter)
    model: str = ""
    base: dict[str, JSON] = field(default_factory=dict)  # the first record: ``fields``

    def record(self, r: Record, parent: str) -> tuple[str, str]:
        """The entries of one record: (first id, last id)."""
        ts = r.raw.get("timestamp")
        if self.draft.is_time(ts, r.line, r.file):
            self.draft.ts = str(ts)
        if r.kind == "user" and parts(r):
            first = last = self.user(r, parent)
        elif r.kind == "assistant":
            first, last = self.assistant(r, parent)
        elif r.kind == "tool_result" and _responses(r):
            first, last = self.tool_result(r, parent)
        elif r.kind == "system" and subtype(r) == "chat_compression":
            first, last = self.compaction(r, parent)
        elif r.kind == "system" and subtype(r) == "custom_title":
            title = (r.raw.get("systemPayload") or {}).get("customTitle")
            body = {"name": title} if isinstance(title, str) else {}
            first = last = self.draft.add(
                "info", r.uuid, parent, **body, **{"qwen:record": fields(r, self.base)}
            )
        else:
            first = last = self.other(r, parent)
        if r.uuid in self.links:
            agent, call_id = self.links[r.uuid]
            body = {"rel": "subsession", "session": agent, "call_id": call_id}
            last = self.draft.add("link", f"{r.uuid}:link", last, **body)
            self.counts["children"] += 1
        return first, last

    def other(self, r: Record, parent: str) -> str:
        kind = subtype(r) if r.kind == "system" and subtype(r) else r.kind or "untyped"
        self.counts[f"records/{kind}"] += 1
        eid = self.draft.add(f"qwen:{kind}", r.uuid, parent, record=fields(r, self.base))
        state = (r.raw.get("systemPayload") or {}).get("state")
        if kind == "turn_result" and state in ("cancelled", "error"):
            body = {"kind": "qwen:turn_result", "target": parent, "pass": False,
                    "label": f"qwen:{state}"}  # fmt: skip
            eid = self.draft.add("outcome", f"{r.uuid}:outcome", eid, **body)
        return eid

    def user(self, r: Record, parent: str) -> str:
        item = {"type": "message", "role": "user", "content": user_parts(parts(r))}
        extra: dict[str, JSON] = {"qwen:fields": fields(r, self.base, "message")}
        if is_prompt(r):
            self.counts["prompts"] += 1
        elif subtype(r) in UNTYPED:  # model-facing input the user did not type
            extra["visible"] = False
        return self.draft.add("item", r.uuid, parent, item=item, **extra)

    def assistant(self, r: Record, parent: str) -> tuple[str, str]:
        self.model = str(r.raw.get("model") or self.model)
        first, cur = "", parent
        for n, (item, extra) in enumerate(_model_items(r, self.counts)):
            eid = r.uuid if n == 0 else f"{r.uuid}:{n}"
            cur = self.draft.add("item", eid, cur, item=item, response=r.uuid, **extra)
            first = first or cur
        body: dict[str, JSON] = {"response_id": r.uuid, "status": "completed"}
        if r.raw.get("model"):
            body["model"] = str(r.raw["model"])
        if (got := self.usage(r)) is not None:
            body["usage"] = got
        if r.uuid in self.tree.failed:
            body |= {"status": "failed", "error": FAILED_ATTEMPT, NOT_RESENT: "failed_attempt"}
            self.counts["failed_attempts"] += 1
        else:
            self.counts["responses"] += 1
        body["qwen:fields"] = fields(r, self.base, "message")
        last = self.draft.add("response", f"{r.uuid}:response", cur, **body)
        return first or last, last

    def usage(self, r: Record) -> dict[str, JSON] | None:
        """The call's usage (``usageMetadata``, or ``tokens`` in the early files):
        ``promptTokenCount`` holds the cached tokens; thoughts are inside
        ``candidatesTokenCount`` on the OpenAI-compatible path, beside it (the total says so)
        on Gemini's."""
        u = r.raw.get("usageMetadata", r.raw.get("tokens"))
        if not isinstance(u, dict) or not u:
            return None
        got = counts(self.draft.notes, u, USAGE, "usageMetadata", r.file, r.line)
        if got is None:
            return None
        prompt, out, cached, thoughts, total = got
        if thoughts and total == prompt + out + thoughts:
            out += thoughts
        return usage(prompt, out, cached, thoughts, total)

    def tool_result(self, r: Record, parent: str) -> tuple[str, str]:
        result = r.raw.get("toolCallResult") or {}
        failed = result.get("status") in ("error", "cancelled")
        first, cur = "", parent
        for n, (fr, images) in enumerate(_responses(r)):
            text = response_text(fr)
            output: JSON = (
                [{"type": "input_text", "text": text}, *user_parts(images)] if images else text
            )
            call_id = str(fr.get("id") or result.get("callId") or f"{r.uuid}:{n}")
            item = {"type": "function_call_output", "call_id": call_id, "output": output}
            extra: dict[str, JSON] = {TOOL_FAILED: True} if failed or response_failed(fr) else {}
            if n == 0:
                extra["qwen:toolCallResult"] = _shown(result, text)
            cur = self.draft.add(
                "item", r.uuid if n == 0 else f"{r.uuid}:{n}", cur, item=item, **extra
            )
            first = first or cur
        return first, cur

    def compaction(self, r: Record, parent: str) -> tuple[str, str]:
        """The checkpoint: its summary, and the window of the path Qwen Code kept after it
        (the tail its ``compressedHistory`` copies; a marker entry when it kept none)."""
        payload = r.raw.get("systemPayload") or {}
        history = [c for c in payload.get("compressedHistory") or [] if isinstance(c, dict)]
        summary = history[0] if history else {}
        ack = history[1] if len(history) > 1 and history[1].get("role") == "model" else None
        kept = history[2:] if ack is not None else history[1:]
        first_kept = self.kept_from(r, kept[0]) if kept else ""
        marker = ""
        if not kept:  # the model saw nothing of the path after the summary
            marker = first_kept = self.draft.add("qwen:compression_point", f"{r.uuid}:kept", parent)
        elif not first_kept:  # a tail that is no part of the path: the whole path, as copied
            first_kept = ROOT
            self.counts["compaction_tail_not_on_path"] += 1
        item = {"type": "message", "role": "user", "content": user_parts(summary.get("parts"))}
        about = {**fields(r, self.base, "systemPayload")}
        about |= {k: v for k, v in payload.items() if k != "compressedHistory"}
        about |= {"kept_contents": len(kept), **({"ack": ack} if ack is not None else {})}
        config = {"model": self.model} if self.model else {}
        self.counts["compactions"] += 1
        last = self.draft.add("compaction", r.uuid, marker or parent, first_kept=first_kept,
                              summary=item, config=config, **{"qwen:compression": about})  # fmt: skip
        return marker or last, last

    def kept_from(self, r: Record, content: dict[str, JSON]) -> str:
        """The first entry of the nearest record above ``r`` whose message is ``content``."""
        want = content.get("parts")
        cur = self.tree.parent.get(r.uuid)
        while cur is not None:
            m = self.tree.chain[cur].raw.get("message")
            if isinstance(m, dict) and m.get("parts") == want and cur in self.head:
                return self.head[cur]
            cur = self.tree.parent.get(cur)
        return ""


Items = list[tuple[dict[str, JSON], dict[str, JSON]]]


def _model_items(r: Record, seen: Counter[str]) -> Items:
    """(item, entry members) of a model response: its thoughts, its visible text (one
    message), each call; any other part as a ``qwen:part`` item."""
    reasoning: Items = []
    text: list[str] = []
    calls: Items = []
    other: Items = []
    for p in parts(r):
        if p.get("thought") is True and isinstance(p.get("text"), str):
            item = {"type": "reasoning", "summary": [{"type": "summary_text", "text": p["text"]}]}
            sign = p.get("thoughtSignature")
            reasoning.append((item, {"qwen:thoughtSignature": sign} if sign else {}))
        elif isinstance(p.get("text"), str):
            text.append(p["text"])
        elif isinstance(p.get("functionCall"), dict):
            fc = p["functionCall"]
            args = fc.get("args") if fc.get("args") is not None else {}
            calls.append(({"type": "function_call", "call_id": str(fc.get("id") or f"{r.uuid}:call{len(calls)}"),
                           "name": str(fc.get("name") or ""), "arguments": json.dumps(args, ensure_ascii=False)}, {}))  # fmt: skip
            seen["tool_calls"] += 1
        else:
            other.append(({"type": "qwen:part", "part": p}, {}))
    message: Items = [(text_message("assistant", "".join(text)), {})] if "".join(text) else []
    return [*reasoning, *message, *calls, *other]


def _responses(r: Record) -> list[tuple[dict[str, JSON], list[dict[str, JSON]]]]:
    """Each ``functionResponse`` of a tool result, with the images that follow it."""
    out: list[tuple[dict[str, JSON], list[dict[str, JSON]]]] = []
    for p in parts(r):
        if isinstance(p.get("functionResponse"), dict):
            out.append((p["functionResponse"], []))
        elif out and isinstance(p.get("inlineData"), dict):
            out[-1][1].append(p)
    return out


def _shown(result: dict[str, JSON], output: str) -> dict[str, JSON]:
    """``toolCallResult`` without a display that repeats the output (or is empty)."""
    shown = result.get("resultDisplay")
    if shown in ("", None) or (isinstance(shown, str) and shown.strip() in output):
        return {k: v for k, v in result.items() if k != "resultDisplay"}
    return result


def tree_entries(
    tree: Tree, links: dict[str, tuple[str, str]], first_ts: str, draft: SessionDraft
) -> Emitter:
    """The session's entries, into ``draft``: a config root (the first model's), then the
    tree; ``links`` adds a subsession link after the tool result that names an agent."""
    e = Emitter(draft, tree, links)
    e.base = tree.records[0].raw if tree.records else {}
    e.model = next(
        (str(r.raw["model"]) for r in tree.records if r.kind == "assistant" and r.raw.get("model")),
        "",
    )
    draft.add("config", ROOT, None, first_ts, **({"model": e.model} if e.model else {}))
    for r in tree.records:
        p = tree.parent.get(r.uuid)
        parent = e.tail.get(p, ROOT) if p else ROOT
        e.head[r.uuid], e.tail[r.uuid] = e.record(r, parent)
    e.counts["forks"] += len(tree.forks)
    for kind, n in tree.artifacts.items():
        e.counts[f"artifact/{kind}"] += n
    return e
