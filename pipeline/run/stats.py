"""Per-stage counters: what each stage took, passed on, dropped (by reason) and its time.

Stats are plain data so workers can send them back and the run can merge
them in unit order; the manifest keeps the merged form (``stages``).  What
the run counted of sessions, trees and redactions is the ``Ledger``'s.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any


@dataclass
class StageStats:
    taken: int = 0
    passed: int = 0
    dropped: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0

    def merge(self, other: StageStats) -> None:
        self.taken += other.taken
        self.passed += other.passed
        self.dropped.update(other.dropped)
        self.seconds += other.seconds

    def to_json(self) -> dict[str, Any]:
        return {
            "taken": self.taken,
            "passed": self.passed,
            "dropped": dict(sorted(self.dropped.items())),
            "seconds": round(self.seconds, 6),
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> StageStats:
        return cls(d["taken"], d["passed"], Counter(d["dropped"]), d["seconds"])


@dataclass
class Stats:
    stages: dict[str, StageStats] = field(default_factory=dict)

    def stage(self, name: str) -> StageStats:
        return self.stages.setdefault(name, StageStats())

    @contextmanager
    def timed(self, name: str) -> Iterator[StageStats]:
        stage = self.stage(name)
        start = time.perf_counter()
        try:
            yield stage
        finally:
            stage.seconds += time.perf_counter() - start

    def merge(self, other: Stats) -> None:
        for name, st in other.stages.items():
            self.stage(name).merge(st)

    def to_json(self) -> dict[str, Any]:
        return {"stages": {k: v.to_json() for k, v in self.stages.items()}}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Stats:
        return cls({k: StageStats.from_json(v) for k, v in d["stages"].items()})
