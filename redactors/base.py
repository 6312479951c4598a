"""What every redaction rule is: a versioned name, a cheap prefilter and the spans it finds.

A rule never sees placeholders as findings (``[REDACTED:<rule>:<n>]`` holds
no character of a secret and matches no rule), which is what makes
redaction idempotent.  ``Placeholders`` numbers values per rule within one
tree, so the same value gets the same placeholder everywhere in that tree.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import re2

from .anchored import Anchor

#: a placeholder, ASCII only (so its matches in UTF-8 bytes are its matches in the text)
PLACEHOLDER_RE = re.compile(r"\[REDACTED:([a-z0-9_]+):([0-9]+)\]")
#: the same in RE2, for the audit's scans of written outputs (hundreds of MB per export):
#: about 4x faster than ``re`` there, and both engines read this ASCII pattern alike.  Its
#: groups are ``bytes`` (a ``memoryview`` when given one); ``str(group, "ascii")`` reads both
PLACEHOLDER_BYTES_RE = re2.compile(PLACEHOLDER_RE.pattern.encode("ascii"))


class RuleError(ValueError):
    """An unknown rule name or a custom rule that cannot be used; the message says how to fix it."""


def base_name(name: str) -> str:
    """``github_token_v1`` -> ``github_token`` (the placeholder names the rule, not its version)."""
    return re.sub(r"_v\d+$", "", name)


def entropy(value: str) -> float:
    """Shannon entropy in bits per character."""
    if not value:
        return 0.0
    counts = Counter(value)
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


@dataclass
class Placeholders:
    """Value -> placeholder per rule, stable within one tree; counts findings per rule."""

    numbers: dict[tuple[str, str], int] = field(default_factory=dict)
    next_number: Counter[str] = field(default_factory=Counter)
    findings: Counter[str] = field(default_factory=Counter)

    def __call__(self, rule: str, value: str) -> str:
        self.findings[rule] += 1
        key = (rule, value)
        n = self.numbers.get(key)
        if n is None:
            self.next_number[rule] += 1
            n = self.numbers[key] = self.next_number[rule]
        return f"[REDACTED:{base_name(rule)}:{n}]"


@dataclass(frozen=True)
class Rule:
    """A detector: spans of ``pattern`` (or of its ``group``) in strings where ``trigger`` occurs.

    ``trigger`` is a cheap regex of literal keywords that any string holding
    a finding must contain; the redactor joins every rule's trigger into one
    scan, so a string with no trigger costs one pass.  ``accept`` can veto a
    match (e.g. a low-entropy value).
    """

    name: str
    pattern: re.Pattern[str]
    trigger: str
    group: int | str = 0
    accept: Callable[[re.Match[str]], bool] | None = None
    opt_in: bool = False
    description: str = ""
    #: where matches start, when the pattern is tried only there (``anchored.py``)
    anchor: Anchor | None = None

    def finditer(self, pattern: re.Pattern[str], text: str) -> Iterator[re.Match[str]]:
        """``pattern.finditer(text)``, tried only next to the anchor when the rule has one."""
        if self.anchor is None:
            return pattern.finditer(text)
        return self.anchor.finditer(pattern, text)

    def spans(self, text: str) -> Iterator[tuple[int, int]]:
        for m in self.finditer(self.pattern, text):
            if self.accept is not None and not self.accept(m):
                continue
            start, end = m.span(self.group)
            if start < end:
                yield start, end
