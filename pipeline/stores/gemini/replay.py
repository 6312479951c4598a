"""A chat's records replayed into a tree of nodes (specs/gemini-cli.md §2.2-§2.4, §3 Branches).

Records are upserts: a message's first appearance fixes its place (its parent is
the node the live path ended in then), its last copy gives its content, and a
tool call keeps the result of its first copy in a terminal status (a later
masking rewrite is history).  ``$rewindTo`` cuts the live view: the rewound
message and what followed stay where they are, an abandoned branch under a
``rewind`` node, and the next message hangs from the rewound message's parent.
A ``$set.messages`` checkpoint is classified against the live view: a start
adds the environment message; a normalisation changes nothing; a rollback cuts
the view (a fork when it drops model output, else the dropped prompt is marked
rolled back and the branch goes on); a compaction is a node of its own, its kept
tail copies flagged copied; a replacement continues after a node saying so.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from trajset.schemas.session import Issue

from ..jsonl import json_kind

JSON = Any
#: the id of the environment-context message that heads every v0.44+ main history
ENVIRONMENT_ID = "d04923d38bb0f6017037e74183378ef4"
IGNORED_PREFIXES = ("/", "?", "<session_context>", "<hook_context>")
CONTINUE = ("Please continue.", "System: Please continue.")
TERMINAL = ("success", "error", "cancelled")


def text_of(content: JSON) -> str:
    """The visible text of a record's content (a string, or parts without thoughts)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "".join(
        str(p.get("text") or "")
        for p in content
        if isinstance(p, dict) and isinstance(p.get("text"), str) and not p.get("thought")
    )


def is_tool_response(record: JSON) -> bool:
    """A ``user`` record that only carries ``functionResponse`` parts (v0.44+)."""
    content = record.get("content") if isinstance(record, dict) else None
    return (
        isinstance(content, list)
        and bool(content)
        and all(isinstance(p, dict) and "functionResponse" in p for p in content)
    )


#: how the CLI renders a function response as text (``partToString``): a tool's output
#: some versions record as a ``user`` record (specs/gemini-cli.md, corrected)
RENDERED_RESPONSE = re.compile(r"^\[Function Response: ([^\]]*)\]")


def rendered_response(record: JSON) -> tuple[str, str] | None:
    """``(tool name, output)`` of a ``user`` record that is a function response rendered
    as text (``[Function Response: read_many_files]…``), else None."""
    if not isinstance(record, dict) or record.get("type") != "user":
        return None
    text = text_of(record.get("content"))
    m = RENDERED_RESPONSE.match(text)
    return (m.group(1), text[m.end() :]) if m else None


def is_context(record: JSON) -> bool:
    """Not a turn of the conversation: the environment message, UI lines (info, warning,
    error), slash commands and hooks, tool-response records, the injected "Please continue"."""
    if not isinstance(record, dict):
        return True
    kind = record.get("type")
    if record.get("id") == ENVIRONMENT_ID or kind in ("info", "warning", "error"):
        return True
    if kind != "user":
        return False
    text = text_of(record.get("content")).strip()
    if is_tool_response(record) or rendered_response(record) is not None:
        return True
    return text.startswith(IGNORED_PREFIXES) or text in CONTINUE


@dataclass
class Message:
    """One message id: its last copy, and each call's first terminal copy."""

    id: str
    record: dict[str, JSON]
    line: int
    calls: dict[str, dict[str, JSON]] = field(default_factory=dict)
    rewrites: dict[str, list[JSON]] = field(default_factory=dict)  # call id -> later results
    copied: bool = False  # a compaction's kept-tail copy
    rolled_back: bool = False  # dropped by a rollback that dropped no model output
    copies: int = 0

    def update(self, record: dict[str, JSON], line: int) -> None:
        self.copies += 1
        self.record = record
        for call in record.get("toolCalls") or []:
            if not isinstance(call, dict) or not isinstance(call.get("id"), str):
                continue
            cid = call["id"]
            kept = self.calls.get(cid)
            if kept is None or kept.get("status") not in TERMINAL:
                self.calls[cid] = call
            elif call.get("result") != kept.get("result"):
                self.rewrites.setdefault(cid, []).append(call.get("result"))


@dataclass
class Node:
    """A place in the tree: a message, or a record (rewind, checkpoint, compaction, ...)."""

    kind: str  # message | rewind | checkpoint | compaction | replaced | summary
    key: str
    parent: str | None
    line: int
    message: Message | None = None
    body: dict[str, JSON] = field(default_factory=dict)


@dataclass
class Replay:
    """The replayed chat: its nodes in the order they appeared, and what the live view is."""

    nodes: list[Node] = field(default_factory=list)
    messages: dict[str, Message] = field(default_factory=dict)
    live: list[str] = field(default_factory=list)  # message ids, in order
    before: dict[str, str | None] = field(default_factory=dict)  # message id -> parent node
    tail: str | None = None
    meta: list[JSON] = field(default_factory=list)  # $set lines other than messages
    issues: list[Issue] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)

    def node(self, kind: str, key: str, line: int, **body: JSON) -> Node:
        n = Node(kind, key, self.tail, line, body=body)
        self.nodes.append(n)
        self.tail = key
        return n

    def message(self, record: dict[str, JSON], line: int, copied: bool = False) -> None:
        mid = record["id"]
        known = self.messages.get(mid)
        if known is not None:
            known.update(record, line)
            self.counts["copies_of_a_known_id"] += 1
            return
        m = Message(mid, record, line, copied=copied)
        m.update(record, line)
        self.messages[mid] = m
        self.before[mid] = self.tail
        self.live.append(mid)
        n = self.node("message", mid, line)
        n.message = m

    def rewind(self, target: JSON, line: int) -> None:
        if target not in self.live:  # an unknown id: back to the first prompt
            target = next((i for i in self.live if not is_context(self.messages[i].record)), None)
            self.counts["rewinds_to_an_unknown_id"] += 1
            if target is None:
                return
        cut = self.live.index(target)
        self.node("rewind", f"rewind:{line}", line, to=target, dropped=self.live[cut:])
        self.live = self.live[:cut]
        self.tail = self.before[target]
        self.counts["rewinds"] += 1


