"""Trigger pre-checks in linear time: "could this rule fire in this string?" answered by RE2.

Every string of a tree is first searched for the rules' triggers.  Python's
``re`` tries each alternative of a trigger at every position; on long tool
outputs the combined trigger of the default rules scanned about 3 MB/s and was
most of an export's time.  RE2 runs the same search as one automaton pass
(about 100x faster on such text).  Only the pre-check moves to RE2: the rules'
own patterns, which decide what is redacted, stay in ``re``.

A pre-check may say "yes" too often, never too rarely, so RE2 is given a
*widened* pattern wherever the two engines read a pattern differently:
``\\s \\w \\d`` (Unicode in ``re``, ASCII in RE2) become the Unicode sets ``re``
means, their negations "any character", ``\\b \\B`` are dropped, and the letters ``i``/``I`` also accept
``İ`` and ``ı`` (``re`` folds them under ``(?i)``, RE2 does not).  A trigger
RE2 cannot compile (look-arounds, back-references) or that uses such an escape
inside a character class is checked with ``re`` instead.  ``tests/test_prefilter.py``
checks the widening against ``re`` over every code point and random text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from functools import cache
from typing import Any, Literal

import re2

#: escapes read differently by the two engines, and what RE2 gets instead (outside classes):
#: the Unicode sets ``re`` means, or any character for a negated one
_WIDER = {
    "s": r"[\t\n\x0b\x0c\r\x1c-\x1f \x85\xa0\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}]",
    "d": r"\p{Nd}",
    "w": r"[\p{L}\p{N}_]",
    "S": "(?s:.)",
    "W": "(?s:.)",
    "D": "(?s:.)",
}
_DROPPED = {"b", "B"}
_DOTTED_I = "İı"
_SURROGATE = re.compile("[\ud800-\udfff]")


def widen(pattern: str) -> str | None:
    """``pattern`` rewritten for RE2 so that it matches at least what ``re`` matches;
    None when that cannot be done by rewriting (the caller uses ``re``)."""
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\" and i + 1 < n:
            e = pattern[i + 1]
            if e in _WIDER:
                out.append(_WIDER[e])
            elif e not in _DROPPED:
                out.append(pattern[i : i + 2])
            i += 2
        elif c == "(" and pattern.startswith("(?", i):
            head = re.match(r"\(\?(?:P<[A-Za-z_]\w*>|[aiLmsux-]*[:)])", pattern[i:])
            if head is None:
                return None  # a look-around, back-reference or comment: RE2 has none
            out.append(head.group())
            i += head.end()
        elif c == "[":
            end = _class_end(pattern, i)
            if end is None:
                return None
            body = pattern[i + 1 : end]
            if body.startswith("^") or re.search(r"\\[sSwWdDbB]", body):
                return None  # widening a negated class would narrow it
            # the dotted i's go first: after a trailing ``-`` (``[_-]``) they would make a range
            lead = "]" if body.startswith("]") else ""
            out.append("[" + lead + _DOTTED_I + body[len(lead) :] + "]")
            i = end + 1
        elif c in "iI":
            out.append("[iIİı]")
            i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _class_end(pattern: str, start: int) -> int | None:
    """Index of the ``]`` closing the class opened at ``start``."""
    i = start + 1
    if i < len(pattern) and pattern[i] == "^":
        i += 1
    if i < len(pattern) and pattern[i] == "]":
        i += 1
    while i < len(pattern):
        if pattern[i] == "\\":
            i += 2
            continue
        if pattern[i] == "]":
            return i
        i += 1
    return None


#: RE2's options with its error log off: a pattern it cannot read is checked with ``re``
#: (a foreign pattern, detect-secrets', may be one), never a line on standard error
_QUIET = re2.Options()
_QUIET.log_errors = False


def _re2(pattern: str) -> Any:
    wide = widen(pattern)
    if wide is None:
        return None
    try:
        return re2.compile(wide, _QUIET)
    except re2.error:
        return None


@cache
def hits_of(
    pattern: str, engine: Literal["re2", "re"] = "re2"
) -> Callable[[str], Iterator[tuple[int, int]]]:
    """A function giving the spans of ``pattern`` in a string, left to right without
    overlaps; RE2 reads the widened pattern, so every place ``re`` would find lies in a
    span or in a run of characters touching one (how ``anchored.py`` uses them).
    ``engine="re"``: ``re`` alone, for a pattern every match of which starts with one
    literal character (``@``, ``://``, ``[Bb]earer``): ``re`` skips to that character at
    C speed, while RE2's wrapper costs more per call than such a scan (it copies the text
    and converts the offsets of every non-ASCII one): 0.04 s against 0.27 s for ``@`` over
    a 47 MB Codex store's strings.

    The same pattern gets the same function, which remembers the spans of the last string
    it was given: the credential and password rules share their keywords, and so the
    search of each string."""
    fast, slow = _re2(pattern) if engine == "re2" else None, re.compile(pattern)
    last: list[tuple[str, list[tuple[int, int]]]] = [("", [])]  # replaced whole: thread-safe

    def hits(text: str) -> Iterator[tuple[int, int]]:
        seen, spans = last[0]
        if seen is not text:
            # RE2 reports byte offsets, which its wrapper converts back to positions in a
            # string by walking its UTF-8; for ASCII text (``isascii`` costs nothing) the
            # two are the same, so it is given the bytes and nothing is converted.
            if fast is not None and text.isascii():
                matches = fast.finditer(text.encode("ascii"))
            elif fast is not None and _SURROGATE.search(text) is None:
                matches = fast.finditer(text)
            else:  # RE2 reads UTF-8, which a lone surrogate is not
                matches = slow.finditer(text)
            spans = [m.span() for m in matches]
            last[0] = (text, spans)
        return iter(spans)

    return hits


class TriggerSet:
    """Which of several triggers may occur in a string, in one RE2 pass (``re2.Set``) for
    those RE2 reads and one ``re`` search each for the others; "" is always there."""

    def __init__(self, triggers: Sequence[str]) -> None:
        self.always = [i for i, t in enumerate(triggers) if not t]
        self.slow: list[tuple[int, re.Pattern[str]]] = []
        self._set: Any = re2.Set.SearchSet(_QUIET)
        self._index: list[int] = []  # position in the RE2 set -> trigger index
        for i, t in enumerate(triggers):
            wide = widen(t) if t else None
            if t and wide is not None and _re2(t) is not None:
                self._set.Add(wide)
                self._index.append(i)
            elif t:
                self.slow.append((i, re.compile(t)))
        self._set.Compile()

    def which(self, text: str) -> set[int]:
        found = set(self.always)
        if self._index:
            try:
                matched = self._set.Match(text)
            except UnicodeEncodeError:  # a lone surrogate, which no trigger holds
                matched = self._set.Match(_SURROGATE.sub("\ufffd", text))
            found.update(self._index[k] for k in matched or ())
        found.update(i for i, p in self.slow if p.search(text) is not None)
        return found


def any_of(triggers: Sequence[str]) -> Callable[[str], bool]:
    """A function telling whether any of ``triggers`` (``re`` patterns) may occur in a string."""
    found = TriggerSet(triggers).which
    return lambda text: bool(found(text))
