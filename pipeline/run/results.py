"""What a unit and a run hand back: sessions, documents, error rows, stats, input facts."""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any

from trajset.redactors import Redactor
from trajset.schemas.records import ErrorRow

from ..flags import FLAGS
from ..options import ExportOptions, RunOptions
from ..outputs.manifest import FORMAT_VERSION
from ..outputs.row_checks import COUNTED, found
from ..stores import SKIPS_LISTED, Unit
from ..tables.tool_schemas import Shapes
from .batches import Batch
from .dedup import Digests
from .ledger import Ledger
from .stats import Stats


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
    ledger: Ledger = field(default_factory=Ledger)
    traces: list[str] = field(default_factory=list)  # paths below the output folder

    def to_json(self) -> dict[str, Any]:
        return {
            "session_ids": self.session_ids,
            "exported": self.exported,
            "documents": self.documents,
            "traces": self.traces,
            "errors": [asdict(e) for e in self.errors],
            "stats": self.stats.to_json(),
            "ledger": self.ledger.to_json(),
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
            Ledger.from_json(d["ledger"]),
            d.get("traces", []),
        )


#: (rows, in-memory bytes) of each table a part holds rows of
PartFacts = dict[str, tuple[int, int]]


@dataclass
class BatchResult:
    """A batch's unit results and the parts it wrote, in order; what its marker keeps."""

    batch: Batch
    units: list[UnitResult] = field(default_factory=list)
    parts: list[PartFacts] = field(default_factory=list)
    #: each part's row digests per table (``dedup.digests``; none with ``--dedup off``)
    digests: list[Digests] = field(default_factory=list)
    #: each part's tool-call shapes (``tool_schemas.call_shapes`` of its ``sft`` rows)
    shapes: list[Shapes] = field(default_factory=list)
    #: the process that ran the batch (its marker says so; no data file does)
    worker: int = field(default_factory=os.getpid)

    def to_json(self) -> dict[str, Any]:
        return {
            "units": [r.to_json() for r in self.units],
            "parts": self.parts,
            "digests": self.digests,
            "shapes": self.shapes,
            "worker": self.worker,
        }

    @classmethod
    def from_marker(cls, batch: Batch, d: dict[str, Any] | None) -> BatchResult | None:
        """The batch's result from its marker; None without one or with one of an older
        layout (written before batches kept a ledger and an audit: the batch runs again)."""
        if d is None or not isinstance(d.get("units"), list) or len(d["units"]) != len(batch):
            return None
        if "shapes" not in d or not all(isinstance(u, dict) and "ledger" in u for u in d["units"]):
            return None
        if not all(isinstance(p, dict) for p in d.get("digests", [])):
            return None  # digests of sft rows alone, before pairs had any: run it again
        return cls.from_json(batch, d)

    @classmethod
    def from_json(cls, batch: Batch, d: dict[str, Any]) -> BatchResult:
        units = [UnitResult.from_json(u, r) for u, r in zip(batch, d["units"], strict=True)]
        parts = [{k: (v[0], v[1]) for k, v in p.items()} for p in d["parts"]]
        return cls(batch, units, parts, d["digests"], d["shapes"], d.get("worker", 0))


