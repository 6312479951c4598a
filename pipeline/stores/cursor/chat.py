"""A Cursor CLI store's roots as one tree of entries (specs/cursor.md §2, §5, "Mapping").

Each root's ordered message list is inserted into a trie: an entry is a list prefix, so
the roots' shared history is one path, and a root whose list leaves the stored path at
some message is a fork there (a rewind or an edited prompt: the abandoned branch and its
pairs).  A root whose summary blob changed is a compaction: its list, less the system
prompt and the summary, continues under a compaction entry.  The latest root's last entry
is the reserved ``leaf``.  The messages are the Vercel AI SDK ``ModelMessage``s the model was
sent: the system prompt, user messages (``<user_info>`` context hidden), an assistant
message per model call (reasoning, text, tool calls; no usage is recorded), a tool message
per call.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from trajset.schemas.entries import TOOL_FAILED
from trajset.schemas.openresponses import text_message

from ..draft import SessionDraft
from .store import Root, Store

JSON = Any
ROOT = "config"
#: a Shell tool's result that says its command failed
_EXIT = re.compile(r"\AExit code: (-?\d+)")


@dataclass
class Trie:
    """The entries made so far: node key (parent entry, blob) -> (first, last entry id)."""

    draft: SessionDraft
    store: Store
    nodes: dict[tuple[str, str], tuple[str, str]] = field(default_factory=dict)
    seen: Counter[str] = field(default_factory=Counter)
    counts: Counter[str] = field(default_factory=Counter)
    model: str = ""
    instructions: str = ""

    def path(self, base: str, blobs: tuple[str, ...]) -> str:
        """The entries of ``blobs`` below ``base`` (made where missing); the last one's id."""
        cur = base
        for blob in blobs:
            key = (cur, blob)
            if key not in self.nodes:
                n = self.seen[blob]
                self.seen[blob] += 1
                eid = blob if n == 0 else f"{blob}:{n}"
                self.nodes[key] = self.entries(blob, eid, cur)
            cur = self.nodes[key][1]
        return cur

    def entries(self, blob: str, eid: str, parent: str) -> tuple[str, str]:
        m = self.store.message(blob)
        role = m.get("role") if m else None
        if role == "system":
            self.instructions = _text(m.get("content") if m else "")
            last = self.draft.add("config", eid, parent, None, instructions=self.instructions)
            return last, last
        if role == "user" and m is not None:
            last = self.draft.add("item", eid, parent, None, **_user(m))
            return last, last
        if role == "assistant" and m is not None:
            return self.assistant(m, eid, parent)
        if role == "tool" and m is not None:
            return self.tool(m, eid, parent)
        self.counts["blobs_unknown"] += 1
        last = self.draft.add("cursor:blob", eid, parent, None, role=role)
        return last, last

    def assistant(self, m: dict[str, JSON], eid: str, parent: str) -> tuple[str, str]:
        cur, first = parent, ""
        for n, (item, extra) in enumerate(_model_items(m)):
            cur = self.draft.add("item", eid if n == 0 else f"{eid}:{n}", cur, None, item=item,
                                 response=eid, **extra)  # fmt: skip
            first = first or cur
        model = _model(m) or self.model
        self.model = model or self.model
        body: dict[str, JSON] = {"response_id": eid, "status": "completed"}
        if model:
            body["model"] = model
        last = self.draft.add("response", f"{eid}:response", cur, None, **body)
        self.counts["responses"] += 1
        return first or last, last

    def tool(self, m: dict[str, JSON], eid: str, parent: str) -> tuple[str, str]:
        cur, first = parent, ""
        results = [
            p
            for p in m.get("content") or []
            if isinstance(p, dict) and p.get("type") == "tool-result"
        ]
        high = ((m.get("providerOptions") or {}).get("cursor") or {}).get("highLevelToolCallResult")
        for n, p in enumerate(results):
            text = _text(p.get("result"))
            code = _EXIT.match(text)
            failed = p.get("isError") is True or (code is not None and int(code.group(1)) != 0)
            item = {
                "type": "function_call_output",
                "call_id": str(p.get("toolCallId") or ""),
                "output": text,
            }
            extra: dict[str, JSON] = {TOOL_FAILED: True} if failed else {}
            if high is not None and n == 0:
                extra["cursor:result"] = high
            cur = self.draft.add(
                "item", eid if n == 0 else f"{eid}:{n}", cur, None, item=item, **extra
            )
            first = first or cur
        if not results:
            cur = self.draft.add("cursor:tool", eid, parent, None, message=m)
        return first or cur, cur


def _text(content: JSON) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(p.get("text") or "")
            for p in content
            if isinstance(p, dict) and p.get("type") == "text"
        )
    return "" if content is None else json.dumps(content, ensure_ascii=False)


