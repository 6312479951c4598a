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


class CallIds:
    """Fresh call ids: a repeated or missing id gets a numbered one, as the reference does."""

    def __init__(self) -> None:
        self.used: dict[str, int] = {}

    def fresh(self, cid: str) -> str:
        base = cid or "call"
        n = self.used[base] = self.used.get(base, 0) + 1
        if not cid:
            return f"call_{n}"
        return cid if n == 1 else f"{cid}_{n}"


def _text_and_images(message: JSON) -> tuple[str, list[JSON]]:
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


def _raw_arguments(args: dict[str, JSON]) -> str:
    if set(args) == {"_arguments"} and isinstance(args["_arguments"], str):
        return str(args["_arguments"])
    return dumps_compact(args)


def _agent_items(step: JSON, text: str, ids: CallIds, renames: dict[str, str]) -> list[JSON]:
    out: list[JSON] = []
    if step.get("reasoning_content"):
        summary = [{"type": "summary_text", "text": step["reasoning_content"]}]
        out.append({"type": "reasoning", "summary": summary})
    if text:
        content = [{"type": "output_text", "text": text, "annotations": []}]
        out.append({"type": "message", "role": "assistant", "content": content})
    for tc in step.get("tool_calls") or []:
        cid = ids.fresh(tc.get("tool_call_id") or "")
        renames.setdefault(tc.get("tool_call_id") or "", cid)
        name = tc.get("function_name") or ""
        arguments = _raw_arguments(tc.get("arguments") or {})
        out.append({"type": "function_call", "call_id": cid, "name": name, "arguments": arguments})
    return out


def _output(r: JSON) -> str:
    content = r.get("content")
    return content if isinstance(content, str) else _text_and_images(content)[0]


def _output_items(
    results: list[JSON], renames: dict[str, str], calls: list[str], unlinked: bool
) -> list[tuple[JSON, dict[str, JSON]]]:
    """A step's results as ``function_call_output`` items, each with its notes.

    With ``unlinked``, a result without ``source_call_id`` is not dropped: in a step with
    calls it is the output of the last call not answered (the others then get ``""``,
    noted ``output_with``); else it is a user message, noted ``observation``.
    """
    out: list[tuple[JSON, dict[str, JSON]]] = []
    loose: list[JSON] = []
    for r in results:
        sid = r.get("source_call_id")
        if sid:
            call_id = renames.get(sid, sid)
            item = {"type": "function_call_output", "call_id": call_id, "output": _output(r)}
            out.append((item, {"result": r}))
        elif unlinked and ("content" in r or not r.get("subagent_trajectory_ref")):
            loose.append(r)
    answered = {item["call_id"] for item, _ in out}
    pending = [cid for cid in calls if cid not in answered]
    if not loose:
        return out
    if not pending:
        for r in loose:
            item = {"type": "message", "role": "user",
                    "content": [{"type": "input_text", "text": _output(r)}]}  # fmt: skip
            out.append((item, {"result": r, "observation": True}))
        return out
    last = pending[-1]
    text = "\n".join(_output(r) for r in loose)
    for cid in pending:
        item = {
            "type": "function_call_output",
            "call_id": cid,
            "output": text if cid == last else "",
        }
        notes: dict[str, JSON] = {"results": loose} if cid == last else {"output_with": last}
        out.append((item, notes))
    return out


def step_items(
    step: JSON, ids: CallIds, *, unlinked: bool = False
) -> list[tuple[JSON, dict[str, JSON]]]:
    """One step's items in order, each with notes for its entry (``result``: the observation
    result it came from; see ``_output_items`` for ``unlinked``)."""
    source = step.get("source")
    text, images = _text_and_images(step.get("message"))
    results = (step.get("observation") or {}).get("results", [])
    renames: dict[str, str] = {}
    out: list[tuple[JSON, dict[str, JSON]]] = []
    if source == "agent":
        out.extend((it, {}) for it in _agent_items(step, text, ids, renames))
    else:
        role = "user" if source == "user" else "system"
        if not (role == "system" and not text and results):
            parts = [{"type": "input_text", "text": text}, *images]
            content = parts if text or not images else images
            out.append(({"type": "message", "role": role, "content": content}, {}))
    calls = [it["call_id"] for it, _ in out if it.get("type") == "function_call"]
    out.extend(_output_items(results, renames, calls, unlinked))
    return out


def items_from(doc: dict[str, JSON]) -> list[JSON]:
    """Rebuild items, lossily, from the declared fields of any producer's document: results
    not linked to a call are left out, as the reference does."""
    ids = CallIds()
    return [item for step in doc.get("steps", []) for item, _ in step_items(step, ids)]
