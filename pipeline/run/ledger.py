"""What a unit read, exported, failed, dropped and redacted: the run's counts, typed.

Each stage records what happened through one method (``session_read``,
``session_exported``, ``session_failed``, ``redacted``, ``add``, ...), so a
session's fate is one call, not a pair of hand-written increments.  Ledgers
merge in unit order; the manifest's ``counts`` and ``redaction`` blocks and
the printed summary are built from the merged ledger, and ``check`` holds the
invariant "sessions read = exported + failed" once, at the end of every run.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import InvariantBroken

#: the places whose redactions are counted: the tree (findings) and every output
TREE = "tree"


@dataclass
class Ledger:
    """A unit's (or, merged, the run's) counts; ``counts`` is the flat view."""

    counts: Counter[str] = field(default_factory=Counter)
    #: place ("tree", "atif", a table) -> rule -> findings or placeholders
    redactions: dict[str, Counter[str]] = field(default_factory=dict)

    # ---- sessions: each one is read once and then exported or failed, once
    def session_read(self, n: int = 1) -> None:
        self.counts["sessions_read"] += n

    def session_exported(self) -> None:
        self.counts["sessions_exported"] += 1

    def session_failed(self, read: bool = False) -> None:
        """A session that fails; ``read`` when this is also where it was read (an error in
        place of a session, as a reader or the redactor gives it)."""
        if read:
            self.session_read()
        self.counts["sessions_failed"] += 1

    def session_filtered_out(self) -> None:
        self.counts["sessions_filtered_out"] += 1

    # ---- everything else
    def add(self, name: str, n: int = 1) -> None:
        """``n`` more of ``name`` (entries, trees, trajectories, units, ...)."""
        self.counts[name] += n

    def reader(self, counts: Mapping[str, int]) -> None:
        """What a reader counted of a session (``reader/<key>``)."""
        for key, n in counts.items():
            self.counts[f"reader/{key}"] += n

    def redacted(self, place: str, found: Mapping[str, int]) -> None:
        """Findings (``place`` "tree") or placeholders (an output) per rule."""
        if found:
            self.redactions.setdefault(place, Counter()).update(found)

    # ---- merging, checking, writing
    def merge(self, other: Ledger) -> None:
        self.counts.update(other.counts)
        for place, found in other.redactions.items():
            self.redacted(place, found)

    def check(self) -> None:
        """The run's invariant: every session read was exported or failed, once."""
        c = self.counts
        if c["sessions_read"] != c["sessions_exported"] + c["sessions_failed"]:
            raise InvariantBroken(
                f"sessions read ({c['sessions_read']}) != exported ({c['sessions_exported']}) "
                f"+ failed ({c['sessions_failed']}): a session was lost or counted twice; "
                "please report it with the input"
            )

    def findings(self) -> dict[str, int]:
        """Findings per rule in the trees, sorted."""
        return dict(sorted(self.redactions.get(TREE, Counter()).items()))

    def placeholders(self) -> dict[str, dict[str, int]]:
        """Placeholders per rule in each output, sorted."""
        return {
            place: dict(sorted(found.items()))
            for place, found in sorted(self.redactions.items())
            if place != TREE
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "counts": dict(sorted(self.counts.items())),
            "redactions": {p: dict(sorted(f.items())) for p, f in sorted(self.redactions.items())},
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Ledger:
        return cls(Counter(d["counts"]), {p: Counter(f) for p, f in d["redactions"].items()})
