"""A session in memory: the header, the entries and the tree they form (specs/agentsession.md §2-§3).

``Session`` is the one model every store reader converts into (DESIGN §2):
the header, the entries in file order with their typed bodies, where the
session came from (``source``, ``source_format``), and the tree helpers
(children, path, leaves, forks, labels, name, current leaf).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError, field_validator

from .entries import (
    Derived,
    EntryUnion,
    InfoEntry,
    ItemEntry,
    LabelEntry,
    Model,
    validate_entry,
)
from .openresponses import encode_item
from .timestamps import parse_rfc3339

JSON = Any

FORMAT = "agentsession/0.2"
FORMAT_RE = re.compile(r"^agentsession/(\d+)\.(\d+)$")


class Harness(Model):
    name: str | None = None
    version: str | None = None


class Header(Model):
    type: str
    format: str
    id: str
    created_at: str
    payload: str
    harness: Harness | None = None
    records: list[str] | None = None
    cwd: str | None = None
    parent_session: str | None = None
    spawned_by: str | None = None
    media: str | None = None

    @field_validator("type")
    @classmethod
    def _type(cls, v: str) -> str:
        if v != "session":
            raise ValueError('the first line must be a header with "type":"session"')
        return v

    @field_validator("format")
    @classmethod
    def _format(cls, v: str) -> str:
        m = FORMAT_RE.match(v)
        if not m:
            raise ValueError(f"format {v!r} is not agentsession/<major>.<minor>")
        if int(m.group(1)) != 0:
            raise ValueError(f"unsupported format {v!r}: this reader reads agentsession/0.x")
        return v

    @field_validator("id")
    @classmethod
    def _id(cls, v: str) -> str:
        if not v:
            raise ValueError("header has no id")
        return v

    @field_validator("created_at")
    @classmethod
    def _created(cls, v: str) -> str:
        parse_rfc3339(v)
        return v

    @field_validator("payload")
    @classmethod
    def _payload(cls, v: str) -> str:
        if not v.startswith("openresponses/"):
            raise ValueError(f"payload {v!r} does not start with openresponses/")
        return v


def validate_header(raw: JSON) -> Header:
    if not isinstance(raw, dict):
        raise ValueError("header line is not a JSON object")
    try:
        return Header.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        msg = err["msg"].removeprefix("Value error, ")
        raise ValueError(f"header {where}: {msg}" if where else f"header: {msg}") from None


@dataclass(slots=True)
class Entry:
    """One entry: the parsed line (``raw``, original member order) and its typed body."""

    raw: dict[str, JSON]
    body: EntryUnion
    line: int
    index: int
    #: what checking the body worked out (``validate_entry``), or this entry when first asked
    derived: Derived = field(default_factory=Derived, repr=False, compare=False)

    @classmethod
    def of(cls, raw: JSON, line: int, index: int) -> Entry:
        """The entry of a line's object, its body checked by ``validate_entry`` (``ValueError``
        when it does not decode) and what the checks worked out kept."""
        derived = Derived()
        body = validate_entry(raw, derived)
        return cls(raw, body, line, index, derived)

    @property
    def id(self) -> str:
        return self.body.id

    @property
    def parent(self) -> str | None:
        return self.body.parent or None

    @property
    def type(self) -> str:
        return self.body.type

    def seconds(self) -> float:
        """The entry's ``ts`` as seconds since the epoch (parsed once: an entry lies on every
        trajectory through it)."""
        if self.derived.seconds is None:
            self.derived.seconds = parse_rfc3339(self.body.ts).timestamp()
        return self.derived.seconds

    def encoded_item(self) -> JSON:
        """The typed re-encoding (``encode_item``) of the entry's item, or of its summary
        (compaction, branch summary), made once: an entry lies on every trajectory through
        it, and each one's context and steps take its item.  Shared, so never changed."""
        if self.derived.item is None:
            body = self.body
            item = body.item if isinstance(body, ItemEntry) else getattr(body, "summary", None)
            self.derived.item = encode_item(item)
        return self.derived.item


@dataclass(slots=True)
class Truncation:
    """The final line that did not decode: kept out of the session, reported."""

    line: int
    text: str
    reason: str


@dataclass(frozen=True, slots=True)
class Issue:
    """Something a reader found wrong but not fatal (a gap in a log): reported, not exported.
    ``source`` names the file when it is not the session's own (one file of many)."""

    kind: str
    line: int | None
    message: str
    source: str = ""


