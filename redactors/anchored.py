"""``finditer`` of a pattern, tried only where a match can start: next to its anchor.

The assignment rules (``credential_assignment_v3``, ``password_assignment_v2``)
name a secret: every match starts inside one run of name characters
(``[a-z0-9_.-]`` under ``(?i)``) that holds a keyword such as ``pass`` or
``token``.  ``re`` tries such a pattern at every position of a string, which
made them most of the redaction time on long tool outputs.  Here RE2 finds the
keywords (``prefilter.hits_of``, never fewer than ``re`` would), each run
around a keyword is widened with ``re``'s own character class, and the pattern
is tried with ``re`` at every position of those runs, in order, continuing
after each match exactly as ``finditer`` does.  A position outside every such
run cannot start a match, so the matches are ``finditer``'s, one for one
(``tests/test_prefilter.py`` compares them on random text).  Where a pattern's
name must end where its run does (the next character, ``=`` or ``:``, is no
name character), a run not followed by what comes next is skipped whole: most
runs holding ``key`` or ``token`` in a tool's output are prose.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Literal, cast

from .prefilter import hits_of

NOWHERE = r"(?!)"  # a run class no character is in: matches start inside the keyword itself


@dataclass(frozen=True)
class Anchor:
    """Where matches start: in a run of ``run`` characters holding a hit of ``keyword``,
    and, with ``follow``, only in a run that ``follow`` matches right after (for a pattern
    whose run part must end where the run does: ``name=`` or ``name:``, never ``name is``)."""

    keyword: str
    run: str
    follow: str | None = None
    #: a match starts at most this many characters before the keyword and never after it
    #: (an e-mail's local part before its ``@``): only those places are tried
    before: int | None = None
    #: with ``before``: a match starts in the first this many places of the run before its
    #: keyword (an e-mail at its local part's first character, or after an escape there)
    first: int | None = None
    #: whether a match may start after its keyword's first character, in the run after it
    #: (a name holding two keywords); without, only the run before it and that character
    #: are tried (a URL's scheme before its ``://``)
    ahead: bool = True
    #: what finds the keyword (``prefilter.hits_of``): ``re`` for a keyword that starts
    #: with one literal character, RE2 for an alternation ``re`` would try at every place
    engine: Literal["re2", "re"] = "re2"
    _hits: Callable[[str], Iterator[tuple[int, int]]] = field(init=False, repr=False)
    _run: re.Pattern[str] = field(init=False, repr=False)
    _follow: re.Pattern[str] | None = field(init=False, repr=False)
    _back: re.Pattern[str] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        #: searched between a limit and a hit (``endpos``): where the run before it starts
        object.__setattr__(self, "_back", re.compile(f"(?:{self.run})*\\Z"))
        object.__setattr__(self, "_hits", hits_of(self.keyword, self.engine))
        object.__setattr__(self, "_run", re.compile(self.run))
        object.__setattr__(self, "_follow", re.compile(self.follow) if self.follow else None)

    def starts(self, text: str) -> Iterator[int]:
        """Every position where a match may start, ascending, each once."""
        if self.before is not None:
            yield from self._before(text, self.before)
            return
        done = 0
        for a, b in self._hits(text):
            if b <= done:
                continue
            left, right = max(a, done), b
            while left > done and self._run.match(text, left - 1):
                left -= 1
            while self.ahead and right < len(text) and self._run.match(text, right):
                right += 1
            if self._follow is None or self._follow.match(text, right):
                yield from range(left, right if self.ahead else a + 1)
            done = right

    def _before(self, text: str, most: int) -> Iterator[int]:
        """The run's places up to each hit (no further back than ``most``), the hit's
        first included; a place after a hit can only start a match before a later hit."""
        done, first = 0, self.first
        for a, _ in self._hits(text):
            if a < done:
                continue
            left = cast(re.Match[str], self._back.search(text, max(done, a - most), a)).start()
            yield from range(left, a + 1 if first is None else min(a + 1, left + first))
            done = a + 1

    def subn(self, pattern: re.Pattern[str], repl: str, text: str) -> tuple[str, int]:
        """``pattern.subn(repl, text)`` for a pattern whose matches start as described
        (``repl`` taken literally)."""
        out, last, n = [], 0, 0
        for m in self.finditer(pattern, text):
            out += [text[last : m.start()], repl]
            last, n = m.end(), n + 1
        return ("".join([*out, text[last:]]) if n else text), n

    def finditer(self, pattern: re.Pattern[str], text: str) -> Iterator[re.Match[str]]:
        """``pattern.finditer(text)`` for a pattern whose matches start as described."""
        pos = 0
        for s in self.starts(text):
            if s < pos:
                continue
            m = pattern.match(text, s)
            if m is not None:
                yield m
                pos = m.end() if m.end() > s else s + 1
