"""Redacting a whole session tree once, before enumeration (DESIGN §2).

Every string value (and member name) of the header and of every entry is
passed through the rules in order, except the structure the pipeline relies
on: entry ids and parents, types, timestamps, request hashes and call or
response ids.  Only entries that changed are decoded again, so a clean tree
costs one walk.  Placeholders are numbered per tree, so a value shared by
two branches renders identically in both.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from trajset.schemas.entries import validate_entry
from trajset.schemas.session import Entry, Session, validate_header

from .base import Placeholders
from .environment import strip_environment, strip_environment_doc
from .no_passthrough import strip_raw_items

JSON = Any

#: members whose string values are structure, never text
STRUCTURAL = frozenset(
    {
        "type",
        "id",
        "parent",
        "ts",
        "request_hash",
        "call_id",
        "response_id",
        "response",
        "target",
        "first_kept",
        "from",
        "run_id",
        "phase",
        "status",
        "role",
        "session",
        "format",
        "payload",
        "created_at",
        "parent_session",
        "spawned_by",
        "verdict",
        "source",
        "reason",
        "kind",
        "rel",
    }
)
#: entry types whose content is part of a recorded request
CONTEXT_TYPES = frozenset({"item", "config", "compaction", "branch_summary"})
MIN_LENGTH = 6  # no rule finds anything in a shorter string


class StringRule(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def trigger(self) -> str:
        """Regex of literal keywords any finding needs; "" means "always run"."""
        ...

    def apply(self, text: str, placeholders: Placeholders) -> str: ...


@dataclass
class TreeReport:
    findings: Counter[str] = field(default_factory=Counter)
    entries_changed: int = 0
    hashed_context_entries_changed: int = 0
    environment_dropped: int = 0

    def merge(self, other: TreeReport) -> None:
        self.findings.update(other.findings)
        self.entries_changed += other.entries_changed
        self.hashed_context_entries_changed += other.hashed_context_entries_changed
        self.environment_dropped += other.environment_dropped


class Redactor:
    """A configured set of string rules plus the ``environment`` and ``no_passthrough`` switches."""

    def __init__(
        self,
        rules: Sequence[StringRule],
        *,
        environment: bool = False,
        no_passthrough: bool = False,
    ) -> None:
        self.rules = list(rules)
        self.environment = environment
        self.no_passthrough = no_passthrough
        # One search decides whether any rule can fire; most strings stop there. (Collecting
        # which triggers fired with finditer measured twice as slow: it must scan the whole string.)
        triggers = [r.trigger for r in self.rules]
        self._any = (
            re.compile("|".join(f"(?:{t})" for t in triggers))
            if triggers and all(triggers)
            else None
        )

    @property
    def active(self) -> bool:
        return bool(self.rules) or self.environment or self.no_passthrough

    def text(self, value: str, placeholders: Placeholders) -> str:
        if len(value) < MIN_LENGTH or (self._any is not None and self._any.search(value) is None):
            return value
        for rule in self.rules:
            value = rule.apply(value, placeholders)
        return value

    def value(self, value: JSON, placeholders: Placeholders) -> JSON:
        """``value`` with every non-structural string redacted (same object when nothing changed)."""
        if isinstance(value, str):
            return self.text(value, placeholders)
        if isinstance(value, dict):
            out: dict[str, JSON] | None = None
            for i, (k, v) in enumerate(value.items()):
                nk = self.text(k, placeholders) if isinstance(k, str) else k
                nv = v if (k in STRUCTURAL and isinstance(v, str)) else self.value(v, placeholders)
                if out is None and (nk is not k or nv is not v):
                    out = dict(list(value.items())[:i])
                if out is not None:
                    out[nk] = nv
            return value if out is None else out
        if isinstance(value, list):
            new = [self.value(v, placeholders) for v in value]
            return value if all(a is b for a, b in zip(new, value, strict=True)) else new
        return value

    def session(self, session: Session) -> tuple[Session, TreeReport]:
        """The redacted tree and what was found (counts per rule, never the plaintext)."""
        report = TreeReport()
        placeholders = Placeholders()
        header = session.header_raw
        raws = [e.raw for e in session.entries]
        if self.environment:
            header, raws, report.environment_dropped = strip_environment(header, raws)
        new_header = self.value(header, placeholders)
        hashed = any(e.type == "response" and e.raw.get("request_hash") for e in session.entries)
        entries: list[Entry] = []
        for e, raw in zip(session.entries, raws, strict=True):
            new = self.value(raw, placeholders)
            if new is e.raw:
                entries.append(e)
                continue
            report.entries_changed += 1
            if hashed and e.type in CONTEXT_TYPES:
                report.hashed_context_entries_changed += 1
            entries.append(Entry(raw=new, body=validate_entry(new), line=e.line, index=e.index))
        report.findings.update(placeholders.findings)
        header_model = (
            session.header if new_header is session.header_raw else validate_header(new_header)
        )
        return session.replace(header_model, new_header, entries), report

    def document(self, doc: JSON) -> dict[str, int]:
        """The document-level rules, in place: what each removed (the tree-level pass ran earlier)."""
        removed: dict[str, int] = {}
        if self.no_passthrough:
            removed["no_passthrough"] = strip_raw_items(doc)
        if self.environment:
            removed["environment"] = strip_environment_doc(doc)
        return removed

    def plain_text(self, value: str) -> str:
        """Redact a string built outside the tree (error messages, paths); placeholders numbered apart."""
        return self.text(value, Placeholders()) if value else value