def _user(m: dict[str, JSON]) -> dict[str, JSON]:
    content = m.get("content")
    parts: list[JSON] = []
    for p in content if isinstance(content, list) else [{"type": "text", "text": _text(content)}]:
        if not isinstance(p, dict):
            continue
        if p.get("type") == "text":
            parts.append({"type": "input_text", "text": str(p.get("text") or "")})
        elif p.get("type") == "image" and isinstance(p.get("image"), str):
            url = (
                p["image"]
                if p["image"].startswith("data:")
                else f"data:{p.get('mimeType') or 'image/png'};base64,{p['image']}"
            )
            parts.append({"type": "input_image", "image_url": url, "detail": "auto"})
    body: dict[str, JSON] = {"item": {"type": "message", "role": "user", "content": parts}}
    request = ((m.get("providerOptions") or {}).get("cursor") or {}).get("requestId")
    if request:
        body["cursor:request_id"] = request
    if "<user_info>" in _text(content):  # the harness's context, not a typed prompt
        body["visible"] = False
    return body


def _model_items(m: dict[str, JSON]) -> list[tuple[dict[str, JSON], dict[str, JSON]]]:
    out: list[tuple[dict[str, JSON], dict[str, JSON]]] = []
    for b in (
        _blocks(m)
        if isinstance(m.get("content"), list)
        else [{"type": "text", "text": _text(m.get("content"))}]
    ):
        kind = b.get("type") if isinstance(b, dict) else None
        if kind == "reasoning":
            item = {
                "type": "reasoning",
                "summary": [{"type": "summary_text", "text": str(b.get("text") or "")}],
            }
            out.append((item, {"cursor:signature": b["signature"]} if b.get("signature") else {}))
        elif kind == "redacted-reasoning":
            out.append(
                (
                    {
                        "type": "reasoning",
                        "summary": [],
                        "encrypted_content": str(b.get("data") or ""),
                    },
                    {},
                )
            )
        elif kind == "text" and b.get("text"):
            out.append((text_message("assistant", str(b["text"])), {}))
        elif kind == "tool-call":
            args = b.get("args")
            out.append(({"type": "function_call", "call_id": str(b.get("toolCallId") or ""),
                         "name": str(b.get("toolName") or ""),
                         "arguments": json.dumps(args if args is not None else {}, ensure_ascii=False)}, {}))  # fmt: skip
        elif isinstance(b, dict) and kind != "text":
            out.append(({"type": "cursor:part", "part": b}, {}))
    return out


def _blocks(m: dict[str, JSON]) -> list[JSON]:
    content = m.get("content")
    return content if isinstance(content, list) else []


def _model(m: dict[str, JSON]) -> str:
    for b in _blocks(m):
        name = (
            ((b.get("providerOptions") or {}).get("cursor") or {}).get("modelName")
            if isinstance(b, dict)
            else None
        )
        if isinstance(name, str) and name:
            return name
    name = ((m.get("providerOptions") or {}).get("cursor") or {}).get("modelName")
    return name if isinstance(name, str) else ""


def chat_entries(store: Store, draft: SessionDraft, start: str) -> Trie:
    """Every root of the store into ``draft``, in ``rowid`` order (see the module docstring)."""
    trie = Trie(draft, store, model=str(store.meta.get("lastUsedModel") or ""))
    draft.add("config", ROOT, None, start, **({"model": trie.model} if trie.model else {}))
    top = ROOT
    if isinstance(store.meta.get("name"), str) and store.meta["name"]:
        top = draft.add("info", "name", ROOT, None, name=store.meta["name"])
    bases: dict[str, str] = {}  # summary blob -> its compaction entry
    last_end, last_summary, latest_end = top, "", ""
    for root in store.roots:
        base, blobs = top, root.messages
        if root.summary:
            if root.summary not in bases:
                bases[root.summary] = _compaction(trie, root, last_end, store)
            base = bases[root.summary]
            blobs = tuple(b for b in blobs if b != root.summary and _role(store, b) != "system")
        last_end = trie.path(base, blobs)
        last_summary = root.summary
        if root.id == store.meta.get("latestRootBlobId"):
            latest_end = last_end
    del last_summary
    trie.counts["roots"] += len(store.roots)
    if latest_end:
        draft.label_leaf(_rewound(trie, latest_end), "leaf-label")
    return trie


def _role(store: Store, blob: str) -> str:
    m = store.message(blob)
    return str(m.get("role") or "") if m else ""


def _compaction(trie: Trie, root: Root, parent: str, store: Store) -> str:
    summary = store.message(root.summary) or {}
    item = {
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": _text(summary.get("content"))}],
    }
    config: dict[str, JSON] = {}
    if trie.model:
        config["model"] = trie.model
    if trie.instructions:
        config["instructions"] = trie.instructions
    trie.counts["compactions"] += 1
    return trie.draft.add("compaction", f"{root.id}:compaction", parent, None, first_kept=ROOT,
                          summary=item, config=config, **{"cursor:summary_blob": root.summary})  # fmt: skip


def _rewound(trie: Trie, end: str) -> str:
    """The latest root's end; when an older root went on past it (rewound, nothing sent
    yet), a ``cursor:rewind`` entry there, so the older tail is the abandoned branch."""
    if any(e.get("parent") == end for e in trie.draft.entries):
        trie.counts["rewinds_pending"] += 1
        return trie.draft.add("cursor:rewind", f"{end}:rewind", end, None)
    return end
