"""Literal secrets: values given with ``--secret`` or read from ``--secret-env`` variables.

Replaced longest first (so a secret that contains another is replaced
whole), every occurrence in every string, as the reference ``Secrets``
redactor does, but with a numbered placeholder instead of ``[REDACTED]``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .base import Placeholders


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

    def apply(self, text: str, placeholders: Placeholders) -> str:
        for value in self.values:
            if value in text:
                parts = text.split(value)
                text = placeholders(self.name, value).join(parts)
                placeholders.findings[self.name] += len(parts) - 2
        return text
