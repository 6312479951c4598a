"""Reading Agent Session Format files into a ``Session`` tree (spec §3).

A ``Session`` is the one in-memory model every store converts into: the
header, the entries in file order, and the tree helpers (children, path,
leaves, labels, name, current leaf).  Reading follows the reference exactly:
only the final line may be truncated, a bad line anywhere else fails the
file with a ``SessionReadError`` naming file, line and rule.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trajset.schemas.session import EntryBody, Header, validate_entry, validate_header

from .errors import SessionReadError
from .jsonio import loads_strict

JSON = Any


@dataclass(slots=True)
class Entry:
    """One entry: the parsed line (``raw``, original member order) and its typed view."""

    raw: dict[str, JSON]
    body: EntryBody
    line: int
    index: int

    @property
    def id(self) -> str:
        return self.body.id

    @property
    def parent(self) -> str | None:
        return self.body.parent or None

    @property
    def type(self) -> str:
        return self.body.type


@dataclass(slots=True)
class Truncation:
    """The final line that did not decode: kept out of the session, reported."""

    line: int
    text: str
    reason: str


@dataclass
class Session:
    header: Header
    header_raw: dict[str, JSON]
    entries: list[Entry]
    source: str = ""
    truncation: Truncation | None = None
    by_id: dict[str, Entry] = field(default_factory=dict)
    children_of: dict[str, list[str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.by_id = {e.id: e for e in self.entries}
        self.children_of = {}
        for e in self.entries:
            self.children_of.setdefault(e.parent or "", []).append(e.id)

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
        """Session-wide label map: replay ``label`` entries, ``null`` clears."""
        out: dict[str, str] = {}
        for e in self.entries:
            if e.type == "label":
                target, label = e.body.target, e.body.label  # type: ignore[attr-defined]
                if label is None:
                    out.pop(target, None)
                else:
                    out[target] = label
        return out

    def name(self) -> str:
        """Name of the last ``info`` entry with a non-empty name."""
        for e in reversed(self.entries):
            if e.type == "info" and e.body.name:  # type: ignore[attr-defined]
                return e.body.name  # type: ignore[attr-defined]
        return ""

    def last_id(self) -> str:
        return self.entries[-1].id if self.entries else ""

    def current_leaf(self) -> str:
        """The reserved ``leaf`` label's target when in force, else the last entry."""
        leaf = ""
        for e in self.entries:
            if e.type != "label":
                continue
            target, label = e.body.target, e.body.label  # type: ignore[attr-defined]
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


def read_session_text(text: str, source: str = "") -> Session:
    """Read one session from its JSONL text (spec §3.1)."""
    physical = text.split("\n")
    # The final element is what follows the last LF: "" when the file ends with LF.
    numbered: list[tuple[int, str, bool]] = []  # (line number, text, is_last_line)
    last_nonempty = -1
    for i, raw_line in enumerate(physical):
        line = raw_line.rstrip("\r")
        if line:
            last_nonempty = i
        numbered.append((i + 1, line, False))
    if last_nonempty < 0:
        raise SessionReadError("the file holds no header line", rule="empty", source=source, line=1)
    # "No byte follows this line's LF": the only thing after it is the empty tail of split.
    tail_is_empty = last_nonempty == len(physical) - 1 or (
        last_nonempty == len(physical) - 2 and physical[-1] == ""
    )

    header: Header | None = None
    header_raw: dict[str, JSON] = {}
    entries: list[Entry] = []
    seen: set[str] = set()
    truncation: Truncation | None = None
    for lineno, line, _ in numbered:
        if not line:
            continue
        if header is None:
            try:
                header_raw = loads_strict(line)
                header = validate_header(header_raw)
            except ValueError as exc:
                rule = "unsupported_format" if "format" in str(exc) else "bad_header"
                raise SessionReadError(str(exc), rule=rule, source=source, line=lineno) from None
            continue
        is_final = lineno - 1 == last_nonempty and tail_is_empty
        try:
            raw = loads_strict(line)
            body = validate_entry(raw)
        except ValueError as exc:
            reason = _decode_reason(exc)
            if is_final:
                truncation = Truncation(lineno, line, reason)
                break
            raise SessionReadError(
                f"line does not decode ({reason}); only a file's final line may be cut short",
                rule="bad_line",
                source=source,
                line=lineno,
            ) from None
        if body.id in seen:
            raise SessionReadError(
                f"duplicate entry id {body.id!r}",
                rule="duplicate_id",
                source=source,
                line=lineno,
                entry_id=body.id,
            )
        if body.parent and body.parent not in seen:
            raise SessionReadError(
                f"no such entry: parent {body.parent!r} has not appeared on an earlier line",
                rule="unknown_parent",
                source=source,
                line=lineno,
                entry_id=body.id,
            )
        seen.add(body.id)
        entries.append(Entry(raw=raw, body=body, line=lineno, index=len(entries)))
    assert header is not None
    return Session(
        header=header, header_raw=header_raw, entries=entries, source=source, truncation=truncation
    )


def _decode_reason(exc: ValueError) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"invalid JSON ({exc.msg}, column {exc.colno})"
    return str(exc)


def read_session(path: str | Path) -> Session:
    """Read one ``.jsonl`` session file."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise SessionReadError(
            f"cannot read file: {exc.strerror}", rule="io", source=str(p)
        ) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise SessionReadError(
            "file is not UTF-8", rule="encoding", source=str(p), line=line
        ) from None
    return read_session_text(text, source=str(p))
