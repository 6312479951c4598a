"""What a unit and a run hand back: sessions, documents, error rows, stats, input facts."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from trajset.schemas.records import ErrorRow

from .batches import Batch
from .stats import Stats
from .stores import Unit


@dataclass
class UnitResult:
    """One unit's result; also what its completion marker keeps (without the unit's path)."""

    unit: Unit
    session_ids: list[str] = field(default_factory=list)
    exported: bool = False
    documents: list[str] = field(default_factory=list)
    errors: list[ErrorRow] = field(default_factory=list)
    stats: Stats = field(default_factory=Stats)
    bytes_read: int = 0
    fingerprint: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "session_ids": self.session_ids,
            "exported": self.exported,
            "documents": self.documents,
            "errors": [asdict(e) for e in self.errors],
            "stats": self.stats.to_json(),
            "bytes_read": self.bytes_read,
            "fingerprint": self.fingerprint,
        }

    @classmethod
    def from_json(cls, unit: Unit, d: dict[str, Any]) -> UnitResult:
        return cls(
            unit,
            d["session_ids"],
            d["exported"],
            d["documents"],
            [ErrorRow(**e) for e in d["errors"]],
            Stats.from_json(d["stats"]),
            d["bytes_read"],
            d["fingerprint"],
        )


#: (rows, in-memory bytes) of each table a part holds rows of
PartFacts = dict[str, tuple[int, int]]


@dataclass
class BatchResult:
    """A batch's unit results and the parts it wrote, in order; what its marker keeps."""

    batch: Batch
    units: list[UnitResult] = field(default_factory=list)
    parts: list[PartFacts] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"units": [r.to_json() for r in self.units], "parts": self.parts}

    @classmethod
    def from_json(cls, batch: Batch, d: dict[str, Any]) -> BatchResult:
        units = [UnitResult.from_json(u, r) for u, r in zip(batch, d["units"], strict=True)]
        parts = [{k: (v[0], v[1]) for k, v in p.items()} for p in d["parts"]]
        return cls(batch, units, parts)


@dataclass
class RunResult:
    """Every unit's result in unit order, the merged stats, and the run's time and input size."""

    units: list[UnitResult]
    stats: Stats
    seconds: float
    bytes_read: int
    #: (path, reason) of every path below a folder store that no unit reads, sorted
    skipped: list[tuple[str, str]] = field(default_factory=list)

    @property
    def errors(self) -> list[ErrorRow]:
        return [e for r in self.units for e in r.errors]
