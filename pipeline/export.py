"""The export run: units -> sessions -> trajectories -> ATIF documents (DESIGN §2).

``run_export`` discovers the units, processes each one start to finish in a
worker (``process_unit``), and merges the results in unit order, so the
output does not depend on the worker count.  A unit leaves a completion
marker under ``DIR/.trajset/units/``; ``--mode resume`` skips the units
that have one.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .atif import AtifOptions, to_atif
from .errors import BadRecord, OutputError, TrajsetError, UnitFailed, UsageError
from .preferences import parse_policy, policy_label
from .stats import Stats
from .stores import SessionIndex, Unit, discover
from .trajectories import Trajectory, trajectories
from .writer import atomic_write, write_document

JSON = Any

MODES = ("error", "overwrite", "resume")
EXECUTORS = ("local", "ray")
MANAGED = ("atif", "data", "errors.parquet", "manifest.json", "README.md", ".trajset")


@dataclass(frozen=True)
class ExportOptions:
    """Resolved options of one export run; everything that shapes the data files."""

    prefer: tuple[str, ...] = ()
    store_kind: str = "auto"
    redact: bool = False

    def policies(self) -> list[Any]:
        return [parse_policy(p) for p in self.prefer]


@dataclass
class ErrorRow:
    source: str
    session_id: str
    line: int | None
    kind: str
    message: str

    @classmethod
    def of(cls, exc: TrajsetError, unit: Unit) -> ErrorRow:
        return cls(
            exc.source or unit.label,
            exc.session_id,
            exc.line,
            getattr(exc, "rule", "") or exc.kind,
            str(exc.message),
        )


@dataclass
class UnitResult:
    unit: Unit
    session_id: str = ""
    exported: bool = False
    documents: list[str] = field(default_factory=list)
    errors: list[ErrorRow] = field(default_factory=list)
    stats: Stats = field(default_factory=Stats)
    bytes_read: int = 0
    fingerprint: str = ""


# --------------------------------------------------------------------------- worker side

_WORKER: dict[str, Any] = {}


def _init_worker(out: str, options: ExportOptions, index: SessionIndex) -> None:
    _WORKER.update(out=Path(out), options=options, index=index, policies=options.policies())


def _unit_fingerprint(unit: Unit) -> tuple[str, int]:
    if unit.kind == "jsonl":
        try:
            data = Path(unit.path).read_bytes()
        except OSError:
            return "", 0
        return "sha256:" + hashlib.sha256(data).hexdigest(), len(data)
    return "", 0


def process_unit(unit: Unit) -> UnitResult:
    """Read, enumerate, export and write one unit; never raises for bad input."""
    out: Path = _WORKER["out"]
    index: SessionIndex = _WORKER["index"]
    result = UnitResult(unit)
    result.fingerprint, result.bytes_read = _unit_fingerprint(unit)
    stats = result.stats
    with stats.timed("read") as st:
        st.taken += 1
        try:
            session = unit.load()
        except UnitFailed as exc:
            st.dropped[getattr(exc, "rule", exc.kind)] += 1
            result.errors.append(ErrorRow.of(exc, unit))
            stats.counts["sessions_read"] += 1
            stats.counts["sessions_failed"] += 1
            return result
        st.passed += 1
    result.session_id = session.id
    stats.counts["sessions_read"] += 1
    stats.counts["entries"] += len(session.entries)
    if session.truncation is not None:
        t = session.truncation
        stats.counts["truncated_sessions"] += 1
        result.errors.append(
            ErrorRow(
                session.source,
                session.id,
                t.line,
                "truncated",
                f"final line cut short and left out ({t.reason}); the "
                f"{len(session.entries)} entries before it were exported",
            )
        )
    stats.counts["trees"] += len(session.roots())
    stats.counts["forks"] += len(session.forks())
    options = AtifOptions(subsessions=index.resolve, preferences=_WORKER["policies"])
    atif_dir = out / "atif"
    for item in _enumerate(session, stats):
        if isinstance(item, BadRecord):
            result.errors.append(ErrorRow.of(item, unit))
            continue
        with stats.timed("export") as st:
            st.taken += 1
            doc = to_atif(item, options)
            st.passed += 1
        with stats.timed("write") as st:
            st.taken += 1
            try:
                name, doc = write_document(atif_dir, doc, item.main)
            except BadRecord as exc:
                exc.source = exc.source or session.source
                st.dropped[exc.kind] += 1
                result.errors.append(ErrorRow.of(exc, unit))
                continue
            st.passed += 1
        result.documents.append(name)
        stats.counts["trajectories"] += 1
        stats.counts["steps"] += len(doc["steps"])
    result.exported = bool(result.documents)
    stats.counts["sessions_exported" if result.exported else "sessions_failed"] += 1
    if not result.exported and not any(e.kind != "truncated" for e in result.errors):
        result.errors.append(
            ErrorRow(
                session.source,
                session.id,
                None,
                "no_trajectory",
                "the session holds no entry that makes a step, so no document was written",
            )
        )
    return result


def _enumerate(session: Any, stats: Stats) -> Iterator[Trajectory | BadRecord]:
    gen = trajectories(session, _WORKER["policies"])
    while True:
        with stats.timed("enumerate") as st:
            try:
                item = next(gen)
            except StopIteration:
                return
            st.taken += 1
            if isinstance(item, BadRecord):
                st.dropped[item.kind] += 1
            else:
                st.passed += 1
        yield item


# --------------------------------------------------------------------------- run side


def prepare_output(out: Path, mode: str) -> None:
    """Apply ``--mode`` to the output folder."""
    if mode not in MODES:
        raise UsageError(f"unknown --mode {mode!r}; valid: {', '.join(MODES)}")
    if out.exists() and not out.is_dir():
        raise OutputError(f"--out {out} exists and is not a folder")
    existing = sorted(p.name for p in out.iterdir()) if out.exists() else []
    if mode == "error" and existing:
        raise OutputError(
            f"--out {out} is not empty; pass --mode overwrite to replace a previous export "
            "or --mode resume to finish one"
        )
    if mode == "overwrite" and existing:
        foreign = [n for n in existing if n not in MANAGED]
        if foreign:
            raise OutputError(
                f"--out {out} holds files trajset did not write ({', '.join(foreign[:3])}); "
                "refusing to overwrite it"
            )
        for name in existing:
            p = out / name
            shutil.rmtree(p) if p.is_dir() else p.unlink()
    out.mkdir(parents=True, exist_ok=True)


def _marker(out: Path, unit: Unit) -> Path:
    return (
        out
        / ".trajset"
        / "units"
        / (hashlib.sha256(unit.label.encode()).hexdigest()[:24] + ".json")
    )


def _result_to_json(r: UnitResult) -> dict[str, Any]:
    return {
        "unit": asdict(r.unit),
        "session_id": r.session_id,
        "exported": r.exported,
        "documents": r.documents,
        "errors": [asdict(e) for e in r.errors],
        "stats": {
            "counts": dict(r.stats.counts),
            "stages": {
                k: {
                    "taken": v.taken,
                    "passed": v.passed,
                    "dropped": dict(v.dropped),
                    "seconds": v.seconds,
                }
                for k, v in r.stats.stages.items()
            },
        },
        "bytes_read": r.bytes_read,
        "fingerprint": r.fingerprint,
    }


def _result_from_json(d: dict[str, Any]) -> UnitResult:
    from collections import Counter

    from .stats import StageStats

    stats = Stats(counts=Counter(d["stats"]["counts"]))
    for k, v in d["stats"]["stages"].items():
        stats.stages[k] = StageStats(v["taken"], v["passed"], Counter(v["dropped"]), v["seconds"])
    return UnitResult(
        Unit(**d["unit"]),
        d["session_id"],
        d["exported"],
        d["documents"],
        [ErrorRow(**e) for e in d["errors"]],
        stats,
        d["bytes_read"],
        d["fingerprint"],
    )


@dataclass
class RunResult:
    units: list[UnitResult]
    stats: Stats
    seconds: float
    bytes_read: int

    @property
    def errors(self) -> list[ErrorRow]:
        return [e for r in self.units for e in r.errors]


def run_units(
    units: list[Unit],
    out: Path,
    options: ExportOptions,
    *,
    workers: int = 1,
    resume: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> RunResult:
    """Process every unit (in a process pool when ``workers > 1``) and merge in unit order."""
    index = SessionIndex(units)
    start = time.perf_counter()
    done: dict[int, UnitResult] = {}
    todo: list[tuple[int, Unit]] = []
    for i, u in enumerate(units):
        marker = _marker(out, u)
        if resume and marker.exists():
            done[i] = _result_from_json(json.loads(marker.read_text()))
        else:
            todo.append((i, u))

    def finish(i: int, r: UnitResult) -> None:
        atomic_write(_marker(out, r.unit), json.dumps(_result_to_json(r)).encode())
        done[i] = r
        if progress:
            progress(len(done), len(units))

    if workers <= 1 or len(todo) <= 1:
        _init_worker(str(out), options, index)
        for i, u in todo:
            finish(i, process_unit(u))
    else:
        with ProcessPoolExecutor(
            max_workers=workers, initializer=_init_worker, initargs=(str(out), options, index)
        ) as pool:
            for (i, _), r in zip(
                todo, pool.map(process_unit, [u for _, u in todo], chunksize=1), strict=True
            ):
                finish(i, r)
    results = [done[i] for i in range(len(units))]
    stats = Stats()
    for r in results:
        stats.merge(r.stats)
    stats.counts["units"] = len(units)
    return RunResult(
        results, stats, time.perf_counter() - start, sum(r.bytes_read for r in results)
    )


def write_manifest(
    out: Path, stores: list[Path], options: ExportOptions, run: RunResult, version: str
) -> JSON:
    manifest = {
        "trajset_version": version,
        "options": {
            "prefer": [policy_label(p) for p in options.policies()] or ["latest"],
            "store_kind": options.store_kind,
            "redact": options.redact,
        },
        "inputs": [
            {
                "source": r.unit.label,
                "session_id": r.session_id,
                "sha256": r.fingerprint,
                "bytes": r.bytes_read,
            }
            for r in run.units
        ],
        "counts": dict(sorted(run.stats.counts.items())),
        "errors": len(run.errors),
        "stages": {k: v.to_json() for k, v in run.stats.stages.items()},
    }
    atomic_write(
        out / "manifest.json", (json.dumps(manifest, indent=2, ensure_ascii=False) + "\n").encode()
    )
    return manifest


def run_export(
    stores: list[Path],
    out: Path,
    options: ExportOptions,
    *,
    workers: int = 1,
    mode: str = "error",
    progress: Callable[[int, int], None] | None = None,
    version: str = "",
) -> RunResult:
    """The whole ``trajset export`` job; raises ``AbortRun`` subclasses for usage and output problems."""
    units = discover(stores, options.store_kind)
    options.policies()  # fail early on a bad --prefer
    for store in stores:
        if out.resolve().is_relative_to(store.resolve()) and store.is_dir():
            raise UsageError(
                f"--out {out} lies inside the store {store}; choose a folder outside it"
            )
    prepare_output(out, mode)
    run = run_units(
        units, out, options, workers=workers, resume=mode == "resume", progress=progress
    )
    write_manifest(out, stores, options, run, version)
    return run


def default_workers() -> int:
    return max(
        1,
        len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1),
    )


def print_err(msg: str) -> None:
    print(msg, file=sys.stderr)
