"""An OpenCode tool part as entries, and a step's usage (specs/opencode.md §3, §5, §6).

A tool part is its call and its result together: a ``function_call`` item,
then, when the user refused it, a ``decision`` (reject, by a human, with the
feedback), then the ``function_call_output`` (the output, the error text, or
the "interrupted" text OpenCode sends for a call a crash left pending), and for
a ``task`` call a ``subsession`` link to the child it ran.
"""

from __future__ import annotations

import re
from typing import Any

from trajset.schemas.entries import TOOL_EXIT_CODE, TOOL_FAILED
from trajset.schemas.session import Issue

from ...jsonio import dumps_compact
from .. import numbers
from ..numbers import count, counts
from .records import obj

JSON = Any
INTERRUPTED = "[Tool execution was interrupted]"
REJECTED = "The user rejected permission to use this specific tool call"
_FEEDBACK = re.compile(r"with the following feedback:\s*(.*)", re.S)
_TASK_ID = re.compile(r"^task_id: (\S+)", re.M)


def _n(v: JSON) -> int:
    return v if isinstance(v, int) and not isinstance(v, bool) and v > 0 else 0


def usage(notes: list[Issue], tokens: JSON, where: str) -> dict[str, JSON] | None:
    """OpenResponses usage of a step's ``tokens`` (``where``: which message's, for a count out
    of range, noted in ``notes``): input excludes the cache there, so prompt tokens are input + cache read + cache
    write; cached = cache read."""
    if not isinstance(tokens, dict):
        if tokens is not None:
            numbers.note(notes, tokens, f"{where}: tokens", "", None, "an object of counts",
                         "its usage is unknown")  # fmt: skip
        return None
    flat = {k: v for k, v in tokens.items() if k != "cache"}
    flat |= {f"cache.{k}": v for k, v in obj(tokens.get("cache")).items()}
    keys = ("input", "cache.read", "cache.write", "output", "reasoning")
    got = counts(notes, flat, keys, where, "", None)
    if got is None:
        return None
    inp, read, write, out, reasoning = got
    return numbers.usage(inp + read + write, out, read, reasoning)


def tokens_total(notes: list[Issue], tokens: JSON, u: dict[str, JSON], where: str) -> int:
    """All tokens of a step: its ``total`` when OpenCode computed one, else the sum of its
    usage ``u``."""
    total = count(notes, tokens.get("total"), f"{where}.total", "", None)
    return total or int(u["total_tokens"])


def child_of(part: dict[str, JSON], children: dict[str, tuple[int, str]]) -> str:
    """The child session a ``task`` part ran: ``metadata.sessionId``, else the output's
    ``task_id:`` line, else the one child created while the call ran (``children``: child
    id -> (creation ms, parent id), of the calling session)."""
    state = obj(part.get("state"))
    meta = obj(state.get("metadata"))
    sid = meta.get("sessionId")
    if isinstance(sid, str) and sid in children:
        return sid
    m = _TASK_ID.search(str(state.get("output") or ""))
    if m and m.group(1) in children:
        return m.group(1)
    t = obj(state.get("time"))
    start, end = _n(t.get("start")), _n(t.get("end"))
    during = [c for c, (ms, _) in children.items() if start and start <= ms <= (end or start)]
    return during[0] if len(during) == 1 else ""


def output_of(part: dict[str, JSON]) -> tuple[JSON, dict[str, JSON]]:
    """(the output the model saw, the output entry's ``opencode:`` members)."""
    state = obj(part.get("state"))
    status = str(state.get("status") or "")
    extra: dict[str, JSON] = {"opencode:status": status}
    extra |= {f"opencode:{k}": state[k] for k in ("title", "metadata", "time") if k in state}
    output: JSON
    if status == "completed":
        output = str(state.get("output") or "")
        images = [a for a in state.get("attachments") or [] if isinstance(a, dict)]
        if images:
            output = [{"type": "input_text", "text": output}, *(attachment(a) for a in images)]
    elif status == "error":
        output = str(state.get("error") or "")
        extra[TOOL_FAILED] = True
    else:  # pending or running: what OpenCode sends once the turn is over
        output = INTERRUPTED
        extra[TOOL_FAILED] = True
    meta = obj(state.get("metadata"))
    if isinstance(meta.get("exit"), int) and not isinstance(meta.get("exit"), bool):
        extra[TOOL_EXIT_CODE] = meta["exit"]
    return output, extra


def arguments(part: dict[str, JSON]) -> str:
    state = obj(part.get("state"))
    args = state.get("input")
    if args is None and isinstance(state.get("raw"), str):
        return str(state["raw"])
    return dumps_compact(args if args is not None else {})


def rejection(part: dict[str, JSON]) -> str | None:
    """The reason of a permission rejection (the user's feedback, else the error text)."""
    state = obj(part.get("state"))
    error = state.get("error")
    if state.get("status") != "error" or not isinstance(error, str) or REJECTED not in error:
        return None
    m = _FEEDBACK.search(error)
    return m.group(1).strip() if m and m.group(1).strip() else error


def attachment(part: dict[str, JSON]) -> dict[str, JSON]:
    """A ``file`` part as an input part: an image, else a file."""
    url, mime = str(part.get("url") or ""), str(part.get("mime") or "")
    if mime.startswith("image/"):
        return {"type": "input_image", "detail": "auto", "image_url": url}
    out: dict[str, JSON] = {"type": "input_file"}
    if part.get("filename"):
        out["filename"] = str(part["filename"])
    out["file_data" if url.startswith("data:") else "file_url"] = url
    return out


def call_item(part: dict[str, JSON]) -> dict[str, JSON]:
    return {"type": "function_call", "call_id": str(part.get("callID") or part["id"]),
            "name": str(part.get("tool") or ""), "arguments": arguments(part)}  # fmt: skip
