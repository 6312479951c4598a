"""Pi entries as Agent Session Format entries (specs/pi.md §5).

The mapping is close to one to one (the format's ``branch_summary``, ``label``
and ``first_kept`` come from Pi): a synthetic ``config`` root holds the first
model and thinking level, and every Pi root hangs under it, so a re-edited first
prompt is a fork.  The first entry made from a Pi entry keeps its id (labels,
``first_kept`` and ``from`` resolve); an assistant message becomes one item per
block and a ``response`` with its usage (input = input + cacheRead + cacheWrite,
cached = cacheRead).
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from trajset.schemas.entries import NOT_RESENT, RECORDED_COST, TOOL_FAILED
from trajset.schemas.openresponses import text_message
from trajset.schemas.session import Issue

from .. import numbers
from ..draft import SessionDraft
from ..jsonl import json_kind
from ..numbers import cost, count, counts

JSON = Any
ROOT = "config"
BRANCH_PREFIX = (
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"
)
COMPACT_PREFIX = "The conversation history before this point was compacted into the following summary:\n\n<summary>\n"
STATUS = {
    "stop": "completed",
    "toolUse": "completed",
    "length": "incomplete",
    "aborted": "incomplete",
    "error": "failed",
}


def parts(content: JSON) -> list[dict[str, JSON]]:
    """Input parts of a Pi content (a string, or text and image blocks)."""
    if isinstance(content, str):
        return [{"type": "input_text", "text": content}]
    out = []
    for b in content if isinstance(content, list) else []:
        if not isinstance(b, dict):
            continue
        if b.get("type") == "image":
            out.append({"type": "input_image", "detail": "auto",
                        "image_url": f"data:{b.get('mimeType') or 'image/png'};base64,{b.get('data') or ''}"})  # fmt: skip
        else:
            out.append({"type": "input_text", "text": str(b.get("text") or "")})
    return out


def usage(
    notes: list[Issue], u: JSON, at: tuple[str, int | None], where: str
) -> dict[str, JSON] | None:
    """A Pi ``usage`` (``where`` in the entry at ``at``: file, line) as Open Responses usage;
    None when it is none, or a count in it is out of range (noted in ``notes``)."""
    if not isinstance(u, dict):
        return None
    got = counts(notes, u, ("input", "cacheRead", "cacheWrite", "output"), where, *at)
    if got is None:
        return None
    fresh, read, write, out = got
    return numbers.usage(fresh + read + write, out, read)


class Converter:
    """The entries of one merged tree, in its order; ``tail`` maps a Pi id to its last entry."""

    def __init__(self, entries: list[dict[str, JSON]], draft: SessionDraft) -> None:
        self.pi = entries
        self.draft = draft
        self.tail: dict[str, str] = {}
        self.counts: Counter[str] = Counter()
        self.order = {e["id"]: i for i, e in enumerate(entries)}
        self.by_id = {e["id"]: e for e in entries}
        self.at: tuple[str, int | None] = ("", None)  # the file and line of the entry read
        #: entry -> the calls of the last answer sent that no result has answered yet
        self.pending: dict[str, tuple[str, ...]] = {}

    def entry(self, e: dict[str, JSON]) -> None:
        e = dict(e)
        e.pop("pi:prev", None)
        file = e.pop("pi:file", None)
        self.at = e.pop("pi:at", ("", None))
        kind, eid, ts = str(e.get("type") or ""), e["id"], str(e.get("timestamp") or "")
        parent = self.tail.get(str(e.get("parentId")), ROOT) if e.get("parentId") else ROOT
        extra = {"pi:relinked_from": e["pi:relinked_from"]} if "pi:relinked_from" in e else {}
        handler = HANDLERS.get(kind)
        if handler is None:
            self.counts[f"extensions/{kind or 'untyped'}"] += 1
            last = self.draft.add(f"pi:{kind or 'untyped'}", eid, parent, ts, record=e, **extra)
        else:
            last = handler(self, e, parent, ts, extra)
        self.pending.setdefault(last, self.pending.get(parent, ()))
        self.tail[eid] = last
        if file:
            self.counts[f"entries_from/{file}"] += 1

    def message(self, e: JSON, parent: str, ts: str, extra: JSON) -> str:
        m = e.get("message") if isinstance(e.get("message"), dict) else {}
        content = m.get("content")
        at = e.get("pi:at")
        line = at[1] if isinstance(at, list | tuple) and len(at) == 2 else None
        wrong = [("content", content)] if not isinstance(content, str | list | None) else []
        wrong += [(f"content[{i}].{k}", b[k]) for i, b in enumerate(content if isinstance(content, list) else [])
                  for k in ("text", "thinking") if isinstance(b, dict) and not isinstance(b.get(k) or "", str)]  # fmt: skip
        for where, value in wrong:
            self.draft.issues.append(Issue("bad_field", line, f"message {e.get('id')!r}: {where} "
                                           f"is {json_kind(value)}, read as its text"))  # fmt: skip
        if wrong and wrong[0][0] == "content":
            m = {**m, "content": json.dumps(content)}
        role = m.get("role")
        extra = {**extra, **({"pi:timestamp_ms": m["timestamp"]} if "timestamp" in m else {})}
        sent_as_user = role in ("user", "custom") or (
            role == "bashExecution" and not m.get("excludeFromContext")
        )  # what convertToLlm makes a user message
        if role == "assistant" or sent_as_user:
            parent = self.no_results(e["id"], parent, ts)
        last = self.message_entry(e, m, parent, ts, extra)
        if sent_as_user:
            self.pending[last] = ()
        return last

    def message_entry(self, e: JSON, m: JSON, parent: str, ts: str, extra: JSON) -> str:
        role = m.get("role")
        if role == "assistant":
            return self.assistant(e["id"], m, parent, ts, extra)
        if role == "toolResult":
            item = {
                "type": "function_call_output",
                "call_id": str(m.get("toolCallId") or ""),
                "output": _output(m.get("content")),
            }
            more = {"pi:tool_name": m.get("toolName"), "pi:is_error": m.get("isError")}
            more |= {
                k2: m[k]
                for k, k2 in (("details", "pi:details"), ("usage", "pi:usage"))
                if m.get(k) is not None
            }
            if m.get("isError") is True:
                more[TOOL_FAILED] = True
            last = self.draft.add("item", e["id"], parent, ts, item=item, **extra, **more)
            self.pending[last] = tuple(
                c for c in self.pending.get(parent, ()) if c != item["call_id"]
            )
            return last
        if role == "bashExecution":
            if m.get("excludeFromContext"):
                return self.draft.add("pi:bash_execution", e["id"], parent, ts, record=m, **extra)
            text = f"Ran `{m.get('command')}`\n```\n{m.get('output') or ''}\n```"
            return self.draft.add(
                "item",
                e["id"],
                parent,
                ts,
                item=text_message("user", text),
                **{"pi:bash": m},
                **extra,
            )
        if role == "custom":
            return self.custom_message(e["id"], m, parent, ts, extra)
        if role == "user":
            self.counts["prompts"] += 1
            return self.draft.add(
                "item",
                e["id"],
                parent,
                ts,
                item={"type": "message", "role": "user", "content": parts(m.get("content"))},
                **extra,
            )
        self.counts[f"extensions/message/{role}"] += 1
        return self.draft.add(
            f"pi:message/{role or 'untyped'}", e["id"], parent, ts, record=e, **extra
        )

    def no_results(self, eid: str, parent: str, ts: str) -> str:
        """The results Pi sends for calls a user message or the next answer left unanswered:
        ``No result provided``, an error (``transform-messages.ts``); the new parent."""
        for i, call in enumerate(self.pending.get(parent, ())):
            item = {"type": "function_call_output", "call_id": call, "output": "No result provided"}
            more = {TOOL_FAILED: True, "pi:synthetic_result": True}
            parent = self.draft.add("item", f"{eid}:no_result:{i}", parent, ts, item=item, **more)
            self.pending[parent] = ()
            self.counts["synthetic_results"] += 1
        return parent

    def custom_message(self, eid: str, m: JSON, parent: str, ts: str, extra: JSON) -> str:
        item = {"type": "message", "role": "user", "content": parts(m.get("content"))}
        more: dict[str, JSON] = {"pi:custom_type": m.get("customType")}
        if m.get("display") is False:
            more["visible"] = False
        if m.get("details") is not None:
            more["pi:details"] = m["details"]
        return self.draft.add("item", eid, parent, ts, item=item, **more, **extra)

    def assistant(self, eid: str, m: JSON, parent: str, ts: str, extra: JSON) -> str:
        cur, n = parent, 0

        def piece(item: JSON, **more: JSON) -> None:
            nonlocal cur, n
            cur = self.draft.add("item", eid if n == 0 else f"{eid}:{n}", cur, ts, item=item, response=eid, **more, **(extra if n == 0 else {}))  # fmt: skip
            n += 1

        for b in m.get("content") if isinstance(m.get("content"), list) else []:
            if not isinstance(b, dict):
                continue
            kind = b.get("type")
            if kind == "thinking":
                more = {
                    f"pi:{k2}": b[k]
                    for k, k2 in (("thinkingSignature", "signature"), ("redacted", "redacted"))
                    if b.get(k) is not None
                }
                piece(
                    {
                        "type": "reasoning",
                        "summary": [{"type": "summary_text", "text": str(b.get("thinking") or "")}],
                    },
                    **more,
                )
            elif kind == "text":
                more = {"pi:text_signature": b["textSignature"]} if b.get("textSignature") else {}
                piece(text_message("assistant", str(b.get("text") or "")), **more)
            elif kind == "toolCall":
                args = b.get("arguments")
                item = {"type": "function_call", "call_id": str(b.get("id") or ""), "name": str(b.get("name") or ""),
                        "arguments": args if isinstance(args, str) else json.dumps(args if args is not None else {}, ensure_ascii=False)}  # fmt: skip
                piece(
                    item,
                    **(
                        {"pi:thought_signature": b["thoughtSignature"]}
                        if b.get("thoughtSignature")
                        else {}
                    ),
                )
                self.counts["tool_calls"] += 1
            else:
                piece({"type": f"pi:{kind}", "block": b})
        body = _response(eid, m, self.at, self.draft.notes)
        self.counts["responses"] += 1
        last = self.draft.add(
            "response",
            eid if n == 0 else f"{eid}:response",
            cur,
            ts,
            **body,
            **(extra if n == 0 else {}),
        )
        calls = (
            str(b.get("id") or "")
            for b in m.get("content") or []
            if isinstance(b, dict) and b.get("type") == "toolCall"
        )
        self.pending[last] = () if NOT_RESENT in body else tuple(calls)
        return last


def _response(eid: str, m: JSON, at: tuple[str, int | None], notes: list[Issue]) -> dict[str, JSON]:
    """The ``response`` of an assistant message: status from its stop reason, usage, cost."""
    stop = str(m.get("stopReason") or "stop")
    body: dict[str, JSON] = {"response_id": eid, "status": STATUS.get(stop, "completed")}
    if m.get("model"):
        body["model"] = str(m["model"])
    if (u := usage(notes, m.get("usage"), at, "message.usage")) is not None:
        body["usage"] = u
    if stop == "aborted":
        body["incomplete"] = {"reason": "aborted"}
    if stop == "error":
        body["error"] = {"code": "error", "message": str(m.get("errorMessage") or "")}
    if stop in ("aborted", "error"):  # transform-messages.ts skips them when it builds a request
        body[NOT_RESENT] = stop
    body |= {f"pi:{k2}": m[k] for k, k2 in (("api", "api"), ("provider", "provider"), ("stopReason", "stop_reason"),
                          ("errorMessage", "error_message")) if m.get(k) is not None}  # fmt: skip
    if isinstance(m.get("usage"), dict) and "cost" in m["usage"]:
        body["pi:cost"] = m["usage"]["cost"]
        spent = m["usage"]["cost"]
        total = spent.get("total") if isinstance(spent, dict) else None
        if (usd := cost(notes, total, "message.usage.cost.total", *at)) is not None:
            body[RECORDED_COST] = usd
    return body


def _output(content: JSON) -> JSON:
    """A tool result's content: its text, or parts when it holds an image."""
    got = parts(content)
    if any(p["type"] == "input_image" for p in got):
        return got
    return "".join(p.get("text", "") for p in got)


