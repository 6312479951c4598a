"""Custom regex rules from ``--config FILE.toml``::

[[redact.rules]]
name = "ticket_id_v1"          # versioned name, used in placeholders and the manifest
pattern = "TICKET-[0-9]{5}"   # Python regex; a group named "secret" narrows the finding
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from .base import Rule, RuleError


def custom_rule(spec: Mapping[str, object]) -> Rule:
    name, pattern = spec.get("name"), spec.get("pattern")
    if not isinstance(name, str) or not re.fullmatch(r"[a-z0-9_]+_v\d+", name):
        raise RuleError(
            f"custom redaction rule needs a versioned name like 'ticket_id_v1', got {name!r}"
        )
    if not isinstance(pattern, str) or not pattern:
        raise RuleError(f"custom redaction rule {name} needs a pattern")
    try:
        compiled = re.compile(pattern)
    except re.error as exc:
        raise RuleError(f"custom redaction rule {name}: bad pattern: {exc}") from None
    if compiled.search("[REDACTED:x:1]") or compiled.search(""):
        raise RuleError(
            f"custom redaction rule {name} matches placeholders or empty text; make it specific"
        )
    group: int | str = "secret" if "secret" in compiled.groupindex else 0
    return Rule(name, compiled, "", group=group)
