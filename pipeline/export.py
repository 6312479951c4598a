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
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from trajset.redactors import (
    Redactor,
    build_redactor,
    count_placeholders,
    selected_rules,
)
from trajset.schemas.tables import CONFIGS

from .atif import AtifOptions, to_atif
from .card import card
from .errors import BadRecord, OutputError, TrajsetError, UnitFailed, UsageError
from .filters import compile_where, matching
from .jsonio import dumps_compact
from .media import spill_media
from .parquet import assemble, read_part, to_table, write_part, write_single
from .preferences import TreeIndex, parse_policy, policy_label
from .rows import (
    PairStats,
    document_messages,
    fork_prompt,
    outcome_infos,
    preference_rows,
    step_rows,
    trajectory_row,
)
from .session import Session
from .stats import Stats
from .stores import SessionIndex, Unit, discover
from .trajectories import Trajectory, trajectories
from .writer import Prepared, atomic_write, prepare_document, write_media, write_prepared

JSON = Any

MODES = ("error", "overwrite", "resume")
EXECUTORS = ("local", "ray")
MANAGED = ("atif", "data", "errors.parquet", "manifest.json", "README.md", ".trajset")


@dataclass(frozen=True)
class ExportOptions:
    """Resolved options of one export run; everything that shapes the data files."""

    prefer: tuple[str, ...] = ()
    store_kind: str = "auto"
    redact: bool = True
    redact_rules: tuple[
        str, ...
    ] = ()  # versioned names; empty with redact=True means the default set
    custom_rules: tuple[tuple[str, str], ...] = ()  # (versioned name, pattern) from --config
    secret_count: int = 0  # how many literal secrets were given (the values are never stored)
    where: str | None = None
    license: str = "other"

    def policies(self) -> list[Any]:
        return [parse_policy(p) for p in self.prefer]

    def builtin_rules(self) -> list[str]:
        if not self.redact:
            return []
        return list(self.redact_rules or selected_rules())

    def rule_names(self) -> list[str]:
        """The redaction rules in force, as versioned names (written into the manifest)."""
        return self.builtin_rules() + [name for name, _ in self.custom_rules if self.redact]

    def redactor(self, secrets: list[str]) -> Redactor:
        return build_redactor(
            self.builtin_rules(),
            secrets=secrets,
            custom=[{"name": n, "pattern": p} for n, p in self.custom_rules] if self.redact else [],
        )


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
            f"entry {exc.entry_id}: {exc.message}"
            if exc.entry_id and exc.entry_id not in exc.message
            else exc.message,
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


def _init_worker(out: str, options: ExportOptions, index: SessionIndex, secrets: list[str]) -> None:
    redactor = options.redactor(secrets)
    _WORKER.update(
        out=Path(out),
        options=options,
        index=index,
        redactor=redactor,
        policies=options.policies(),
        where=compile_where(options.where) if options.where else None,
    )


def _redacted_errors(errors: list[ErrorRow]) -> list[ErrorRow]:
    """Error rows with paths and messages passed through the redactor (no leak via errors.parquet)."""
    r: Redactor = _WORKER["redactor"]
    if not r.active:
        return errors
    return [
        ErrorRow(r.plain_text(e.source), e.session_id, e.line, e.kind, r.plain_text(e.message))
        for e in errors
    ]


def _resolve_subsession(session_id: str) -> Session | None:
    """Linked subsessions are embedded in documents, so they are redacted like any tree."""
    child = _WORKER["index"].resolve(session_id)
    if child is None or not _WORKER["redactor"].active:
        return child
    return _WORKER["redactor"].session(child)[0]


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
    result = UnitResult(unit)
    result.fingerprint, result.bytes_read = _unit_fingerprint(unit)
    stats = result.stats
    with stats.timed("read") as st:
        st.taken += 1
        try:
            session = unit.load()
        except UnitFailed as exc:
            st.dropped[getattr(exc, "rule", exc.kind)] += 1
            result.errors = _redacted_errors([ErrorRow.of(exc, unit)])
            stats.counts["sessions_read"] += 1
            stats.counts["sessions_failed"] += 1
            _write_parts(out, unit, {}, result.errors)
            return result
        st.passed += 1
    redactor: Redactor = _WORKER["redactor"]
    if redactor.active:
        with stats.timed("redact") as st:
            st.taken += 1
            session, report = redactor.session(session)
            st.passed += 1
        for rule, n in report.findings.items():
            stats.counts[f"redacted/tree/{rule}"] += n
        stats.counts["redacted_entries"] += report.entries_changed
        stats.counts["redacted_hashed_context_entries"] += report.hashed_context_entries_changed
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
    tables = _export_session(session, unit, result)
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
    result.errors = _redacted_errors(result.errors)
    _write_parts(out, unit, tables, result.errors)
    if redactor.active:
        for table, rows in tables.items():
            for rule, n in count_placeholders(dumps_compact(rows)).items():
                stats.counts[f"redacted/{table}/{rule}"] += n
    return result


