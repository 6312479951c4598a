"""The Cursor IDE's ``state.vscdb`` (specs/cursor.md §3, §4): a composer's bubbles as entries.

``composerData:<id>`` lists the current conversation (``fullConversationHeadersOnly``, or an
inline ``conversation`` before ``_v`` 3, its tool data in ``capabilities[15]``); each
``bubbleId:<id>:<bubble>`` row is a user message or one thing the assistant did: a thinking
block, a text, or a tool call with its result.  A model call is a run of assistant bubbles:
it starts at a thinking or text bubble after a tool or user bubble (a text after a tool
needs the tool's result), and tool bubbles with nothing between them are its parallel
calls.  Usage is a call's non-zero ``tokenCount`` (Cursor 3 writes zeros: none).  A Best-of-N
parent's subcomposers answer one prompt: one tree, a branch each, the judge's winner labelled.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from trajset.schemas.entries import TOOL_FAILED
from trajset.schemas.openresponses import text_message

from ...errors import SessionReadError
from ..draft import SessionDraft
from ..snapshot import read_snapshot
from .times import iso

JSON = Any
COMPOSER = "composerData:"


def composer_ids(path: Path) -> list[tuple[str, dict[str, JSON]]]:
    """(id, composerData) of every composer a session can come from: not an empty draft,
    not a Best-of-N subcomposer (read with its parent); [] when the file is no Cursor DB."""

    def read(db: sqlite3.Connection) -> list[Any]:
        return db.execute(
            "SELECT key, value FROM cursorDiskKV WHERE key LIKE 'composerData:%' ORDER BY key"
        ).fetchall()

    try:
        rows = read_snapshot(path, read)
    except sqlite3.Error:
        return []
    out: list[tuple[str, dict[str, JSON]]] = []
    for key, value in rows:
        data = _json(value)
        cid = str(key).removeprefix(COMPOSER)
        if data is None:
            out.append((cid, {}))  # a damaged row: its load is the error row
        elif not data.get("isBestOfNSubcomposer") and _bubbles_named(data):
            out.append((cid, data))
    return out


def _bubbles_named(data: dict[str, JSON]) -> bool:
    return bool(
        data.get("fullConversationHeadersOnly")
        or data.get("conversation")
        or data.get("subComposerIds")
    )


def _json(value: JSON) -> dict[str, JSON] | None:
    try:
        got = json.loads(value)
    except (TypeError, ValueError, RecursionError):
        return None
    return got if isinstance(got, dict) else None


def load_composer(path: Path, cid: str) -> tuple[dict[str, JSON], dict[str, list[dict[str, JSON]]]]:
    """The composer's data and its bubbles (its subcomposers' too), in conversation order."""

    def read(db: sqlite3.Connection) -> list[Any]:
        return db.execute("SELECT key, value FROM cursorDiskKV WHERE key = ? OR key LIKE ?",
                          (COMPOSER + cid, f"bubbleId:{cid}:%")).fetchall()  # fmt: skip

    rows = _rows(path, read)
    data = next((_json(v) for k, v in rows if k == COMPOSER + cid), None)
    if data is None:
        raise SessionReadError(f"composerData:{cid} is no JSON object", rule="bad_composer",
                               source=str(path), session_id=cid)  # fmt: skip
    bubbles = {str(k).rsplit(":", 1)[-1]: b for k, v in rows if (b := _json(v)) is not None}
    out = {cid: _ordered(data, bubbles)}
    for sub in data.get("subComposerIds") or []:
        if isinstance(sub, str):
            sub_data, sub_bubbles = load_composer(path, sub)
            out[sub] = sub_bubbles[sub]
            out[f"{sub}:data"] = [sub_data]
    return data, out


def _rows(path: Path, read: Any) -> list[Any]:
    try:
        return list(read_snapshot(path, read))
    except sqlite3.Error as exc:
        raise SessionReadError(f"the IDE database does not read: {exc}", rule="unreadable",
                               source=str(path)) from None  # fmt: skip


def _ordered(data: dict[str, JSON], bubbles: dict[str, dict[str, JSON]]) -> list[dict[str, JSON]]:
    headers = data.get("fullConversationHeadersOnly")
    if isinstance(headers, list) and headers:
        return [bubbles[h["bubbleId"]] | {"bubbleId": h["bubbleId"]} for h in headers
                if isinstance(h, dict) and h.get("bubbleId") in bubbles]  # fmt: skip
    inline = [b for b in data.get("conversation") or [] if isinstance(b, dict)]
    tools = _bubble_data_map(data)
    return [
        b | ({"toolFormerData": tools[b["bubbleId"]]} if b.get("bubbleId") in tools else {})
        for b in inline
    ]


def _bubble_data_map(data: dict[str, JSON]) -> dict[str, dict[str, JSON]]:
    """Before composer ``_v`` 3, tool records sat in ``capabilities[type 15].data.bubbleDataMap``."""
    for cap in data.get("capabilities") or []:
        if isinstance(cap, dict) and cap.get("type") == 15:
            found = (cap.get("data") or {}).get("bubbleDataMap")
            found = json.loads(found) if isinstance(found, str) else found
            if isinstance(found, dict):
                return {k: v for k, v in found.items() if isinstance(v, dict)}
    return {}


def _kind(b: dict[str, JSON]) -> str:
    if b.get("type") == 1:
        return "user"
    if isinstance(b.get("toolFormerData"), dict) or b.get("capabilityType") == 15:
        return "tool"
    return "say"


def calls(bubbles: Iterable[dict[str, JSON]]) -> list[list[dict[str, JSON]]]:
    """User bubbles alone, and the assistant bubbles grouped into model calls."""
    out: list[list[dict[str, JSON]]] = []
    last = "user"
    for b in bubbles:
        kind = _kind(b)
        if (
            kind == "user"
            or (kind == "say" and last != "say")
            or (kind == "tool" and last == "user")
        ):
            out.append([b])
        else:
            out[-1].append(b)
        last = kind
    return out


def bubble_entries(d: SessionDraft, bubbles: list[dict[str, JSON]], model: str, parent: str) -> str:
    """The entries of a composer's bubbles below ``parent``; the last one's id."""
    cur = parent
    for group in calls(bubbles):
        if _kind(group[0]) == "user":
            b = group[0]
            item = {"type": "message", "role": "user", "content": _user_parts(b)}
            cur = d.add("item", str(b["bubbleId"]), cur, b.get("createdAt"), item=item,
                        **{"cursor:bubble": _rest(b)})  # fmt: skip
            continue
        cur = _call(d, group, model, cur)
    return cur


def _rest(b: dict[str, JSON]) -> dict[str, JSON]:
    """A bubble without what its entries already hold (text, thinking, a call's arguments and
    result): everything else is kept, the members the spec does not name too."""
    out = {k: v for k, v in b.items() if k not in ("text", "richText", "thinking", "images")}
    tf = b.get("toolFormerData")
    if isinstance(tf, dict):
        out["toolFormerData"] = {
            k: v for k, v in tf.items() if k not in ("rawArgs", "params", "result")
        }
    return out


def _user_parts(b: dict[str, JSON]) -> list[JSON]:
    parts: list[JSON] = [{"type": "input_text", "text": str(b.get("text") or "")}]
    for img in b.get("images") or []:
        url = img.get("url") or img.get("data") if isinstance(img, dict) else img
        if isinstance(url, str) and url.startswith("data:image/"):
            parts.append({"type": "input_image", "image_url": url, "detail": "auto"})
    return parts


def _call(d: SessionDraft, group: list[dict[str, JSON]], model: str, parent: str) -> str:
    rid = str(group[0]["bubbleId"])
    cur = parent
    tools = []
    for b in group:
        bid, ts = str(b["bubbleId"]), b.get("createdAt")
        thinking = b.get("thinking")
        if isinstance(thinking, dict):
            item = {
                "type": "reasoning",
                "summary": [{"type": "summary_text", "text": str(thinking.get("text") or "")}],
            }
            extra = {"cursor:signature": thinking["signature"]} if thinking.get("signature") else {}
            cur = d.add("item", f"{bid}:thinking", cur, ts, item=item, response=rid, **extra)
        if _kind(b) == "tool":
            tf = b.get("toolFormerData") or {}
            args = tf.get("rawArgs") or tf.get("params") or "{}"
            call = {"type": "function_call", "call_id": str(tf.get("toolCallId") or bid),
                    "name": str(tf.get("name") or ""), "arguments": args if isinstance(args, str) else json.dumps(args)}  # fmt: skip
            cur = d.add("item", bid, cur, ts, item=call, response=rid)
            tools.append((b, tf, call["call_id"], cur))
        elif b.get("text"):
            cur = d.add(
                "item", bid, cur, ts, item=text_message("assistant", str(b["text"])), response=rid
            )
    body: dict[str, JSON] = {"response_id": rid, "status": "completed"}
    body["cursor:bubbles"] = [_rest(b) for b in group]
    named = next((b["modelInfo"]["modelName"] for b in group if isinstance(b.get("modelInfo"), dict)
                  and b["modelInfo"].get("modelName")), model)  # fmt: skip
    if named and named != "default":
        body["model"] = named
    tokens = [b.get("tokenCount") or {} for b in group]
    inp = sum(t.get("inputTokens") or 0 for t in tokens if isinstance(t, dict))
    out = sum(t.get("outputTokens") or 0 for t in tokens if isinstance(t, dict))
    if isinstance(inp, int) and isinstance(out, int) and (inp or out):
        body["usage"] = {"input_tokens": inp, "output_tokens": out, "total_tokens": inp + out}
    cur = d.add("response", f"{rid}:response", cur, None, **body)
    d.counts["responses"] += 1
    for b, tf, cid, call_entry in tools:
        cur = _output(d, b, tf, cid, call_entry, cur)
    return cur


def _output(
    d: SessionDraft, b: dict[str, JSON], tf: dict[str, JSON], cid: str, call: str, cur: str
) -> str:
    bid = str(b["bubbleId"])
    status = tf.get("status")
    result = tf.get("result")
    text = result if isinstance(result, str) else json.dumps(result) if result is not None else ""
    if tf.get("error") and not text:
        text = str(tf["error"]) if not isinstance(tf["error"], dict) else json.dumps(tf["error"])
    extra: dict[str, JSON] = {"cursor:status": status}
    if status in ("error", "cancelled") or tf.get("userDecision") == "rejected":
        extra[TOOL_FAILED] = True
    if not text:
        extra["cursor:no_result"] = True
    item = {"type": "function_call_output", "call_id": cid, "output": text}
    cur = d.add("item", f"{bid}:output", cur, b.get("createdAt"), item=item, **extra)
    if tf.get("userDecision") == "rejected":
        cur = d.add(
            "decision",
            f"{bid}:decision",
            cur,
            None,
            call_id=cid,
            target=call,
            verdict="reject",
            by="human",
            reason="the user rejected the call",
        )
    return cur


def composer_session(
    path: Path, cid: str, data: dict[str, JSON], bubbles: dict[str, list[JSON]]
) -> SessionDraft:
    """One composer as a session; a Best-of-N parent with its subcomposers as branches."""
    start = iso(data.get("createdAt"))
    d = SessionDraft(cid, str(path), "cursor", "cursor", ts=start)
    d.created_at = start if start != "1970-01-01T00:00:00Z" else ""
    config = (data.get("modelConfig") or {}).get("modelName")
    model = config if isinstance(config, str) and config != "default" else ""
    root = d.add("config", "config", None, start, **({"model": model} if model else {}))
    if isinstance(data.get("name"), str) and data["name"]:
        root = d.add("info", "name", root, None, name=data["name"])
    where = ((data.get("workspaceIdentifier") or {}).get("uri") or {}).get("fsPath")
    if isinstance(where, str) and where:
        d.members["cwd"] = where
        d.meet("workdir", where)
    d.members["cursor:composer"] = {k: v for k, v in data.items()
                                    if k not in ("conversation", "fullConversationHeadersOnly", "capabilities")}  # fmt: skip
    subs = [s for s in data.get("subComposerIds") or [] if isinstance(s, str) and s in bubbles]
    if not subs:
        bubble_entries(d, bubbles[cid], model, root)
        return d
    prompt = next((b for s in subs for b in bubbles[s] if b.get("type") == 1), None)
    if prompt is not None:
        root = d.add("item", f"{cid}:prompt", root, prompt.get("createdAt"),
                     item={"type": "message", "role": "user", "content": _user_parts(prompt)})  # fmt: skip
    for s in subs:
        sub = (bubbles.get(f"{s}:data") or [{}])[0]
        rest = [b for b in bubbles[s] if b is not prompt and not (b.get("type") == 1 and prompt is not None
                and b.get("text") == prompt.get("text"))]  # fmt: skip
        sub_model = (sub.get("modelConfig") or {}).get("modelName")
        end = bubble_entries(d, rest, sub_model if isinstance(sub_model, str) else model, root)
        won = sub.get("bestOfNJudgeWinner") is True
        d.add("outcome", f"{s}:judge", end, None, kind="eval", target=end, label="cursor:best_of_n",
              details={"subcomposer": s}, **{"pass": won})  # fmt: skip
        d.counts["best_of_n_branches"] += 1
    return d
