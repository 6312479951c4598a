"""Cursor agent transcripts (specs/cursor.md §1): ``agent-transcripts/<id>/<id>.jsonl``, the flat
``<id>.jsonl`` and the legacy ``<id>.txt``.

Lossy: no ids, no times but the prompts' ``<timestamp>`` tag, no model, no usage and no tool
results.  Each assistant line is one model call; a line holding only ``[REDACTED]`` (withheld
thinking) joins the next assistant line of its turn as an empty reasoning, and the marker is
taken out of any text.  A call gets an output that says the transcript did not record it
(``cursor:no_result``), and every model call after a call of its turn answered a result the
file does not hold: it is ``incomplete`` (context, never trained on).  ``turn_ended`` with
``error`` or ``aborted`` is an outcome that does not pass, and ends its turn's last call as
``incomplete``.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from trajset.schemas.openresponses import text_message
from trajset.schemas.session import Issue

from ...jsonio import SURROGATE
from ..base import input_lines
from ..draft import SessionDraft
from ..jsonl import json_kind, objects

JSON = Any
HARNESS = "cursor"
REDACTED = "[REDACTED]"
#: the output a call gets: the transcript holds no result
NO_RESULT = "[result not recorded: Cursor's transcript keeps no tool results]"
_STAMP = re.compile(
    r"<timestamp>\w+, (\w{3}) (\d{1,2}), (\d{4}), (\d{1,2}):(\d{2}) (AM|PM) \(UTC([+-]\d{1,2})(?::(\d{2}))?\)</timestamp>"
)
_MONTHS = {
    m: i + 1
    for i, m in enumerate(
        ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    )
}
_QUERY = re.compile(r"<user_query>\n?(.*?)\n?</user_query>", re.S)


def stamp(text: str) -> str | None:
    """The RFC 3339 time of a prompt's ``<timestamp>`` tag, or None."""
    m = _STAMP.search(text)
    if not m:
        return None
    mon, day, year, hour, minute, half, off_h, off_m = m.groups()
    h = int(hour) % 12 + (12 if half == "PM" else 0)
    sign = -1 if off_h.startswith("-") else 1
    tz = timezone(sign * timedelta(hours=abs(int(off_h)), minutes=int(off_m or 0)))
    try:
        when = datetime(int(year), _MONTHS[mon], int(day), h, int(minute), tzinfo=tz)
    except (KeyError, ValueError):
        return None
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def query(text: str) -> str:
    """A prompt without its wrappers: what the user typed."""
    m = _QUERY.search(text)
    return (m.group(1) if m else text).strip()


def text_of(content: JSON) -> str:
    """A message's text: a string, or its text blocks' text."""
    if isinstance(content, str):
        return content
    blocks = content if isinstance(content, list) else []
    return "".join(
        str(b.get("text") or "") for b in blocks if isinstance(b, dict) and b.get("type") == "text"
    )


