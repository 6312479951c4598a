"""Literal secrets: values given with ``--secret`` or read from ``--secret-env`` variables.

Every occurrence in every string, a secret that contains another replaced
whole, as the reference ``Secrets`` redactor does, but with a numbered
placeholder instead of ``[REDACTED]``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass


@dataclass(frozen=True)
class LiteralSecrets:
    values: tuple[str, ...]
    name: str = "secrets_v1"
    opt_in: bool = False

    @classmethod
    def of(cls, values: list[str]) -> LiteralSecrets:
        kept = sorted({v for v in values if v}, key=lambda v: (-len(v.encode()), v))
        return cls(tuple(kept))

    @property
    def trigger(self) -> str:
        return "|".join(re.escape(v) for v in self.values) or "(?!)"

    def spans(self, text: str) -> Iterator[tuple[int, int]]:
        """Every occurrence of every value (one inside a longer one joins it)."""
        for value in self.values:
            start = text.find(value)
            while start >= 0:
                yield start, start + len(value)
                start = text.find(value, start + len(value))
