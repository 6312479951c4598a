"""Redacting a whole session tree once, before enumeration (DESIGN §2).

Every string of the header and of every entry is passed through the rules
in order, except the structure the pipeline relies on, which is found by
position (``structure.py``): the envelope and the id, reference and enum
members of each entry type at their own level, and the structural members
inside Open Responses items.  A string holding a JSON document (tool-call
arguments, many tool outputs) is redacted as JSON: decoded, every value and
member name redacted, and encoded again in its own style, so it stays valid
JSON with the same keys.  Only entries that changed are decoded again, so a
clean tree costs one walk.  Placeholders are numbered per tree, so a value
shared by two branches renders identically in both.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

from trajset.schemas.session import Entry, Session, validate_header

from . import structure
from .base import PLACEHOLDER_RE, Placeholders
from .encoded import BASE64_TRIGGER, base64_findings
from .environment import strip_environment, strip_environment_doc
from .home_paths import roots_pattern
from .no_passthrough import strip_raw_items
from .prefilter import TriggerSet
from .spans import ESCAPE_TRIGGER, Decoded, Span, decode, join, outside

JSON = Any
NONE: frozenset[str] = frozenset()
#: entry types whose content is part of a recorded request
CONTEXT_TYPES = frozenset({"item", "config", "compaction", "branch_summary"})
MIN_LENGTH = 6  # no detector finds anything in a shorter string


class StringRule(Protocol):
    """A rule with ``spans(text)`` (a placeholder replaces each span found), or one with
    ``apply(text, placeholders)`` that rewrites the text itself (home paths become ``~``)."""

    @property
    def name(self) -> str: ...

    @property
    def trigger(self) -> str:
        """Regex of literal keywords any finding needs; "" means "always run"."""
        ...


class MemberRule(Protocol):
    """A rule that also judges a value by the name of the member holding it."""

    @property
    def name(self) -> str: ...

    def names_secret(self, name: str) -> bool: ...

    def secret_member(self, name: str, value: str) -> bool: ...


@dataclass
class TreeReport:
    findings: Counter[str] = field(default_factory=Counter)
    entries_changed: int = 0
    hashed_context_entries_changed: int = 0
    environment_dropped: int = 0
    #: the tree's placeholders: a copy of its store files (``--traces``) numbers alike
    placeholders: Placeholders | None = None


#: the encodings a producer may have used, most common first
JSON_STYLES: tuple[dict[str, Any], ...] = (
    {"ensure_ascii": False, "separators": (",", ":")},
    {"ensure_ascii": False},
    {"separators": (",", ":")},
    {},
    {"ensure_ascii": False, "indent": 2},
    {"ensure_ascii": False, "indent": 4},
)


def _references(raw: dict[str, JSON]) -> list[str]:
    """The id and reference values of one object's top level (``structure.REFERENCES``)."""
    return [v for k, v in raw.items() if k in structure.REFERENCES and isinstance(v, str)]


def _replaced(
    text: str, spans: list[Span], rules: Sequence[StringRule], placeholders: Placeholders
) -> str:
    """``text`` with a placeholder for each (joined) span, numbered by its decoded value (or
    the rule's ``key`` of it: a term's every spelling is one value); an identity's span
    becomes its pseudonym."""
    out, last = [], 0
    for start, end, i in spans:
        value = decode(text[start:end])
        if (key := getattr(rules[i], "key", None)) is not None:
            value = key(value)
        rename = getattr(rules[i], "pseudonym", None)
        if rename is not None and (name := rename(value)) is not None:
            placeholders.findings[rules[i].name] += 1  # a pseudonym, stable per export
        else:
            name = placeholders(rules[i].name, value)
        out += [text[last:start], name]
        last = end
    out.append(text[last:])
    return "".join(out)


def _reencode(original: str, decoded: JSON, redacted: JSON) -> str:
    """``redacted`` in the style ``original`` was written in (compact when none matches)."""
    body = original.strip()
    for style in JSON_STYLES:
        if json.dumps(decoded, **style) == body:
            lead = original[: len(original) - len(original.lstrip())]
            return lead + json.dumps(redacted, **style) + original[len(original.rstrip()) :]
    return json.dumps(redacted, **JSON_STYLES[0])


#: the strings ``Redactor._clean`` remembers (those that redact to themselves with no
#: finding): at most this long, at most this many (a few MB); a Harbor job's 426,633 strings
#: held 87,987 distinct ones, most under 30 characters
CLEAN_LENGTH, CLEAN_ENTRIES = 64, 1 << 17