class Transcript:
    """One transcript's entries, into ``draft`` (see the module docstring)."""

    def __init__(self, draft: SessionDraft, sid: str, children: dict[str, str]) -> None:
        self.d, self.sid = draft, sid
        self.children = dict(children)  # a subagent's first prompt -> its session id
        self.redacted = False
        self.turn_called = False
        self.last_response: dict[str, JSON] | None = None
        self.calls: list[tuple[str, str]] = []  # (call id, prompt) of Task/Subagent calls

    def user(self, line: int, content: JSON) -> None:
        text = text_of(content)
        self.d.stamp(stamp(text))
        self.d.append("item", None, item={"type": "message", "role": "user",
                                          "content": [{"type": "input_text", "text": text}]})  # fmt: skip
        self.turn_called, self.redacted, self.last_response = False, False, None

    def assistant(self, line: int, content: JSON) -> None:
        blocks = (
            content if isinstance(content, list) else [{"type": "text", "text": text_of(content)}]
        )
        text = "".join(
            str(b.get("text") or "")
            for b in blocks
            if isinstance(b, dict) and b.get("type") == "text"
        )
        uses = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_use"]
        self.keep_unknown(blocks)
        said = text.replace(REDACTED, "").strip()
        if not said and not uses and REDACTED not in text:
            return  # nothing the model said (blocks kept above, or an empty line)
        if not said and not uses and REDACTED in text:
            self.redacted = True  # withheld thinking: the next call's
            self.d.counts["redacted_lines"] += 1
            return
        rid = f"{self.sid}:{line}"
        if self.redacted or REDACTED in text:
            self.d.append("item", None, item={"type": "reasoning", "summary": []}, response=rid,
                          **{"cursor:redacted": True})  # fmt: skip
        self.redacted = False
        if said:
            self.d.append("item", None, item=text_message("assistant", said), response=rid)
        ids = []
        for n, b in enumerate(uses):
            cid = f"cursor:{self.sid}:{line}:{n}"
            args = b.get("input")
            arguments = (
                args
                if isinstance(args, str)
                else json.dumps(args if args is not None else {}, ensure_ascii=False)
            )
            self.d.append("item", None, item={"type": "function_call", "call_id": cid,
                                              "name": str(b.get("name") or ""), "arguments": arguments},
                          response=rid)  # fmt: skip
            ids.append(cid)
            if b.get("name") in ("Task", "Subagent") and isinstance(args, dict):
                self.calls.append((cid, query(str(args.get("prompt") or ""))))
        body: dict[str, JSON] = {"response_id": rid, "status": "completed"}
        if self.turn_called:  # it answered results the file does not hold
            body = {
                **body,
                "status": "incomplete",
                "incomplete": {"reason": "cursor:results_not_recorded"},
            }
        self.d.append("response", None, **body)
        self.last_response = self.d.last
        self.d.counts["responses"] += 1
        for cid in ids:
            self.d.append("item", None, item={"type": "function_call_output", "call_id": cid, "output": NO_RESULT},
                          **{"cursor:no_result": True})  # fmt: skip
            prompt = next((q for c, q in self.calls if c == cid), None)
            if prompt is not None and prompt in self.children:
                self.link(self.children.pop(prompt), cid)
        self.turn_called = self.turn_called or bool(ids)

    def keep_unknown(self, blocks: list[JSON]) -> None:
        """The blocks the spec does not describe (``tool_result``, ``image``, ...), kept and
        counted: never a message."""
        for b in blocks:
            if not isinstance(b, dict) or b.get("type") not in ("text", "tool_use"):
                kind = b.get("type") if isinstance(b, dict) else "not_an_object"
                self.d.counts[f"blocks_unknown/{kind}"] += 1
                self.d.append("cursor:block", None, block=b)

    def link(self, child: str, call_id: str | None) -> None:
        body = {"rel": "subsession", "session": child, **({"call_id": call_id} if call_id else {})}
        self.d.append("link", None, **body)
        self.d.counts["children"] += 1

    def turn_ended(self, record: dict[str, JSON]) -> None:
        status = record.get("status")
        self.d.append("cursor:turn_ended", None, record=record)
        if status in ("error", "aborted"):
            target = self.d.entries[-2]["id"]
            self.d.append("outcome", None, kind="custom", target=target, label="cursor:turn_ended",
                          details={"status": status, "error": record.get("error")}, **{"pass": False})  # fmt: skip
            if self.last_response is not None:
                self.last_response["status"] = "incomplete"
                self.last_response["incomplete"] = {"reason": f"cursor:turn_{status}"}
        self.redacted, self.last_response = False, None


#: the members of a transcript block, and their types
BLOCK: dict[str, type] = {"type": str, "text": str, "name": str}


def _content(rec: dict[str, JSON], where: str, line: int, draft: SessionDraft) -> JSON:
    """A line's ``message.content``, without what is of another type than Cursor writes
    (each an issue: read as missing)."""
    m = rec.get("message")
    if m is not None and not isinstance(m, dict):
        draft.issues.append(
            Issue("bad_field", line, f"{where}: message is {json_kind(m)}; read as empty")
        )
        return []
    content = m.get("content") if isinstance(m, dict) else None
    if content is None or isinstance(content, str):
        return content
    if not isinstance(content, list):
        draft.issues.append(
            Issue("bad_field", line, f"{where}: content is {json_kind(content)}; read as empty")
        )
        return []
    kept = []
    for i, b in enumerate(content):
        bad = [
            k
            for k, t in BLOCK.items()
            if isinstance(b, dict) and b.get(k) is not None and not isinstance(b[k], t)
        ]
        if not isinstance(b, dict) or bad or SURROGATE.search(str(b.get("type") or "")):
            what = (
                f"{', '.join(bad)} of another type"
                if bad
                else "no object, or a type with half a character"
            )
            draft.issues.append(
                Issue("bad_field", line, f"{where}: content[{i}]: {what}; left out")
            )
            continue
        kept.append(b)
    return kept


