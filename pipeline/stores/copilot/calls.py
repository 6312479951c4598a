"""A Copilot CLI model call: its chunks' items (specs/copilot-cli.md §2.3), and a session's counts.

From 1.0.78 one response is written as several ``assistant.message`` events sharing an
``apiCallId`` (``chunkIndex`` 0..n-1); each chunk's reasoning, text and tool requests are
the call's items, in order.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any, TypeVar

from trajset.schemas.openresponses import text_message

JSON = Any
T = TypeVar("T")
#: a model call's chunks as read: (event id, data, time)
Chunks = list[tuple[str, dict[str, JSON], JSON]]


def tally(entries: list[dict[str, JSON]]) -> Counter[str]:
    """A session's counts, from its entries (a fork's copied events counted once)."""
    out: Counter[str] = Counter()
    for e in entries:
        kind = e["type"]
        if kind.startswith("copilot:"):
            out[f"records/{kind.removeprefix('copilot:')}"] += 1
        elif kind in ("response", "compaction"):
            out[f"{kind}s"] += 1
            tokens = (e.get("usage") or {}).get("output_tokens")
            out["usage/output_tokens"] += tokens if isinstance(tokens, int) else 0
        elif e.get("copilot:synthetic"):
            out["interrupted_calls"] += 1
    return +out


def continues(chunks: Chunks, data: dict[str, JSON]) -> bool:
    """Whether an assistant message is a later chunk of the call being read."""
    rid = data.get("apiCallId")
    return bool(chunks and rid and rid == chunks[-1][1].get("apiCallId"))


def call_id(chunks: Chunks) -> str:
    d = chunks[0][1]
    return str(d.get("apiCallId") or d.get("messageId") or chunks[0][0])


def items(d: dict[str, JSON]) -> list[tuple[dict[str, JSON], dict[str, JSON]]]:
    """(item, entry members) of one chunk: reasoning, text, each tool request."""
    out: list[tuple[dict[str, JSON], dict[str, JSON]]] = []
    reasoning = d.get("reasoningText")
    if (isinstance(reasoning, str) and reasoning) or isinstance(d.get("encryptedContent"), str):
        item: dict[str, JSON] = {
            "type": "reasoning",
            "summary": [{"type": "summary_text", "text": reasoning or ""}],
        }
        if isinstance(d.get("encryptedContent"), str):
            item["encrypted_content"] = d["encryptedContent"]
        extra = (
            {"copilot:reasoningOpaque": d["reasoningOpaque"]} if d.get("reasoningOpaque") else {}
        )
        out.append((item, extra))
    if isinstance(d.get("content"), str) and d["content"]:
        out.append((text_message("assistant", d["content"]), {}))
    for r in typed(d.get("toolRequests"), list, []):
        if not isinstance(r, dict):
            continue
        args = r.get("arguments")
        text = (
            args
            if isinstance(args, str)
            else json.dumps(args if args is not None else {}, ensure_ascii=False)
        )
        call = {"type": "function_call", "call_id": str(r.get("toolCallId") or ""),
                "name": str(r.get("name") or ""), "arguments": text}  # fmt: skip
        out.append((call, {"copilot:request": without(r, "arguments", "toolCallId", "name")}))
    return out


def task_prompt(arguments: JSON) -> str:
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return ""
    got = arguments.get("prompt") if isinstance(arguments, dict) else None
    return got if isinstance(got, str) else ""


def without(d: JSON, *keys: str) -> JSON:
    return {k: v for k, v in d.items() if k not in keys} if isinstance(d, dict) else d


def typed(value: JSON, kind: type[T], default: T) -> T:
    """``value`` when it is a ``kind``, else ``default`` (a member of another type)."""
    return value if isinstance(value, kind) else default
