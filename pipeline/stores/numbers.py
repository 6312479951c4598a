"""Numbers a converting reader takes from a store: kept when a table column can hold them.

A token count, a duration or a score is a field of one record.  One beyond what its column
holds (``1e400``, ``NaN``, ``2**70``, a negative count) is that field's problem, not the
session's: the helpers here give None for it, and note an ``out_of_range`` problem naming
the file, line and field in the list of notes it is given: a ``SessionDraft``'s, so each
becomes an error row of the session the value belongs to and counts in the manifest's
``reader/values_out_of_range``; the rest of the session exports.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from contextlib import suppress
from typing import Any

from trajset.schemas.session import Issue

JSON = Any
#: what the tables' 64-bit integer columns hold
INT64 = 2**63
#: the count a session's notes add to, per session (``Session.counts``)
COUNT = "values_out_of_range"


def _shown(value: JSON) -> str:
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:20]}…({len(text)} characters)"


def note(
    notes: list[Issue],
    value: JSON,
    field: str,
    source: str,
    line: int | None,
    holds: str,
    instead: str = "written as null",
) -> None:
    """Note in ``notes`` that ``field`` (of ``source`` at ``line``) holds ``value``, which no
    column that holds ``holds`` can; the export writes null for it (or does what ``instead``
    says)."""
    message = f"{field}: {_shown(value)} is not {holds}; {instead}, the rest is read"
    notes.append(Issue("out_of_range", line, message, source))


def count(notes: list[Issue], value: JSON, field: str, source: str, line: int | None) -> int | None:
    """``value`` as a count (0 up to 2**63 - 1, integral): 0 when it is missing (None or
    ""), None (noted in ``notes``) when it is anything else."""
    if value is None or value == "":
        return 0
    if isinstance(value, str):
        with suppress(ValueError):
            value = int(value)
            notes.append(Issue("bad_field", line, f"{field}: {_shown(str(value))} is text, "
                               "not a number; read as its number", source))  # fmt: skip
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        value = int(value)
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < INT64:
        return value
    note(notes, value, field, source, line, "a count a 64-bit integer holds")
    return None


def cost(
    notes: list[Issue], value: JSON, field: str, source: str, line: int | None
) -> float | None:
    """``value`` as a cost in US dollars (a finite number, at least 0): None when it is
    missing, None (noted in ``notes``) when it is anything else."""
    if value is None or value == "":
        return None
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if number and math.isfinite(value) and value >= 0:
        return float(value)
    note(notes, value, field, source, line, "a cost in US dollars (a finite number, at least 0)")
    return None


def counts(
    notes: list[Issue],
    d: Mapping[str, JSON],
    keys: Iterable[str],
    where: str,
    source: str,
    line: int | None,
) -> list[int] | None:
    """Each of ``keys`` of ``d`` as a count (``count``; a missing one is 0), or None when one
    is out of range: a usage whose members do not all read is left out as a whole, as the
    members depend on each other (a total, the cached share of the input)."""
    got = [count(notes, d.get(k), f"{where}.{k}", source, line) for k in keys]
    return None if any(n is None for n in got) else [n for n in got if n is not None]


def usage(
    inp: int, out: int, cached: int = 0, reasoning: int = 0, total: int = 0
) -> dict[str, JSON]:
    """An Open Responses ``usage`` of one model call from its counts (``inp`` holds the
    cached tokens; ``out`` the reasoning ones; ``total`` as the store gave it, else 0 for
    ``inp + out``)."""
    return {
        "input_tokens": inp,
        "output_tokens": out,
        "total_tokens": total or inp + out,
        "input_tokens_details": {"cached_tokens": cached},
        "output_tokens_details": {"reasoning_tokens": reasoning},
    }