def read_transcript(
    path: Path, sid: str, draft: SessionDraft, children: dict[str, str] | None = None
) -> Transcript:
    """A ``.jsonl`` transcript into ``draft``; ``children``: each subagent's first prompt ->
    its session id, linked after the delegation call that sent that prompt (else at the end)."""
    found, issues = objects(input_lines(path), path.name)
    t = Transcript(draft, sid, children or {})
    draft.issues += issues
    for line, rec in found:
        content = _content(rec, f"{path.name}: line {line}", line, draft)
        if rec.get("type") == "turn_ended":
            t.turn_ended(rec)
        elif rec.get("role") == "user":
            t.user(line, content)
        elif rec.get("role") == "assistant":
            t.assistant(line, content)
        else:
            draft.counts["records_unknown"] += 1
            draft.append("cursor:record", None, record=rec)
    for child in sorted(t.children.values()):
        t.link(child, None)
    return t


def read_txt(path: Path, sid: str, draft: SessionDraft) -> None:
    """A legacy ``.txt`` transcript into ``draft``: ``user:``/``assistant:`` blocks;
    ``[Thinking]``, ``[Tool call] <name>`` with indented ``key=value`` lines and
    ``[Tool result]`` with an indented body.  A model call ends at a tool result."""
    text = path.read_bytes().decode("utf-8", errors="replace")
    role = ""
    lines: list[str] = []
    for raw in [*text.splitlines(), "user:"]:
        if raw in ("user:", "assistant:"):
            if role == "user":
                draft.append("item", None, item=text_message("user", "\n".join(lines).strip()))
            elif role == "assistant":
                _txt_assistant(lines, sid, draft)
            role, lines = raw[:-1], []
        else:
            lines.append(raw)


def _txt_assistant(lines: list[str], sid: str, draft: SessionDraft) -> None:
    blocks: list[tuple[str, str, list[str]]] = []  # (kind, head, body lines)
    for raw in lines:
        if raw.startswith("[Thinking]"):
            blocks.append(("thinking", "", []))
        elif raw.startswith("[Tool call]"):
            blocks.append(("call", raw.removeprefix("[Tool call]").strip(), []))
        elif raw.startswith("[Tool result]"):
            blocks.append(("result", "", []))
        elif raw.startswith("  ") and blocks and blocks[-1][0] != "text":
            blocks[-1][2].append(raw[2:])
        elif raw.strip():
            if not blocks or blocks[-1][0] != "text":
                blocks.append(("text", "", []))
            blocks[-1][2].append(raw)
    call, rid = 0, ""
    pending: list[str] = []
    for kind, head, body in blocks:
        if kind == "result":
            if rid:
                draft.append("response", None, response_id=rid, status="completed")
                draft.counts["responses"] += 1
                rid = ""
            cid = pending.pop(0) if pending else f"cursor:{sid}:result{call}"
            draft.append(
                "item",
                None,
                item={"type": "function_call_output", "call_id": cid, "output": "\n".join(body)},
            )
            continue
        rid = rid or f"{sid}:txt{len(draft.entries)}"
        if kind == "thinking":
            item = {
                "type": "reasoning",
                "summary": [{"type": "summary_text", "text": "\n".join(body)}],
            }
        elif kind == "call":
            args = dict(x.split("=", 1) for x in body if "=" in x)
            cid = f"cursor:{sid}:call{call}"
            call += 1
            pending.append(cid)
            item = {"type": "function_call", "call_id": cid, "name": head,
                    "arguments": json.dumps(args, ensure_ascii=False)}  # fmt: skip
        else:
            item = text_message("assistant", "\n".join(body).strip())
        draft.append("item", None, item=item, response=rid)
    if rid:
        draft.append("response", None, response_id=rid, status="completed")
        draft.counts["responses"] += 1