class Redactor:
    """A configured set of string rules plus the ``environment`` and ``no_passthrough`` switches."""

    def __init__(
        self,
        rules: Sequence[StringRule],
        *,
        environment: bool = False,
        no_passthrough: bool = False,
        min_length: int = MIN_LENGTH,
        roots: Sequence[str] = (),
    ) -> None:
        self.rules = list(rules)
        #: the folders holding the run's stores: a path ``plain_text`` shows is relative to them
        self._roots = roots_pattern(roots)
        self.environment = environment
        self.no_passthrough = no_passthrough
        self.min_length = min_length
        #: short strings seen with no trigger in them: a session repeats its roles, names,
        #: ids and short values many times, and the rules never change during a run
        self._clean: set[str] = set()
        # One RE2 set match tells which rules' triggers occur (prefilter.TriggerSet); most
        # strings hold none and stop there.
        #: rules that also judge a value by the name of the member holding it
        self.member_rules = [cast(MemberRule, r) for r in self.rules if hasattr(r, "secret_member")]
        self._member_names: dict[str, list[MemberRule]] = {}  # name -> the rules that judge it
        #: the last triggers are an escape's and a base64 run's: the string may hold a secret
        #: in an encoded form
        self._triggers = TriggerSet(
            [*(r.trigger for r in self.rules), ESCAPE_TRIGGER, BASE64_TRIGGER]
        )
        self._escape, self._base64 = len(self.rules), len(self.rules) + 1
        #: what examines ids: the secret rules, those that are not opt-in and find no identity
        #: (an id is kept, a pseudonym is no finding there); and structural values (enums,
        #: a run's ``ref``: ``approval:dana``): those and the identities (``structure.py``)
        self._secrets: Redactor = self
        self._structure: Redactor = self
        structural = [r for r in self.rules if not getattr(r, "opt_in", False)]
        secret = [r for r in structural if not hasattr(r, "pseudonym")]
        if len(secret) < len(self.rules):
            self._secrets = Redactor(secret, min_length=min_length)
        if len(structural) < len(self.rules):
            self._structure = Redactor(structural, min_length=min_length)
        #: the rules that find spans, and those that rewrite (run after, on the result)
        self._spans = [(i, r.spans) for i, r in enumerate(self.rules)
                       if hasattr(r, "spans")]  # fmt: skip
        self._rewrite = [(i, cast(Any, r).apply) for i, r in enumerate(self.rules)
                         if not hasattr(r, "spans")]  # fmt: skip

    @property
    def active(self) -> bool:
        return bool(self.rules) or self.environment or self.no_passthrough

    @property
    def identities(self) -> dict[str, int]:
        """How many distinct identities of each kind have a pseudonym (``identities.py``)."""
        return dict(self._pseudonyms.counts) if self._pseudonyms else {}

    @property
    def numbering(self) -> str:
        """Every identity's lookup key with its pseudonym, sorted ("" without any): what
        ``--mode resume`` compares (salted) to know whether a kept batch still holds."""
        names = self._pseudonyms.names if self._pseudonyms else {}
        return "\n".join(f"{k}\0{v}" for k, v in sorted(names.items()))

    @property
    def _pseudonyms(self) -> Any:
        return next((r for r in self.rules if hasattr(r, "pseudonym")), None)

    def text(self, value: str, placeholders: Placeholders) -> str:
        if len(value) < self.min_length or value in self._clean:
            return value
        fired = self._triggers.which(value)
        if not fired:
            self._remember(value)
            return value
        found = placeholders.findings.total()
        out = self._fired(value, fired, placeholders)
        if out == value and placeholders.findings.total() == found:
            self._remember(value)  # a trigger that found nothing ("input_tokens" in usage)
        return out

    def _remember(self, value: str) -> None:
        """``value`` redacts to itself with no finding: the rules and the identity table
        are fixed for the run, so it always will."""
        if len(value) <= CLEAN_LENGTH and len(self._clean) < CLEAN_ENTRIES:
            self._clean.add(value)

    def _fired(self, value: str, fired: set[int], placeholders: Placeholders) -> str:
        head = value.lstrip()[:1]
        if head in ("{", "[") and len(value) > 1:
            try:
                decoded = json.loads(value)
            except ValueError:
                decoded = None
            if isinstance(decoded, dict | list):
                redacted = self.value(decoded, placeholders, data=True)
                return value if redacted is decoded else _reencode(value, decoded, redacted)
        found = self._found(value, fired)
        if self._escape in fired and (d := Decoded.of(value)) is not None:
            found += [
                (*d.original(a, b), i)
                for a, b, i in self._found(d.text, self._triggers.which(d.text))
            ]
        if self._base64 in fired:
            found += base64_findings(value, self._found_anywhere)
        if found and "[REDACTED:" in value:
            found = outside(found, [m.span() for m in PLACEHOLDER_RE.finditer(value)])
        if found:
            value = _replaced(value, join(found), self.rules, placeholders)
        for i, apply in self._rewrite:
            if i in fired:
                value = apply(value, placeholders)
        return value

    def _found_anywhere(self, text: str) -> list[Span]:
        """The spans the rules find in a decoded text (its own triggers)."""
        return self._found(text, self._triggers.which(text))

    def _found(self, text: str, fired: set[int]) -> list[Span]:
        """Every span the fired rules find in ``text``, each with its rule's index."""
        return [(a, b, i) for i, spans in self._spans if i in fired for a, b in spans(text)]

    def value(
        self,
        value: JSON,
        placeholders: Placeholders,
        *,
        skip: frozenset[str] = NONE,
        data: bool = True,
    ) -> JSON:
        """``value`` with every non-structural string redacted (same object when nothing changed).

        ``skip``: member names that are structure at this level; ``data``: whether member
        names at this level are data (redacted) rather than a shape (kept).
        """
        if isinstance(value, str):
            return self.text(value, placeholders)
        if isinstance(value, dict):
            return self._object(value, placeholders, skip, data)
        if isinstance(value, list):
            new = [self.value(v, placeholders, skip=skip, data=data) for v in value]
            return value if all(a is b for a, b in zip(new, value, strict=True)) else new
        return value

    def _object(
        self, value: dict[str, JSON], placeholders: Placeholders, skip: frozenset[str], data: bool
    ) -> JSON:
        out: dict[str, JSON] | None = None
        for i, (k, v) in enumerate(value.items()):
            nk = self.text(k, placeholders) if data and isinstance(k, str) else k
            nv: JSON = v
            if v is None or (k in skip and isinstance(v, bool | int | float)):
                pass
            elif k in skip and isinstance(v, str):
                if k not in structure.REFERENCES and k not in structure.OPAQUE:
                    nv = self._structure.text(v, placeholders)
            elif isinstance(v, str) and isinstance(k, str) and (rule := self._secret_member(k, v)):
                nv = placeholders(rule, v)
            elif skip is structure.ITEM or (k in structure.ITEM_VALUED and not data):
                nv = self.value(v, placeholders, skip=structure.ITEM, data=False)
            elif k == "tools_added" and not data:
                nv = self.value(v, placeholders, skip=structure.TOOL, data=False)
            else:
                nv = self.value(v, placeholders, skip=NONE, data=True)
            if out is None and (nk is not k or nv is not v):
                out = dict(list(value.items())[:i])
            if out is not None:
                out[nk] = nv
        return value if out is None else out

    def _secret_member(self, name: str, value: str) -> str:
        """The rule that judges ``value`` a secret because of its member's name ("" if none)."""
        rules = self._member_names.get(name)
        if rules is None:
            rules = [r for r in self.member_rules if r.names_secret(name)]
            self._member_names[name] = rules
        for rule in rules:
            if rule.secret_member(name, value):
                return str(rule.name)
        return ""

    def entry(self, raw: dict[str, JSON], placeholders: Placeholders) -> dict[str, JSON]:
        kind = raw.get("type")
        skip = structure.entry_structure(kind) if isinstance(kind, str) else structure.ENVELOPE
        result: dict[str, JSON] = self._object(raw, placeholders, skip, data=False)
        return result

    def session(self, session: Session) -> tuple[Session, TreeReport]:
        """The redacted tree and what was found (counts per rule, never the plaintext)."""
        report = TreeReport()
        placeholders = Placeholders()
        header = session.header_raw
        raws = [e.raw for e in session.entries]
        if self.environment:
            header, raws, report.environment_dropped = strip_environment(header, raws)
        new_header = self._object(header, placeholders, structure.HEADER, data=False)
        hashed = any(e.type == "response" and e.raw.get("request_hash") for e in session.entries)
        entries: list[Entry] = []
        for e, raw in zip(session.entries, raws, strict=True):
            new = self.entry(raw, placeholders)
            if new is e.raw:
                entries.append(e)
                continue
            report.entries_changed += 1
            if hashed and e.type in CONTEXT_TYPES:
                report.hashed_context_entries_changed += 1
            entries.append(Entry.of(new, e.line, e.index))
        report.findings.update(placeholders.findings)
        report.placeholders = placeholders
        header_model = (
            session.header if new_header is session.header_raw else validate_header(new_header)
        )
        return session.replace(header_model, new_header, entries), report

    def plain_id(self, value: str) -> str:
        """An id written outside the tree (an error row's session id), by the secret rules only:
        ids are kept verbatim so rows join, unless they hold a secret."""
        return self._secrets.plain_text(value)

    def id_findings(self, session: Session) -> Counter[str]:
        """Findings of the secret rules in the session's ids and references (ids are never
        rewritten, so such a session is refused)."""
        if self._secrets is not self:
            return self._secrets.id_findings(session)
        placeholders = Placeholders()
        ids = [session.id, *_references(session.header_raw)]
        for e in session.entries:
            ids.extend(_references(e.raw))
            item = e.raw.get("item")
            if isinstance(item, dict):
                ids.extend(_references(item))
        for value in ids:
            self.text(value, placeholders)
        return placeholders.findings

    def document(self, doc: JSON) -> dict[str, int]:
        """The document-level rules, in place: what each removed (the tree-level pass ran earlier)."""
        removed: dict[str, int] = {}
        if self.no_passthrough:
            removed["no_passthrough"] = strip_raw_items(doc)
        if self.environment:
            removed["environment"] = strip_environment_doc(doc)
        return removed

    def plain_text(self, value: str) -> str:
        """Redact a string built outside the tree (error messages, paths); placeholders numbered
        apart.  A path below a store's folder is shown from the store's own name on (no input
        path of this machine reaches the manifest or an error row)."""
        if value and self._roots is not None:
            value = self._roots.sub("", value)
        return self.text(value, Placeholders()) if value else value
