"""Context algorithm, canonical request and request hash (spec §4).

``build_context(path)`` gives the settings, items and entries the model saw
at the end of ``path``; ``canonical_request`` encodes them as an Open
Responses request; ``request_hash`` is ``sha256:`` + SHA-256 of its RFC 8785
form.  ``request_context`` rebuilds the request a ``response`` answered.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from trajset.schemas.context import Context, Settings
from trajset.schemas.entries import (
    BranchSummaryEntry,
    CompactionEntry,
    ConfigEntry,
    ItemEntry,
    ResponseEntry,
)
from trajset.schemas.session import Entry, Session
from trajset.schemas.tools import encode_tool

from ..errors import ContextError
from ..jsonio import content_hash

JSON = Any


def _contributes(entry: Entry) -> bool:
    """Whether the entry's item (or summary) is in the context."""
    return isinstance(entry.body, ItemEntry | BranchSummaryEntry)


def _last_compaction(path: list[Entry]) -> int:
    for i in range(len(path) - 1, -1, -1):
        if path[i].type == "compaction":
            return i
    return -1


def build_context(path: list[Entry]) -> Context:
    """Settings, items and entries at the end of ``path`` (root first)."""
    k_pos = _last_compaction(path)
    entries: list[Entry] = []
    items: list[JSON] = []
    item_entries: list[str] = []

    def add(e: Entry) -> None:
        entries.append(e)
        if _contributes(e):
            items.append(e.encoded_item())
            item_entries.append(e.id)

    if k_pos < 0:
        settings = Settings()
        for e in path:
            if isinstance(e.body, ConfigEntry):
                settings = settings.apply(e.body)
            add(e)
        return Context(settings, items, entries, item_entries)

    k = path[k_pos]
    assert isinstance(k.body, CompactionEntry)
    first_kept = k.body.first_kept
    start = next((i for i in range(k_pos) if path[i].id == first_kept), -1)
    if start < 0:
        raise ContextError(
            f"compaction {k.id} names first_kept {first_kept!r}, which is not on the path before it",
            entry_id=k.id,
        )
    checkpoint = Settings.from_json(k.body.config)
    settings = checkpoint.copy()
    entries.append(k)
    items.append(k.encoded_item())
    item_entries.append(k.id)
    for e in path[start:k_pos]:
        add(e)  # configs in the kept window are already in the checkpoint
    for e in path[k_pos + 1 :]:
        if isinstance(e.body, ConfigEntry):
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
    body = session.by_id[response_id].body
    assert isinstance(body, ResponseEntry)
    path = session.path(response_id)[:-1]
    while (
        path and isinstance(last := path[-1].body, ItemEntry) and last.response == body.response_id
    ):
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
    body = session.by_id[entry_id].body
    recorded = body.request_hash if isinstance(body, ResponseEntry) else None
    if not recorded:
        return HashCheck(entry_id, "no_hash")
    try:
        ctx = request_context(session, entry_id)
        computed = request_hash(canonical_request(ctx.settings, ctx.items))
    except (ContextError, ValueError) as exc:
        return HashCheck(entry_id, "error", recorded, message=str(exc))
    return HashCheck(entry_id, "ok" if computed == recorded else "mismatch", recorded, computed)