@dataclass
class Session:
    """One session tree; ``source_format`` names the store it was converted from.

    ``issues`` and ``counts`` are what a converting reader reports beside the
    tree (an incomplete log; records of unknown types, by type).
    """

    header: Header
    header_raw: dict[str, JSON]
    entries: list[Entry]
    source: str = ""
    truncation: Truncation | None = None
    source_format: str = "agentsession"
    issues: list[Issue] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    #: (kind, value) of each identity its reader met while converting it (``SessionDraft.meet``)
    met: list[tuple[str, str]] = field(default_factory=list)
    #: the store files it was read from, its own first (``SessionDraft.files``)
    files: tuple[str, ...] = ()
    by_id: dict[str, Entry] = field(default_factory=dict)
    children_of: dict[str, list[str]] = field(default_factory=dict)
    _labels: dict[str, str] | None = field(default=None, init=False, repr=False, compare=False)
    _name: str | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.by_id = {e.id: e for e in self.entries}
        self.children_of = {}
        for e in self.entries:
            self.children_of.setdefault(e.parent or "", []).append(e.id)

    def replace(self, header: Header, header_raw: dict[str, JSON], entries: list[Entry]) -> Session:
        """The same session with new content (redaction); source and truncation kept."""
        return Session(
            header,
            header_raw,
            entries,
            self.source,
            self.truncation,
            self.source_format,
            self.issues,
            self.counts,
            self.met,
            self.files,
        )

    # -- tree helpers (spec §3.3) ---------------------------------------------

    @property
    def id(self) -> str:
        return self.header.id

    def children(self, entry_id: str | None) -> list[str]:
        """Children in file order; ``None``/``""`` gives the roots."""
        return self.children_of.get(entry_id or "", [])

    def roots(self) -> list[str]:
        return self.children("")

    def path(self, entry_id: str) -> list[Entry]:
        """Root first, ``entry_id`` last."""
        out: list[Entry] = []
        cur: str | None = entry_id
        while cur:
            e = self.by_id[cur]
            out.append(e)
            cur = e.parent
        out.reverse()
        return out

    def leaves(self) -> list[str]:
        """Every childless entry, in file order."""
        return [e.id for e in self.entries if e.id not in self.children_of]

    def forks(self) -> list[str]:
        """Entries with two or more children (roots are never a fork)."""
        return [e.id for e in self.entries if len(self.children_of.get(e.id, ())) >= 2]

    def labels(self) -> dict[str, str]:
        """Session-wide label map: replay ``label`` entries, ``null`` clears.

        Computed once (every document of the session carries it); a copy is returned."""
        if self._labels is None:
            out: dict[str, str] = {}
            for e in self.entries:
                if isinstance(e.body, LabelEntry):
                    if e.body.label is None:
                        out.pop(e.body.target, None)
                    else:
                        out[e.body.target] = e.body.label
            self._labels = out
        return dict(self._labels)

    def name(self) -> str:
        """Name of the last ``info`` entry with a non-empty name (computed once)."""
        if self._name is None:
            self._name = next(
                (
                    e.body.name
                    for e in reversed(self.entries)
                    if isinstance(e.body, InfoEntry) and e.body.name
                ),
                "",
            )
        return self._name

    def last_id(self) -> str:
        return self.entries[-1].id if self.entries else ""

    def current_leaf(self) -> str:
        """The reserved ``leaf`` label's target when in force, else the last entry."""
        leaf = ""
        for e in self.entries:
            if not isinstance(e.body, LabelEntry):
                continue
            target, label = e.body.target, e.body.label
            if label == "leaf" and target in self.by_id:
                leaf = target
            elif label is None and target == leaf:
                leaf = ""
        return leaf or self.last_id()

    def subtree_ids(self, entry_id: str) -> Iterator[str]:
        stack = [entry_id]
        while stack:
            cur = stack.pop()
            yield cur
            stack.extend(self.children_of.get(cur, ()))

    # -- writing -----------------------------------------------------------------

    def lines(self) -> Iterator[str]:
        """The session as JSONL lines (header first), JSON-equal to what was read."""
        yield json.dumps(self.header_raw, ensure_ascii=False, separators=(",", ":"))
        for e in self.entries:
            yield json.dumps(e.raw, ensure_ascii=False, separators=(",", ":"))

    def write(self, path: Path) -> None:
        path.write_text("".join(line + "\n" for line in self.lines()), encoding="utf-8")