def replay(records: list[tuple[int, JSON]]) -> Replay:
    """The chat's tree from its records (after the metadata line)."""
    r = Replay()
    for line, rec in records:
        if not isinstance(rec, dict):
            r.counts["records_not_objects"] += 1
        elif isinstance(rec.get("$rewindTo"), str):
            r.rewind(rec["$rewindTo"], line)
        elif isinstance(rec.get("$set"), dict):
            _set(r, rec["$set"], line)
        elif isinstance(rec.get("id"), str):
            r.message(rec, line)
        else:
            r.counts["records_unknown"] += 1
            r.node("unknown", f"unknown:{line}", line, record=rec)
            if wrong := [k for k in ("id", "$set", "$rewindTo") if k in rec]:
                r.issues.append(Issue("bad_line", line, f"{wrong[0]} is {json_kind(rec[wrong[0]])},"
                                      " of no type Gemini CLI writes; the record is kept as it "
                                      "is, not read"))  # fmt: skip
    return r


def _set(r: Replay, patch: dict[str, JSON], line: int) -> None:
    rest = {k: v for k, v in patch.items() if k not in ("messages", "lastUpdated")}
    if rest:
        r.meta.append({"line": line, **rest})
    if isinstance(patch.get("summary"), str):
        r.node("summary", f"summary:{line}", line, name=patch["summary"])
    if isinstance(patch.get("messages"), list):
        checkpoint(r, [m for m in patch["messages"] if isinstance(m, dict)], line)


def _plain(r: Replay, ids: list[str], records: dict[str, JSON]) -> list[str]:
    """The ids that are turns of the conversation, each once, in order."""
    out: list[str] = []
    for i in ids:
        rec = r.messages[i].record if i in r.messages else records.get(i)
        if not i.endswith("_response") and not is_context(rec) and i not in out:
            out.append(i)
    return out


def checkpoint(r: Replay, listed: list[dict[str, JSON]], line: int) -> None:
    """A ``$set.messages`` whole-history checkpoint (§2.3), classified against the live view."""
    records = {m["id"]: m for m in listed if isinstance(m.get("id"), str)}
    ids = list(records)
    live, cp = _plain(r, r.live, records), _plain(r, ids, records)
    if any(_snapshot(m) for m in listed) and set(cp) - set(r.messages):
        return _compaction(r, listed, line)
    if not cp and not live:
        kind = "start"
        for m in listed:
            if m["id"] not in r.messages and isinstance(m.get("id"), str):
                r.message(m, line)
    elif cp == live:
        kind = "normalisation"
    elif cp == live[: len(cp)]:
        kind = "rollback"
        _rollback(r, live, len(cp), line)
    elif not set(ids) & set(r.messages):
        kind = "replacement"
        r.node("replaced", f"replaced:{line}", line, ids=ids)
        for m in listed:
            r.message(m, line)
        r.counts["history_replacements"] += 1
        return
    else:
        kind = "unclassified"
    r.counts[f"checkpoints/{kind}"] += 1
    r.node("checkpoint", f"checkpoint:{line}", line, checkpoint=kind, ids=ids)


def _rollback(r: Replay, live: list[str], kept: int, line: int) -> None:
    """The live view cut after its first ``kept`` turns: a fork when model output is dropped,
    else the dropped records are rolled back and the branch goes on after them."""
    first = live[kept]
    cut = r.live.index(first)
    dropped = r.live[cut:]
    r.live = r.live[:cut]
    if any(r.messages[i].record.get("type") == "gemini" for i in dropped):
        r.node("rewind", f"rollback:{line}", line, to=first, dropped=dropped, rollback=True)
        r.tail = r.before[first]
        r.counts["rollbacks_dropping_model_output"] += 1
        return
    for i in dropped:
        r.messages[i].rolled_back = True
    r.counts["rollbacks_of_failed_requests"] += 1


def _snapshot(m: JSON) -> bool:
    return m.get("type") == "user" and "<state_snapshot>" in text_of(m.get("content"))


def _compaction(r: Replay, listed: list[dict[str, JSON]], line: int) -> None:
    """A compression: a node with the ``<state_snapshot>`` summary under the live path's end,
    then the acknowledgement and the kept tail as copies; the view is the checkpoint's."""
    at = next(i for i, m in enumerate(listed) if _snapshot(m))
    summary = listed[at]
    r.node("compaction", f"compaction:{line}", line, summary=summary, dropped=list(r.live))
    r.live = [m["id"] for m in listed[:at] if m["id"] in r.messages]
    for m in listed[at + 1 :]:
        if m["id"] not in r.messages:
            r.message(m, line, copied=True)
    r.counts["compactions"] += 1