class InputLog(list[dict[str, Any]]):
    """The manifest's ``inputs``, one entry per unit, spooled to a file as results arrive
    (held in memory they would grow with the store).  Iterating reads them back in order;
    ``json.dump`` writes a list subclass through iteration, so the manifest streams it."""

    def __init__(self, path: Path, source: Callable[[str], str]) -> None:
        super().__init__()
        self.path, self.source, self.written = path, source, 0
        self._fh: IO[str] | None = None

    def add(self, r: UnitResult) -> None:
        """The unit's entry: its source (as ``source`` shows it), session ids and fingerprint."""
        entry: dict[str, Any] = {"source": self.source(r.unit.label)}
        if len(r.session_ids) > 1:
            entry["session_ids"] = r.session_ids
        else:
            entry["session_id"] = r.session_ids[0] if r.session_ids else ""
        entry |= {"sha256": r.fingerprint, "bytes": r.bytes_read}
        if self._fh is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fh = open(self.path, "w" if not self.written else "a", encoding="utf-8")  # noqa: SIM115
        self._fh.write(json.dumps(entry) + "\n")
        self.written += 1

    def close(self) -> None:
        """Flush and close the spool (reading it back closes it too)."""
        if self._fh is not None:
            self._fh.close()
            self._fh = None

    def __len__(self) -> int:
        return self.written

    def __iter__(self) -> Iterator[dict[str, Any]]:
        self.close()
        if not self.written:
            return
        if not self.path.exists():
            raise FileNotFoundError(
                f"{self.path} is gone: a finished run's inputs are in manifest.json"
            )
        with open(self.path, encoding="utf-8") as fh:
            for line in fh:
                yield json.loads(line)


@dataclass
class RunResult:
    """What a run keeps: the merged stats, every error row, the input size and time, and
    the manifest's input entries (spooled to a file); no result per unit."""

    inputs: InputLog
    stats: Stats = field(default_factory=Stats)
    ledger: Ledger = field(default_factory=Ledger)
    errors: list[ErrorRow] = field(default_factory=list)
    bytes_read: int = 0
    seconds: float = 0.0
    #: batches run by the executor (not taken from a previous run's markers)
    batches_run: int = 0
    #: (path, reason) of every path below a folder store that no unit reads, sorted
    skipped: list[tuple[str, str]] = field(default_factory=list)

    @property
    def counts(self) -> Counter[str]:
        """What the run counted (``Ledger.counts``): sessions, trees, trajectories, units, ..."""
        return self.ledger.counts

    def manifest(
        self,
        options: ExportOptions,
        how: RunOptions,
        version: str,
        redactor: Redactor,
        tables: dict[str, Any] | None = None,
        dedup: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """What ``manifest.json`` holds of the run (its ``inputs`` streamed from the spool)."""
        counts = dict(sorted(self.counts.items()))
        return {
            "trajset_version": version,
            "format_version": FORMAT_VERSION,
            "options": {  # what each option declares of itself (flags.FLAGS)
                key: show(options) for f in FLAGS if f.manifest for key, show in [f.manifest]
            },
            "inputs": self.inputs,
            "counts": {k: v for k, v in counts.items() if not k.startswith(("redacted", COUNTED))},
            "row_checks": found(counts),
            "errors": len(self.errors),
            "skipped": [
                {"path": redactor.plain_text(path), "reason": reason}
                for path, reason in self.skipped[:SKIPS_LISTED]
            ],
            "redaction": redaction_report(options, self.ledger, redactor),
            "dedup": dedup or {},
            "settings": how.settings.to_json(),
            "stages": {k: v.to_json() for k, v in self.stats.stages.items()},
            "tables": tables or {},
        }

    def add(self, r: UnitResult) -> None:
        """Keep what the manifest, ``errors.parquet`` and the summary need of a unit's result."""
        self.stats.merge(r.stats)
        self.ledger.merge(r.ledger)
        self.errors.extend(r.errors)
        self.bytes_read += r.bytes_read
        self.inputs.add(r)


def redaction_report(options: ExportOptions, ledger: Ledger, redactor: Redactor) -> dict[str, Any]:
    """Findings per rule in the trees and placeholders per rule in every output; never plaintext."""
    counts = ledger.counts
    return {
        "rules": options.rule_names(),
        "version": options.redaction_version(),  # on every row (``redaction_version``)
        "secrets": options.secret_count,  # how many --secret values and --redact-terms, and
        "terms": options.term_count,  # identities per kind given a pseudonym: never the values
        "identities": redactor.identities,
        "findings": ledger.findings(),
        "outputs": ledger.placeholders(),
        "entries_changed": counts.get("redacted_entries", 0),
        "hashed_context_entries_changed": counts.get("redacted_hashed_context_entries", 0),
        "note": "request hashes of responses whose context was redacted no longer verify; this is expected",
    }
