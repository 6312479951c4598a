"""``--split NAME=FRACTION`` and ``--split-by COLUMN``: splits by session, so no tree leaks.

Every row of every table belongs to a session, and a session's trees (with every branch
and every pair of them) fall in one split, so no shared prefix is on both sides of an
evaluation.  A session's place is a stable hash of its id, ``u`` in [0, 1): the splits
take consecutive intervals of it in the order given (``validation=0.05 test=0.05``:
``u < 0.05`` is validation, ``u < 0.10`` test) and the rest is ``train``, so a session
keeps its split when the store grows.  ``--split-by COLUMN`` stratifies: within each
value of the column (on the session's preferred path), the sessions are ranked by ``u``
and each split takes its share of them, rounded, so a small store still gets every
value in every split in proportion (a session may then move as the store grows).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from typing import Any

from .errors import UsageError

TRAIN = "train"
NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")

#: (split name, fraction) in the order given; the rest of the sessions is train
Splits = tuple[tuple[str, float], ...]


def parse_splits(values: Iterable[str]) -> Splits:
    """``NAME=FRACTION`` values, checked; ``UsageError`` saying what is wrong and how to fix it."""
    out: list[tuple[str, float]] = []
    for value in values:
        name, eq, fraction = str(value).partition("=")
        try:
            f = float(fraction) if eq else -1.0
        except ValueError:
            f = -1.0
        if not NAME_RE.match(name) or name == TRAIN or not 0 < f < 1:
            raise UsageError(
                f"--split {value!r}: give NAME=FRACTION, a name of letters, digits and _ other "
                "than train, and a fraction between 0 and 1, e.g. --split test=0.05"
            )
        if name in dict(out):
            raise UsageError(f"--split {name} is given twice")
        out.append((name, f))
    if sum(f for _, f in out) >= 1:
        raise UsageError("--split fractions add up to 1 or more: train would be empty")
    return tuple(out)


def place(session_id: str) -> float:
    """A session's stable place in [0, 1): the first 64 bits of SHA-256 of its id."""
    return int.from_bytes(hashlib.sha256(session_id.encode()).digest()[:8], "big") / 2**64


def split_names(splits: Splits) -> list[str]:
    """Every split, ``train`` first."""
    return [TRAIN, *(n for n, _ in splits)]


def by_place(session_id: str, splits: Splits) -> str:
    u, upper = place(session_id), 0.0
    for name, fraction in splits:
        upper += fraction
        if u < upper:
            return name
    return TRAIN


def assign(strata: Mapping[str, Any], splits: Splits, stratified: bool) -> dict[str, str]:
    """Session id -> its split, for the sessions not in ``train``; ``strata`` maps every
    session to its value of the ``--split-by`` column (ignored unless ``stratified``)."""
    if not splits:
        return {}
    if not stratified:
        return {s: n for s in strata if (n := by_place(s, splits)) != TRAIN}
    groups: dict[str, list[str]] = {}
    for sid, value in strata.items():
        groups.setdefault(repr(value), []).append(sid)
    out: dict[str, str] = {}
    for sessions in groups.values():
        ranked = sorted(sessions, key=lambda s: (place(s), s))
        start, upper = 0, 0.0
        for name, fraction in splits:
            upper += fraction
            end = round(upper * len(ranked))
            out.update(dict.fromkeys(ranked[start:end], name))
            start = max(start, end)
    return out