def _export_session(
    session: Session, unit: Unit, result: UnitResult
) -> dict[str, list[dict[str, Any]]]:
    """Documents and table rows of one session; writes the documents that pass ``--where``."""
    out: Path = _WORKER["out"]
    stats = result.stats
    policies = _WORKER["policies"]
    options = AtifOptions(subsessions=_resolve_subsession, preferences=policies)
    atif_dir = out / "atif"
    infos = outcome_infos(session)
    prepared: list[tuple[Trajectory, Prepared]] = []
    for item in _enumerate(session, stats):
        if isinstance(item, BadRecord):
            result.errors.append(ErrorRow.of(item, unit))
            continue
        with stats.timed("export") as st:
            st.taken += 1
            try:
                doc = to_atif(item, options)
                for rule, n in _WORKER["redactor"].document(doc).items():
                    stats.counts[f"redacted/atif/{rule}"] += n
                prepared.append((item, prepare_document(doc, item.main)))
                st.passed += 1
            except BadRecord as exc:
                exc.source = exc.source or session.source
                st.dropped[exc.kind] += 1
                result.errors.append(ErrorRow.of(exc, unit))
    with stats.timed("tables") as st:
        st.taken += len(prepared)
        anchored = [document_messages(p.doc, t.context.settings.instructions) for t, p in prepared]
        traj_rows = [
            trajectory_row(t, p.doc, f"atif/{p.name}", infos, msgs)
            for (t, p), msgs in zip(prepared, anchored, strict=True)
        ]
        keep = (
            matching(traj_rows, _WORKER["where"])
            if _WORKER["where"] is not None
            else [True] * len(prepared)
        )
        st.dropped["where"] += keep.count(False)
        st.passed += keep.count(True)
        kept = [(t, p, r) for (t, p), r, k in zip(prepared, traj_rows, keep, strict=True) if k]
        kept_leaves = {t.leaf_id for t, _, _ in kept}
        leaf_msgs = {
            t.leaf_id: m for (t, _), m, k in zip(prepared, anchored, keep, strict=True) if k
        }
        pair_stats = PairStats()

        def prompt_of(fork: str) -> tuple[list[dict[str, Any]], Any]:
            doc, settings = fork_prompt(session, fork)
            spilled, media = spill_media(doc)
            write_media(atif_dir, media)
            return [m for m, _ in document_messages(spilled, settings.instructions)], settings

        pairs = preference_rows(
            session, TreeIndex(session), policies, leaf_msgs, prompt_of, pair_stats
        )
        outcomes = []
        for info in infos:
            row = dict(info.row)
            row["leaf_ids"] = [leaf for leaf in row["leaf_ids"] if leaf in kept_leaves]
            outcomes.append(row)
    with stats.timed("write") as st:
        for _, p, _ in kept:
            st.taken += 1
            data = write_prepared(atif_dir, p)
            if _WORKER["redactor"].active:
                for rule, n in count_placeholders(data.decode("utf-8")).items():
                    stats.counts[f"redacted/atif/{rule}"] += n
            st.passed += 1
            result.documents.append(p.name)
    stats.counts["trajectories"] += len(kept)
    stats.counts["trajectories_filtered_out"] += len(prepared) - len(kept)
    stats.counts["steps"] += sum(len(p.doc["steps"]) for _, p, _ in kept)
    stats.counts["pairs"] += pair_stats.built
    stats.counts["pairs_dropped_identical"] += pair_stats.dropped_identical
    stats.counts["pairs_dropped_unexported"] += pair_stats.dropped_unexported
    stats.counts["outcomes"] += len(outcomes)
    return {
        "trajectories": [r for _, _, r in kept],
        "steps": [row for t, p, _ in kept for row in step_rows(t, p.doc)],
        "outcomes": outcomes,
        "preferences": pairs,
    }


def _part(out: Path, unit: Unit, table: str) -> Path:
    return out / ".trajset" / "parts" / table / (_unit_key(unit) + ".arrow")


def _write_parts(
    out: Path, unit: Unit, tables: dict[str, list[dict[str, Any]]], errors: list[ErrorRow]
) -> None:
    for name in CONFIGS:
        write_part(_part(out, unit, name), to_table(name, tables.get(name, [])))
    write_part(_part(out, unit, "errors"), to_table("errors", [asdict(e) for e in errors]))


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


def _unit_key(unit: Unit) -> str:
    return hashlib.sha256(unit.label.encode()).hexdigest()[:24]


def _marker(out: Path, unit: Unit) -> Path:
    return out / ".trajset" / "units" / (_unit_key(unit) + ".json")


def _result_to_json(r: UnitResult) -> dict[str, Any]:
    """The completion marker: everything the run needs from a finished unit except its identity
    (the marker's file name is the unit's key; the input path is not stored, it may hold a home path)."""
    return {
        "session_id": r.session_id,
        "exported": r.exported,
        "documents": r.documents,
        "errors": [asdict(e) for e in r.errors],
        "stats": r.stats.to_json(),
        "bytes_read": r.bytes_read,
        "fingerprint": r.fingerprint,
    }


