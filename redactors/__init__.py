"""Redactors: deterministic, auditable removal of secrets, personal data and paths.

Rules are looked up by versioned name in ``REGISTRY`` (a plain dict); a
name without its version (``email``) means the newest version.  The default
set runs unless ``--no-redact`` is given: literal ``secrets``, every
detector that is not opt-in, and ``home_paths``.  ``--redact NAME`` adds a
rule or a group (``pii``, ``network``, ``all``).  Adding a rule family is one
module, one registry line and one test file.

Findings become ``[REDACTED:<rule>:<n>]`` (never a character of the secret),
numbered per tree; home paths become ``~``.  ``--redact-terms FILE`` adds the
names a team lists (``terms.py``); the identities a store records (owners,
working folders, remotes) become pseudonyms stable per export
(``identities.py``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import rfc8785

from . import command_line, detectors, passwords, pii, structure
from .base import PLACEHOLDER_BYTES_RE, PLACEHOLDER_RE, Placeholders, Rule, RuleError, base_name
from .custom import custom_rule
from .engine import MIN_LENGTH, Redactor, StringRule, TreeReport
from .home_paths import HomePaths
from .identities import FLOOR as IDENTITY_FLOOR
from .identities import Identity, Pseudonyms
from .no_passthrough import strip_raw_items
from .secrets import LiteralSecrets
from .terms import TERM_FLOOR, Terms, read_terms

#: every detector rule by versioned name, in the order they run
REGISTRY: dict[str, Rule] = {
    r.name: r for r in [*detectors.RULES, *command_line.RULES, *passwords.RULES, *pii.RULES]
}
#: rules that are not string detectors
SPECIAL = ("secrets_v1", "term_v1", "identity_v1", "home_paths_v3", "environment_v1",
           "no_passthrough_v1")  # fmt: skip
GROUPS = {
    "default": [n for n, r in REGISTRY.items() if not r.opt_in]
    + ["secrets_v1", "term_v1", "identity_v1", "home_paths_v3"],
    "pii": ["email_v3", "ipv4_v2", "ipv6_v1", "phone_v2", "identity_v1", "home_paths_v3"],
    "network": ["ipv4_v2", "ipv6_v1"],
    "all": [*REGISTRY, *SPECIAL],
}


def all_names() -> list[str]:
    return [*REGISTRY, *SPECIAL]


def resolve(name: str) -> list[str]:
    """Versioned rule names for a ``--redact`` value (rule, unversioned rule or group)."""
    if name in GROUPS:
        return list(GROUPS[name])
    names = all_names()
    if name in names:
        return [name]
    versions = sorted(
        (n for n in names if base_name(n) == name), key=lambda n: int(n.rsplit("_v", 1)[1])
    )
    if versions:
        return [versions[-1]]
    raise RuleError(
        f"unknown redaction rule {name!r}; valid: {', '.join(sorted({base_name(n) for n in names}))}"
        f" or a group ({', '.join(GROUPS)})"
    )


def selected_rules(extra: Iterable[str] = ()) -> list[str]:
    """Default rules plus the ``--redact`` additions, in registry order, as versioned names."""
    chosen = set(GROUPS["default"])
    for name in extra:
        chosen.update(resolve(name))
    return [n for n in all_names() if n in chosen]


def build_redactor(
    names: Sequence[str],
    *,
    secrets: Sequence[str] = (),
    homes: Sequence[str] = (),
    custom: Sequence[Mapping[str, object]] = (),
    terms: Sequence[str] = (),
    identities: Sequence[Identity] = (),
    roots: Sequence[str] = (),
    pseudonym_key: str = "",
) -> Redactor:
    """The redactor for the given versioned names: literal secrets, detectors, custom rules,
    listed terms, the store's identities (numbered, or keyed by ``pseudonym_key``), then
    home paths."""
    rules: list[StringRule] = []
    shortest = MIN_LENGTH
    if "secrets_v1" in names and secrets:
        check_secrets(secrets)
        rules.append(LiteralSecrets.of(list(secrets)))
        shortest = min(shortest, *(len(s) for s in secrets if s))
    rules.extend(REGISTRY[n] for n in names if n in REGISTRY)
    rules.extend(custom_rule(spec) for spec in custom)
    if "term_v1" in names and terms:
        rules.append(Terms.of(terms))
        shortest = min(shortest, TERM_FLOOR)
    homes_too = "home_paths_v3" in names
    if (
        "identity_v1" in names
        and (pseudonyms := Pseudonyms.of(identities, homes_too, pseudonym_key)).active
    ):
        rules.append(pseudonyms)
        shortest = min(shortest, IDENTITY_FLOOR)
    if "home_paths_v3" in names:
        rules.append(HomePaths.of(tuple(homes)))
    return Redactor(
        rules,
        environment="environment_v1" in names,
        no_passthrough="no_passthrough_v1" in names,
        min_length=shortest,
        roots=roots,
    )


#: the version of no redaction at all (``--no-redact``)
UNREDACTED = "none"


def ruleset_version(
    names: Sequence[str], custom: Sequence[tuple[str, str]] = (), pseudonyms: str = ""
) -> str:
    """A short, stable name of a rule set: ``rs-`` and 12 hex digits of the SHA-256 of its
    versioned rule names and custom ``(name, pattern)`` rules, in any order.  Rules are
    versioned by name (a changed rule gets a new name), so two exports share a version
    exactly when the same rules ran.  ``pseudonyms``: the key id identities were named
    under (``identities.key_id``; "" when numbered per export).  Literal secrets and listed
    terms are values, not rules: they never enter it (a hash of a short secret could be
    reversed)."""
    if not names and not custom:
        return UNREDACTED
    spec: dict[str, list[Any]] = {
        "rules": sorted(set(names)),
        "custom": sorted([n, p] for n, p in custom),
    }
    if pseudonyms and "identity_v1" in names:
        spec["pseudonyms"] = [pseudonyms]
    return "rs-" + hashlib.sha256(rfc8785.dumps(spec)).hexdigest()[:12]


#: the shortest literal secret accepted; shorter ones would match ordinary text
SECRET_FLOOR = 4


def check_secrets(secrets: Sequence[str]) -> None:
    """``RuleError`` for a literal secret that would rewrite ordinary text or structure."""
    for s in secrets:
        if len(s.strip()) < SECRET_FLOOR:
            raise RuleError(
                f"a literal secret of {len(s.strip())} character(s) would match ordinary text; "
                f"give secrets of at least {SECRET_FLOOR} characters (the value is not shown)"
            )
        if s in structure.NAMES or s.strip() != s:
            raise RuleError(
                "a literal secret equals a member name of the session format or has surrounding "
                "white space; it would rewrite structure or every space, so it is refused"
            )


def count_placeholders(text: str | bytes) -> dict[str, int]:
    """Placeholders per rule in ``text`` (the audit of an output), a string or its UTF-8
    bytes (the same counts: a placeholder is ASCII), so a document written as bytes needs
    no decoded copy (a 243 MB document took 243 MB more at its peak)."""
    rules = (
        (str(m.group(1), "ascii") for m in PLACEHOLDER_BYTES_RE.finditer(text))
        if isinstance(text, bytes)
        else (m.group(1) for m in PLACEHOLDER_RE.finditer(text))
    )
    counts: dict[str, int] = {}
    for rule in rules:
        counts[rule] = counts.get(rule, 0) + 1
    return counts


__all__ = [
    "GROUPS",
    "PLACEHOLDER_BYTES_RE",
    "PLACEHOLDER_RE",
    "REGISTRY",
    "UNREDACTED",
    "Identity",
    "Placeholders",
    "Pseudonyms",
    "Redactor",
    "Rule",
    "RuleError",
    "TreeReport",
    "all_names",
    "build_redactor",
    "count_placeholders",
    "custom_rule",
    "read_terms",
    "resolve",
    "ruleset_version",
    "selected_rules",
    "strip_raw_items",
]
