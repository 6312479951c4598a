"""Context algorithm, canonical request and request hash (spec §4).

``build_context(path)`` gives the settings, items and entries the model saw
at the end of ``path``; ``canonical_request`` encodes them as an Open
Responses request; ``request_hash`` is ``sha256:`` + SHA-256 of its RFC 8785
form.  ``request_context`` rebuilds the request a ``response`` answered.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from trajset.schemas.openresponses import encode_item, encode_text_format, encode_tool, tool_name

from .errors import ContextError
from .jsonio import content_hash
from .session import Entry, Session

JSON = Any


@dataclass
class Settings:
    """Request settings in force (spec §4.1); tools are kept as stored."""

    model: str = ""
    instructions: str | None = None
    reasoning_effort: str | None = None
    reasoning_summary: str | None = None
    text_format: JSON = None
    text_verbosity: str | None = None
    tools: list[JSON] = field(default_factory=list)
    extra: dict[str, JSON] = field(default_factory=dict)

    def copy(self) -> Settings:
        return Settings(
            self.model,
            self.instructions,
            self.reasoning_effort,
            self.reasoning_summary,
            copy.deepcopy(self.text_format),
            self.text_verbosity,
            list(self.tools),
            dict(self.extra),
        )

    def apply(self, cfg: JSON) -> Settings:
        """A new ``Settings`` with the ``config`` entry body ``cfg`` applied."""
        s = Settings() if cfg.replace else self.copy()
        if cfg.model:
            s.model = cfg.model
        if cfg.instructions is not None:
            s.instructions = cfg.instructions
        if (r := cfg.reasoning) is not None:
            s.reasoning_effort, s.reasoning_summary = (
                r.get("effort") or None,
                r.get("summary") or None,
            )
        if (t := cfg.text) is not None:
            s.text_format, s.text_verbosity = t.get("format"), t.get("verbosity") or None
        if cfg.tools_removed:
            gone = set(cfg.tools_removed)
            s.tools = [t for t in s.tools if tool_name(t) not in gone]
        for tool in cfg.tools_added or ():
            name = tool_name(tool)
            if name:
                s.tools = [t for t in s.tools if tool_name(t) != name]
            s.tools.append(tool)
        for key, value in (cfg.extra or {}).items():
            if value is None:
                s.extra.pop(key, None)
            else:
                s.extra[key] = value
        return s

    @classmethod
    def from_json(cls, data: JSON) -> Settings:
        """Decode the settings-JSON form (a compaction checkpoint, §4.6)."""
        data = data if isinstance(data, dict) else {}
        r = data.get("reasoning") or {}
        t = data.get("text") or {}
        return cls(
            model=data.get("model") or "",
            instructions=data.get("instructions"),
            reasoning_effort=r.get("effort") or None,
            reasoning_summary=r.get("summary") or None,
            text_format=t.get("format"),
            text_verbosity=t.get("verbosity") or None,
            tools=list(data.get("tools") or []),
            extra={k: v for k, v in (data.get("extra") or {}).items() if v is not None},
        )

    def reasoning_json(self) -> JSON:
        if not self.reasoning_effort and not self.reasoning_summary:
            return None
        return {"effort": self.reasoning_effort, "summary": self.reasoning_summary}

    def text_json(self) -> JSON:
        if self.text_format is None and not self.text_verbosity:
            return None
        out: dict[str, JSON] = {"format": encode_text_format(self.text_format)}
        if self.text_verbosity:
            out["verbosity"] = self.text_verbosity
        return out

    def to_json(self) -> dict[str, JSON]:
        """The settings-JSON form (§4.6), as in the context fixtures."""
        out: dict[str, JSON] = {}
        if self.model:
            out["model"] = self.model
        if self.instructions:
            out["instructions"] = self.instructions
        if (r := self.reasoning_json()) is not None:
            out["reasoning"] = r
        if (t := self.text_json()) is not None:
            out["text"] = t
        if self.tools:
            out["tools"] = [encode_tool(t) for t in self.tools]
        if self.extra:
            out["extra"] = dict(self.extra)
        return out


@dataclass
class Context:
    """What the model saw at the end of a path (spec §4.2)."""

    settings: Settings
    items: list[JSON]  # typed re-encodings
    entries: list[Entry]
    item_entries: list[str]
    checkpoint: Settings | None = (
        None  # the compaction checkpoint, when the context starts with one
    )

    def to_json(self) -> dict[str, JSON]:
        return {
            "settings": self.settings.to_json(),
            "items": self.items,
            "entries": [e.id for e in self.entries],
            "item_entries": self.item_entries,
        }


def _contributed_item(entry: Entry) -> JSON:
    if entry.type == "item":
        return entry.body.item  # type: ignore[attr-defined]
    if entry.type == "branch_summary":
        return entry.body.summary  # type: ignore[attr-defined]
    return None


def build_context(path: list[Entry]) -> Context:
    """Settings, items and entries at the end of ``path`` (root first)."""
    k_pos = -1
    for i in range(len(path) - 1, -1, -1):
        if path[i].type == "compaction":
            k_pos = i
            break
    entries: list[Entry] = []
    items: list[JSON] = []
    item_entries: list[str] = []

    def add(e: Entry) -> None:
        entries.append(e)
        item = _contributed_item(e)
        if item is not None:
            items.append(encode_item(item))
            item_entries.append(e.id)

    if k_pos < 0:
        settings = Settings()
        for e in path:
            if e.type == "config":
                settings = settings.apply(e.body)
            add(e)
        return Context(settings, items, entries, item_entries)

    k = path[k_pos]
    first_kept = k.body.first_kept  # type: ignore[attr-defined]
    start = next((i for i in range(k_pos) if path[i].id == first_kept), -1)
    if start < 0:
        raise ContextError(
            f"compaction {k.id} names first_kept {first_kept!r}, which is not on the path before it",
            entry_id=k.id,
        )
    checkpoint = Settings.from_json(k.body.config)  # type: ignore[attr-defined]
    settings = checkpoint.copy()
    entries.append(k)
    items.append(encode_item(k.body.summary))  # type: ignore[attr-defined]
    item_entries.append(k.id)
    for e in path[start:k_pos]:
        add(e)  # configs in the kept window are already in the checkpoint
    for e in path[k_pos + 1 :]:
        if e.type == "config":
            settings = settings.apply(e.body)
        add(e)
    return Context(settings, items, entries, item_entries, checkpoint=checkpoint)


def canonical_request(settings: Settings, items: list[JSON]) -> dict[str, JSON]:
    """The Open Responses request for ``settings`` + ``items`` (spec §4.3)."""
    req: dict[str, JSON] = {}
    if settings.model:
        req["model"] = settings.model
    if items:
        req["input"] = items
    if settings.tools:
        req["tools"] = [encode_tool(t) for t in settings.tools]
    if (t := settings.text_json()) is not None:
        req["text"] = t
    if (r := settings.reasoning_json()) is not None:
        req["reasoning"] = r
    if settings.instructions:
        req["instructions"] = settings.instructions
    req["store"] = False
    for key, value in settings.extra.items():
        req.setdefault(key, value)
    return req


def request_hash(request: JSON) -> str:
    """``sha256:`` + hex SHA-256 of the RFC 8785 form of ``request``."""
    return content_hash(request)


def request_context(session: Session, response_id: str) -> Context:
    """The context a ``response`` entry answered (spec §4.5, v0.0.5 rule)."""
    entry = session.by_id[response_id]
    path = session.path(response_id)[:-1]
    rid = entry.body.response_id  # type: ignore[attr-defined]
    while path and path[-1].type == "item" and path[-1].body.response == rid:  # type: ignore[attr-defined]
        path.pop()
    return build_context(path)


@dataclass(frozen=True)
class HashCheck:
    entry_id: str
    status: str  # "ok" | "no_hash" | "mismatch" | "error"
    recorded: str = ""
    computed: str = ""
    message: str = ""


def verify_response(session: Session, entry_id: str) -> HashCheck:
    """Rebuild the request of one response entry and compare hashes."""
    recorded = session.by_id[entry_id].body.request_hash  # type: ignore[attr-defined]
    if not recorded:
        return HashCheck(entry_id, "no_hash")
    try:
        ctx = request_context(session, entry_id)
        computed = request_hash(canonical_request(ctx.settings, ctx.items))
    except (ContextError, ValueError) as exc:
        return HashCheck(entry_id, "error", recorded, message=str(exc))
    return HashCheck(entry_id, "ok" if computed == recorded else "mismatch", recorded, computed)