def _result_from_json(d: dict[str, Any], unit: Unit) -> UnitResult:
    return UnitResult(
        unit,
        d["session_id"],
        d["exported"],
        d["documents"],
        [ErrorRow(**e) for e in d["errors"]],
        Stats.from_json(d["stats"]),
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
    secrets: list[str] | None = None,
) -> RunResult:
    """Process every unit (in a process pool when ``workers > 1``) and merge in unit order."""
    index = SessionIndex(units)
    start = time.perf_counter()
    done: dict[int, UnitResult] = {}
    todo: list[tuple[int, Unit]] = []
    for i, u in enumerate(units):
        marker = _marker(out, u)
        if resume and marker.exists():
            done[i] = _result_from_json(json.loads(marker.read_text()), u)
        else:
            todo.append((i, u))

    def finish(i: int, r: UnitResult) -> None:
        atomic_write(_marker(out, r.unit), json.dumps(_result_to_json(r)).encode())
        done[i] = r
        if progress:
            progress(len(done), len(units))

    if workers <= 1 or len(todo) <= 1:
        _init_worker(str(out), options, index, secrets or [])
        for i, u in todo:
            finish(i, process_unit(u))
    else:
        with ProcessPoolExecutor(
            max_workers=workers,
            initializer=_init_worker,
            initargs=(str(out), options, index, secrets or []),
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


def redaction_report(options: ExportOptions, counts: dict[str, int]) -> JSON:
    """Findings per rule in the trees and placeholders per rule in every output; never plaintext."""
    outputs: dict[str, dict[str, int]] = {}
    for key, n in sorted(counts.items()):
        if key.startswith("redacted/"):
            _, where, rule = key.split("/", 2)
            outputs.setdefault(where, {})[rule] = n
    return {
        "rules": options.rule_names(),
        "findings": outputs.pop("tree", {}),
        "outputs": outputs,
        "entries_changed": counts.get("redacted_entries", 0),
        "hashed_context_entries_changed": counts.get("redacted_hashed_context_entries", 0),
        "note": "request hashes of responses whose context was redacted no longer verify; this is expected",
    }


def write_manifest(
    out: Path, options: ExportOptions, run: RunResult, version: str, redactor: Redactor
) -> JSON:
    counts = dict(sorted(run.stats.counts.items()))
    manifest = {
        "trajset_version": version,
        "options": {
            "prefer": [policy_label(p) for p in options.policies()] or ["latest"],
            "store_kind": options.store_kind,
            "redact": options.redact,
            "where": options.where,
            "license": options.license,
        },
        "inputs": [
            {
                "source": redactor.plain_text(r.unit.label),
                "session_id": r.session_id,
                "sha256": r.fingerprint,
                "bytes": r.bytes_read,
            }
            for r in run.units
        ],
        "counts": {k: v for k, v in counts.items() if not k.startswith("redacted")},
        "errors": len(run.errors),
        "redaction": redaction_report(options, counts),
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
    secrets: list[str] | None = None,
) -> RunResult:
    """The whole ``trajset export`` job; raises ``AbortRun`` subclasses for usage and output problems."""
    units = discover(stores, options.store_kind)
    options.policies()  # fail early on a bad --prefer
    redactor = options.redactor(secrets or [])  # fail early on a bad rule
    for store in stores:
        if out.resolve().is_relative_to(store.resolve()) and store.is_dir():
            raise UsageError(
                f"--out {out} lies inside the store {store}; choose a folder outside it"
            )
    if options.where:
        compile_where(options.where)  # fail early on a bad --where
    prepare_output(out, mode)
    _check_resumable(out, options, mode)
    run = run_units(
        units,
        out,
        options,
        workers=workers,
        resume=mode == "resume",
        progress=progress,
        secrets=secrets,
    )
    with run.stats.timed("assemble"):
        for name in CONFIGS:
            assemble(out, name, [_part(out, r.unit, name) for r in run.units])
        errors = [read_part(_part(out, r.unit, "errors")) for r in run.units]
        write_single(out / "errors.parquet", pa.concat_tables([to_table("errors", []), *errors]))
    manifest = write_manifest(out, options, run, version, redactor)
    atomic_write(out / "README.md", card(manifest, options.license).encode())
    return run


def _check_resumable(out: Path, options: ExportOptions, mode: str) -> None:
    """``--mode resume`` only finishes a run made with the same options."""
    saved = out / ".trajset" / "options.json"
    current = json.dumps(asdict(options), sort_keys=True)
    if mode == "resume" and saved.exists() and saved.read_text() != current:
        raise UsageError(
            f"--mode resume: {out} was started with other options ({saved.read_text()}); "
            "resume with the same options or use --mode overwrite"
        )
    atomic_write(saved, current.encode())


def default_workers() -> int:
    return max(
        1,
        len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1),
    )