def _model_change(c: Converter, e: JSON, parent: str, ts: str, extra: JSON) -> str:
    return c.draft.add(
        "config",
        e["id"],
        parent,
        ts,
        model=str(e.get("modelId") or ""),
        **{"pi:provider": e.get("provider")},
        **extra,
    )


def _thinking(c: Converter, e: JSON, parent: str, ts: str, extra: JSON) -> str:
    level = e.get("thinkingLevel")
    effort = None if level in (None, "off") else level
    return c.draft.add(
        "config",
        e["id"],
        parent,
        ts,
        reasoning={"effort": effort},
        **{"pi:thinking_level": level},
        **extra,
    )


def _compaction(c: Converter, e: JSON, parent: str, ts: str, extra: JSON) -> str:
    first = e.get("firstKeptEntryId")
    body: dict[str, JSON] = {
        "first_kept": str(first) if first in c.order else ROOT,
        "summary": text_message(
            "user", COMPACT_PREFIX + str(e.get("summary") or "") + "\n</summary>"
        ),
        "config": {},
    }
    if before := count(c.draft.notes, e.get("tokensBefore"), "tokensBefore", *c.at):
        body["tokens_before"] = before
    if (u := usage(c.draft.notes, e.get("usage"), c.at, "usage")) is not None:
        body["usage"] = u
    body |= {
        f"pi:{k}": e[k]
        for k in ("details", "fromHook", "retainedTail", "systemMessage", "firstKeptEntryIndex")
        if k in e
    }
    c.counts["compactions"] += 1
    return c.draft.add("compaction", e["id"], parent, ts, **body, **extra)


