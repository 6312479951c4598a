"""The reverse mapping (spec §7.11): Open Responses items from an ATIF document.

``items`` rebuilds them exactly from the raw items a document carries;
``items_from`` rebuilds them, lossily, from the declared fields of any
producer's document.
"""

from __future__ import annotations

from typing import Any

from ..jsonio import dumps_compact

JSON = Any



class NoRawItems(ValueError):
    """The document carries no raw Open Responses items (e.g. after no_passthrough)."""


def items(doc: dict[str, JSON]) -> list[JSON]:
    """Rebuild the Open Responses items from a document's raw items (spec §7.11)."""
    out: list[JSON] = []
    found = False
    for step in doc.get("steps", []):
        o = (step.get("extra") or {}).get("openresponses") or {}
        if "item" in o:
            out.append(o["item"])
            found = True
        if "items" in o:
            out.extend(o["items"])
            found = True
        for r in (step.get("observation") or {}).get("results", []):
            ro = (r.get("extra") or {}).get("openresponses") or {}
            if "item" in ro:
                out.append(ro["item"])
                found = True
    if not found:
        raise NoRawItems("the document carries no raw Open Responses items")
    return out


def items_from(doc: dict[str, JSON]) -> list[JSON]:
    """Rebuild items, lossily, from the declared fields of any producer's document."""
    out: list[JSON] = []
    used: dict[str, int] = {}

    def fresh(cid: str) -> str:
        base = cid or "call"
        n = used.get(base, 0) + 1
        used[base] = n
        if not cid:
            return f"call_{n}"
        return cid if n == 1 else f"{cid}_{n}"

    def text_of(message: JSON) -> tuple[str, list[JSON]]:
        if isinstance(message, str):
            return message, []
        texts, images = [], []
        for p in message or []:
            if p.get("type") == "text":
                texts.append(p.get("text") or "")
            elif p.get("type") == "image":
                images.append(
                    {"type": "input_image", "image_url": p["source"]["path"], "detail": "auto"}
                )
        return "".join(texts), images

    for step in doc.get("steps", []):
        source = step.get("source")
        text, images = text_of(step.get("message"))
        results = (step.get("observation") or {}).get("results", [])
        renames: dict[str, str] = {}
        if source == "agent":
            if step.get("reasoning_content"):
                out.append(
                    {
                        "type": "reasoning",
                        "summary": [{"type": "summary_text", "text": step["reasoning_content"]}],
                    }
                )
            if text:
                out.append(
                    {
                        "type": "message",
                        "role": "assistant",
                        "content": [{"type": "output_text", "text": text, "annotations": []}],
                    }
                )
            for tc in step.get("tool_calls") or []:
                cid = fresh(tc.get("tool_call_id") or "")
                renames.setdefault(tc.get("tool_call_id") or "", cid)
                args = tc.get("arguments") or {}
                raw = (
                    args["_arguments"]
                    if set(args) == {"_arguments"} and isinstance(args["_arguments"], str)
                    else dumps_compact(args)
                )
                out.append(
                    {
                        "type": "function_call",
                        "call_id": cid,
                        "name": tc.get("function_name") or "",
                        "arguments": raw,
                    }
                )
        else:
            role = "user" if source == "user" else "system"
            if not (role == "system" and not text and results):
                content = (
                    [{"type": "input_text", "text": text}, *images]
                    if text or not images
                    else images
                )
                out.append({"type": "message", "role": role, "content": content})
        for r in results:
            sid = r.get("source_call_id")
            if sid:
                content = r.get("content")
                output, _ = text_of(content) if not isinstance(content, str) else (content, [])
                out.append(
                    {
                        "type": "function_call_output",
                        "call_id": renames.get(sid, sid),
                        "output": output or "",
                    }
                )
    return out


