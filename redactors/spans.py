"""Findings as spans of one string: several rules' spans joined, and spans in an encoded form.

Every rule reports spans of the string as it was given; the redactor joins
the spans that overlap into one, replaced by one placeholder, so a
finding is never found again inside another rule's placeholder and the text
outside every finding stays byte for byte.  A span that overlaps a placeholder
already in the text is no finding (``outside``).  A joined span is named by the
rule whose span starts first (the longer one, then the earlier rule, on a tie).

A secret may be written escaped inside ordinary text: ``\\u0041`` and ``\\x41``
(JSON or Python string escapes written out) or ``%41`` (percent-encoding).
``Decoded`` is the string with those escapes decoded and a map back to the
positions of the string as given, so a rule's span in the decoded text
replaces exactly the escaped characters it came from.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable
from dataclasses import dataclass

#: an escape a secret may be written in; a string holding none has no decoded form
ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})|\\x([0-9a-fA-F]{2})|%([0-9a-fA-F]{2})")
#: the same, as a trigger (a cheap test that a string may hold one)
ESCAPE_TRIGGER = r"\\u[0-9a-fA-F]{4}|\\x[0-9a-fA-F]{2}|%[0-9a-fA-F]{2}"

Span = tuple[int, int, int]  # start, end, the index of the rule that found it


def outside(spans: list[Span], placeholders: list[tuple[int, int]]) -> list[Span]:
    """The spans that overlap no placeholder already in the text: a placeholder holds no
    character of a secret, and text found across one (``secrets:1]/x`` read as an
    assignment) is an artefact, so redacting twice changes nothing."""
    if not placeholders:
        return spans
    return [s for s in spans if not any(a < s[1] and s[0] < b for a, b in placeholders)]


def join(spans: Iterable[Span]) -> list[Span]:
    """Overlapping spans as one, in order; each named as the module says."""
    out: list[Span] = []
    for start, end, rule in sorted(spans, key=lambda s: (s[0], -s[1], s[2])):
        if out and start < out[-1][1]:
            last = out[-1]
            out[-1] = (last[0], max(last[1], end), last[2])
        else:
            out.append((start, end, rule))
    return out


@dataclass(frozen=True)
class Decoded:
    """``text`` with its escapes decoded; ``starts[k]`` is where the ``k``-th piece of the
    decoded text starts in it and in ``text``, ``escape[k]`` the length of its escape (0 for
    a run of literal characters)."""

    text: str
    dec: tuple[int, ...]
    orig: tuple[int, ...]
    escape: tuple[int, ...]

    @classmethod
    def of(cls, text: str) -> Decoded | None:
        """The decoded form, or None when ``text`` holds no escape."""
        parts: list[str] = []
        pieces: list[tuple[int, int, int]] = []  # (decoded start, start in text, escape length)
        n = last = 0
        for m in ESCAPE.finditer(text):
            if m.start() > last:
                pieces.append((n, last, 0))
                parts.append(text[last : m.start()])
                n += m.start() - last
            pieces.append((n, m.start(), m.end() - m.start()))
            code = int(m.group(1) or m.group(2) or m.group(3), 16)
            # half of a UTF-16 pair (``\ud83d\ude00``) holds no secret and is no text
            parts.append("\ufffd" if 0xD800 <= code <= 0xDFFF else chr(code))
            n += 1
            last = m.end()
        if not pieces:
            return None
        if last < len(text):
            pieces.append((n, last, 0))
            parts.append(text[last:])
        dec, orig, escape = (tuple(p[k] for p in pieces) for k in range(3))
        return cls("".join(parts), dec, orig, escape)

    def _piece(self, i: int) -> int:
        return bisect.bisect_right(self.dec, i) - 1

    def original(self, start: int, end: int) -> tuple[int, int]:
        """The span of ``text`` a span of the decoded text came from."""
        a, b = self._piece(start), self._piece(end - 1)
        first = self.orig[a] + (0 if self.escape[a] else start - self.dec[a])
        last = self.orig[b] + (self.escape[b] or end - self.dec[b])
        return first, last


def decode(text: str) -> str:
    """``text`` with its escapes decoded (the value a finding is numbered by)."""
    d = Decoded.of(text)
    return text if d is None else d.text
