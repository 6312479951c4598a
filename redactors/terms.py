"""``term_v1``: the names a team lists (``--redact-terms FILE``): people, companies, codenames,
hostnames, internal domains.

A term is found case-insensitively wherever no letter or digit touches it:
as a word, and inside paths, URLs, e-mail local parts and identifiers
(``/srv/acme/``, ``acme-internal``, ``bluebird_v2``, ``bluebird@corp``).  The
spaces of a term of several words also match ``.``, ``_`` and ``-``
(``alice.johnson@``).  Every spelling of one term is numbered as one value:
``Acme`` and ``ACME`` are both ``[REDACTED:term:1]``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .base import Rule, RuleError

NAME = "term_v1"
#: the shortest term accepted; shorter ones would match inside ordinary words' neighbours
TERM_FLOOR = 3
_SPACES = re.compile(r"\s+")


def _pattern(term: str) -> str:
    return r"[\s._-]+".join(re.escape(word) for word in term.split())


@dataclass(frozen=True)
class Terms(Rule):
    """Every listed term, longest first (so ``Acme Corp`` is found whole, not as ``Acme``)."""

    terms: tuple[str, ...] = field(default=(), repr=False)

    @classmethod
    def of(cls, terms: Sequence[str]) -> Terms:
        kept = sorted({_SPACES.sub(" ", t.strip()) for t in terms if t.strip()},
                      key=lambda t: (-len(t), t.casefold()))  # fmt: skip
        for t in kept:
            if len(t) < TERM_FLOOR:
                raise RuleError(
                    f"--redact-terms: a term of {len(t)} character(s) would match ordinary text; "
                    f"give terms of at least {TERM_FLOOR} characters (the term is not shown)"
                )
        words = "|".join(_pattern(t) for t in kept) or "(?!)"
        pattern = re.compile(rf"(?<![A-Za-z0-9])(?:{words})(?![A-Za-z0-9])", re.IGNORECASE)
        return cls(NAME, pattern, f"(?i:{words})", terms=tuple(kept))

    def key(self, found: str) -> str:
        """The value a finding is numbered by: its term, whatever its case and separators."""
        return " ".join(re.split(r"[\s._-]+", found.casefold()))


def read_terms(path: Path) -> list[str]:
    """The terms of a ``--redact-terms`` file: one per line; blank lines and ``#`` comments
    are skipped.  ``RuleError`` when it cannot be read."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise RuleError(f"--redact-terms {path}: cannot read it ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise RuleError(f"--redact-terms {path}: not UTF-8 text") from None
    lines = (line.strip() for line in text.splitlines())
    return [line for line in lines if line and not line.startswith("#")]