def _branch_summary(c: Converter, e: JSON, parent: str, ts: str, extra: JSON) -> str:
    from_id, pid = e.get("fromId"), e.get("parentId")
    here = c.order.get(e["id"], 0)
    ancestors = set()
    cur = pid
    by_id = c.by_id
    while isinstance(cur, str) and cur not in ancestors:
        ancestors.add(cur)
        cur = by_id.get(cur, {}).get("parentId")
    left = next((x["id"] for x in reversed(c.pi[:here]) if x["id"] not in ancestors), None)
    source = (
        from_id
        if isinstance(from_id, str) and from_id != pid and from_id in by_id
        else left or pid or ROOT
    )
    body: dict[str, JSON] = {"from": c.tail.get(str(source), str(source)),
                             "summary": text_message("user", BRANCH_PREFIX + str(e.get("summary") or "") + "\n</summary>")}  # fmt: skip
    if (u := usage(c.draft.notes, e.get("usage"), c.at, "usage")) is not None:
        body["usage"] = u
    body |= {
        f"pi:{k2}": e[k]
        for k, k2 in (("fromId", "from_id"), ("details", "details"), ("fromHook", "from_hook"))
        if k in e
    }
    c.counts["branch_summaries"] += 1
    return c.draft.add("branch_summary", e["id"], parent, ts, **body, **extra)


HANDLERS = {
    "message": Converter.message,
    "model_change": _model_change,
    "thinking_level_change": _thinking,
    "compaction": _compaction,
    "branch_summary": _branch_summary,
    "label": lambda c, e, p, ts, x: c.draft.add(
        "label", e["id"], p, ts, target=str(e.get("targetId") or ""), label=e.get("label"), **x
    ),
    "session_info": lambda c, e, p, ts, x: c.draft.add(
        "info", e["id"], p, ts, name=e.get("name"), **x
    ),
    "custom": lambda c, e, p, ts, x: c.draft.add(
        "custom", e["id"], p, ts, ns=str(e.get("customType") or "pi"), data=e.get("data"), **x
    ),
    "custom_message": lambda c, e, p, ts, x: c.custom_message(e["id"], e, p, ts, x),
}
