"""One Claude Code session (its tree) as Agent Session Format entries (specs/claude-code.md, mapping 2).

Typed prompts and images become user items, assistant content blocks
assistant messages, reasoning (signature kept) and function calls, tool
results function-call outputs; one API response split over several entries
(same ``message.id`` and ``requestId``) is one ``response`` with its usage
counted once.  Compactions become compaction entries.  Everything else in the
chain is a ``claude:<type>`` entry; ``isMeta`` and local-command entries are
user context, hidden (``visible: false``), never prompts.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from trajset.schemas.entries import NOT_RESENT, TOOL_FAILED
from trajset.schemas.openresponses import text_message
from trajset.schemas.session import Issue

from ...jsonio import dumps_compact
from ..draft import SessionDraft
from ..numbers import counts, usage
from .lines import Record
from .tree import COMMAND_MARKS, Tree

JSON = Any
CHAIN_FIELDS = ("uuid", "parentUuid", "type", "message", "timestamp", "sessionId")


def _fields(r: Record) -> dict[str, JSON]:
    return {k: v for k, v in r.raw.items() if k not in CHAIN_FIELDS}


def _image(src: dict[str, JSON]) -> dict[str, JSON]:
    media = src.get("media_type") or "image/png"
    return {
        "type": "input_image",
        "image_url": f"data:{media};base64,{src.get('data') or ''}",
        "detail": "auto",
    }


def tool_output(content: JSON) -> str | list[dict[str, JSON]]:
    """A ``tool_result``'s content with nothing dropped: text blocks as their text (joined,
    as before); an image as an ``input_image`` part (the output is then a list of parts);
    any other block (``tool_reference`` from ToolSearch, a structured result) as its
    compact JSON text, so the model sees what the harness returned."""
    if not isinstance(content, list):
        return "" if content is None else str(content)
    blocks = [x for x in content if isinstance(x, dict)]
    if all(x.get("type") == "text" for x in blocks):
        return "".join(str(x.get("text") or "") for x in blocks)
    pieces: list[dict[str, JSON]] = []
    for x in blocks:
        if x.get("type") == "image" and isinstance(x.get("source"), dict):
            pieces.append(_image(x["source"]))
        else:
            text = str(x.get("text") or "") if x.get("type") == "text" else dumps_compact(x)
            pieces.append({"type": "input_text", "text": text})
    if any(p["type"] == "input_image" for p in pieces):
        return pieces
    return "\n".join(p["text"] for p in pieces)


def _user_items(r: Record) -> list[tuple[dict[str, JSON], dict[str, JSON]]]:
    """(item, extra members) for each block of a user entry."""
    content = (r.raw.get("message") or {}).get("content")
    blocks: list[JSON] = (
        [{"type": "text", "text": content}] if isinstance(content, str) else content or []
    )
    parts: list[JSON] = []
    out: list[tuple[dict[str, JSON], dict[str, JSON]]] = []
    for b in blocks:
        if not isinstance(b, dict):
            continue
        if b.get("type") == "tool_result":
            extra = {TOOL_FAILED: True} if b.get("is_error") is True else {}
            out.append(
                (
                    {
                        "type": "function_call_output",
                        "call_id": str(b.get("tool_use_id") or ""),
                        "output": tool_output(b.get("content")),
                    },
                    extra,
                )
            )
        elif b.get("type") == "image" and isinstance(b.get("source"), dict):
            parts.append(_image(b["source"]))
        elif b.get("type") == "text":
            parts.append({"type": "input_text", "text": str(b.get("text") or "")})
    if parts:
        text = "".join(p.get("text", "") for p in parts)
        context = bool(r.raw.get("isMeta")) or text.lstrip().startswith(COMMAND_MARKS)
        extra = {"visible": False, "claude:context": True} if context else {}
        out.insert(0, ({"type": "message", "role": "user", "content": parts}, extra))
    return out


def _assistant_items(r: Record) -> list[tuple[dict[str, JSON], dict[str, JSON]]]:
    out: list[tuple[dict[str, JSON], dict[str, JSON]]] = []
    for b in (r.raw.get("message") or {}).get("content") or []:
        if not isinstance(b, dict):
            continue
        kind = b.get("type")
        if kind == "text":
            out.append((text_message("assistant", str(b.get("text") or "")), {}))
        elif kind == "thinking":
            extra = {"claude:signature": b["signature"]} if b.get("signature") else {}
            out.append(
                (
                    {
                        "type": "reasoning",
                        "summary": [{"type": "summary_text", "text": str(b.get("thinking") or "")}],
                    },
                    extra,
                )
            )
        elif kind == "tool_use":
            arguments = json.dumps(
                b.get("input") if b.get("input") is not None else {}, ensure_ascii=False
            )
            out.append(
                (
                    {
                        "type": "function_call",
                        "call_id": str(b.get("id") or ""),
                        "name": str(b.get("name") or ""),
                        "arguments": arguments,
                    },
                    {},
                )
            )
        else:
            out.append(({"type": f"claude:{kind}", "block": b}, {}))
    return out


#: the model Claude Code names on messages it wrote itself (an API error notice, an
#: interruption), which no model produced
SYNTHETIC = "<synthetic>"


def _text(r: Record) -> str:
    content = (r.raw.get("message") or {}).get("content")
    if isinstance(content, str):
        return content
    blocks = content if isinstance(content, list) else []
    return "".join(str(b.get("text") or "") for b in blocks if isinstance(b, dict))


def response_key(r: Record) -> tuple[str, str]:
    m = r.raw.get("message") or {}
    return str(m.get("id") or r.uuid), str(r.raw.get("requestId") or "")


def _usage(r: Record, notes: list[Issue]) -> dict[str, JSON] | None:
    u = (r.raw.get("message") or {}).get("usage")
    if not isinstance(u, dict):
        return None
    keys = (
        "cache_read_input_tokens",
        "input_tokens",
        "cache_creation_input_tokens",
        "output_tokens",
    )
    got = counts(notes, u, keys, "message.usage", r.file, r.line)
    if got is None:
        return None
    cached, fresh, created, out = got
    return usage(fresh + created + cached, out, cached)


@dataclass
class Emitter:
    """The session's entries in tree order (``draft``); ``tail`` maps a record to the last
    entry made from it."""

    draft: SessionDraft
    tail: dict[str, str] = field(default_factory=dict)
    counts: Counter[str] = field(default_factory=Counter)
    model: str = ""


def _compaction(e: Emitter, tree: Tree, r: Record, parent: str, head: dict[str, str]) -> str:
    first_kept, summary = tree.compactions[r.uuid]
    text = ""
    if summary is not None:
        content = (summary.raw.get("message") or {}).get("content")
        text = (
            content
            if isinstance(content, str)
            else "".join(str(b.get("text") or "") for b in content or [] if isinstance(b, dict))
        )
    item = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}
    e.counts["compactions"] += 1
    # Claude Code keeps the whole history in the file: it is kept here too, from the session's
    # first entry, as copied context (not trainable) before the summary; the window Claude Code
    # preserved, when it says, is recorded with the boundary.
    boundary = {**_fields(r), "claude:preserved_from": head.get(first_kept, "")}
    return e.draft.add("compaction", r.uuid, parent, r.ts, first_kept="config", summary=item, config={"model": e.model} if e.model else {}, **{"claude:boundary": boundary})  # fmt: skip


def _record(
    e: Emitter, r: Record, parent: str, last_piece: dict[tuple[str, str], str]
) -> tuple[str, str]:
    """Entries of one record; (first id, last id)."""
    if r.kind in ("user", "assistant"):
        pairs = _user_items(r) if r.kind == "user" else _assistant_items(r)
        key = response_key(r)
        first, cur = "", parent
        for i, (item, extra) in enumerate(pairs):
            body: dict[str, JSON] = {"item": item, **extra}
            if r.kind == "assistant":
                body["response"] = "|".join(key)
            cur = e.draft.add("item", r.uuid if i == 0 else f"{r.uuid}:{i}", cur, r.ts, **body)
            first = first or cur
        if r.kind == "assistant" and last_piece.get(key) == r.uuid:
            model = str((r.raw.get("message") or {}).get("model") or e.model)
            body = {"response_id": "|".join(key), "model": model, "status": "completed"}
            if r.raw.get("isApiErrorMessage") is True:  # Claude Code's notice, no model's answer
                body["status"] = "failed"
                body["error"] = {"code": "api_error", "message": _text(r)}
                body[NOT_RESENT] = "api_error"  # a notice to the user, not sent to the model
            elif model != SYNTHETIC:
                e.model = model
            if (usage := _usage(r, e.draft.notes)) is not None:
                body["usage"] = usage
            body["claude:fields"] = _fields(r)
            cur = e.draft.add("response", f"{r.uuid}:response", cur, r.ts, **body)
            e.counts["responses"] += 1
        if first:
            return first, cur
    e.counts[f"claude_entry/{r.kind or 'untyped'}"] += 1
    eid = e.draft.add(f"claude:{r.kind or 'untyped'}", r.uuid, parent, r.ts, record=_fields(r))
    return eid, eid


def tree_entries(
    tree: Tree, links: dict[str, tuple[str, str]], first_ts: str, draft: SessionDraft
) -> Emitter:
    """The session's entries, into ``draft``: a config root, then the tree; ``links`` adds a
    subsession link after the tool result that names the agent (record uuid -> (agent
    session id, call id))."""
    e = Emitter(draft)
    last_piece = {response_key(r): r.uuid for r in tree.records if r.kind == "assistant"}
    e.model = next(
        (
            str(r.raw["message"].get("model"))
            for r in tree.records
            if r.kind == "assistant"
            and isinstance(r.raw.get("message"), dict)
            and r.raw["message"].get("model")
        ),
        "",
    )
    e.draft.add("config", "config", None, first_ts, **({"model": e.model} if e.model else {}))
    head: dict[str, str] = {}
    for r in tree.records:
        p = tree.parent.get(r.uuid)
        parent = e.tail.get(p, "config") if p else "config"
        if r.uuid in tree.compactions:
            first = last = _compaction(e, tree, r, parent, head)
        else:
            first, last = _record(e, r, parent, last_piece)
        if r.uuid in links:
            agent, call_id = links[r.uuid]
            last = e.draft.add(
                "link",
                f"{r.uuid}:link",
                last,
                r.ts,
                rel="subsession",
                session=agent,
                call_id=call_id,
            )
        head[r.uuid], e.tail[r.uuid] = first, last
    e.counts["forks"] += len(tree.forks)
    for kind, n in tree.artifacts.items():
        e.counts[f"artifact/{kind}"] += n
    return e
