"""The per-unit chain and the context it runs in (DESIGN §2).

::

    Unit ─read─▶ SessionInput ─redact─▶ SessionInput ─enumerate─▶ SessionTrajectories
         ─export─▶ SessionExport ─where─▶ SessionExport ─tables+write─▶ UnitResult

Each stage is a generator over the records of one unit (a unit may hold
several sessions; from ``export`` on, a session travels in slices of ``SLICE``
trajectories, so its documents are written and released slice by slice; the
last stage, tables+write, is ``emit``), counts what it took, passed on and
dropped (by reason) in the unit's ``Stats`` and times itself.
``jobs.process_unit`` runs a unit through the chain; an executor runs batches
of units.  Nothing here is module state:
``jobs.BatchJob`` carries the frozen ``RunContext`` to any process an executor
runs it in and builds what it derives from the options once per job.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from trajset.redactors import Redactor
from trajset.schemas.records import (
    ErrorRow,
    ExportedTrajectory,
    ForkPrompts,
    SessionExport,
    SessionInput,
    SessionTrajectories,
    Trajectory,
)
from trajset.schemas.session import Session

from .atif import AtifOptions, to_atif
from .errors import (
    BadRecord,
    ContextError,
    SessionReadError,
    TrajsetError,
    UnitFailed,
    UnitSkipped,
)
from .options import ExportOptions
from .outputs.documents import prepare_document
from .results import UnitResult
from .stats import Stats
from .stores import Index, SessionIndex, Unit, linked_sessions, load_unit
from .tables import where as where_filter
from .tables.messages import document_messages, fork_prompt
from .tables.trajectories import scalars
from .tree import TreeIndex, decide, outcome_records, trajectories
from .tree.policies import Policy

if TYPE_CHECKING:
    import polars as pl

#: trajectories per slice of a session: what a worker holds the documents of at once
SLICE = 16


@dataclass(frozen=True)
class RunContext:
    """Everything a unit's processing depends on; frozen, picklable, passed explicitly."""

    out: Path
    options: ExportOptions
    secrets: tuple[str, ...] = ()
    index: Index = field(default_factory=SessionIndex)
    rank: int = 0
    world_size: int = 1


@dataclass
class Runtime:
    """What a worker derives from the options once: the redactor, the policies, the filter."""

    redactor: Redactor
    policies: Sequence[Policy]
    where: pl.Expr | None
    max_media_bytes: int | None = None


def error_row(exc: TrajsetError, unit: Unit) -> ErrorRow:
    message = exc.message
    if exc.entry_id and exc.entry_id not in message:
        message = f"entry {exc.entry_id}: {message}"
    return ErrorRow(
        exc.source or unit.label,
        exc.session_id,
        exc.line,
        getattr(exc, "rule", "") or exc.kind,
        message,
    )


# --------------------------------------------------------------------------- stages


def read(ctx: RunContext, unit: Unit, result: UnitResult) -> Iterator[SessionInput]:
    """The unit's sessions with their linked subsessions; a unit that fails is one error row."""
    stats = result.stats
    with stats.timed("read") as st:
        st.taken += 1
        try:
            loaded = load_unit(unit)
        except UnitSkipped as exc:
            st.dropped[f"skipped_{exc.reason}"] += 1
            stats.counts["units_skipped"] += 1
            return
        except UnitFailed as exc:
            loaded = [exc]
        inputs = []
        own = {s.id: s for s in loaded if isinstance(s, Session)}
        for s in loaded:
            if isinstance(s, Session):
                first = ctx.index.unit_of(s.id)
                if first is not None and first != unit:  # documents are named by session id
                    s = SessionReadError(
                        f"session id {s.id!r} was already read from {first.label}; this copy is "
                        "not exported", rule="duplicate_session", source=s.source, session_id=s.id,
                    )  # fmt: skip
                else:
                    inputs.append(SessionInput(s, linked_sessions(ctx.index, s, own)))
                    continue
            st.dropped[getattr(s, "rule", s.kind)] += 1
            result.errors.append(error_row(s, unit))
            stats.counts["sessions_read"] += 1
            stats.counts["sessions_failed"] += 1
        st.passed += bool(inputs)
    yield from inputs


def _refused(rt: Runtime, session: Session) -> ErrorRow | None:
    """Ids are never rewritten (they name files and link entries): a session whose ids hold a
    finding is not exported."""
    found = rt.redactor.id_findings(session) if rt.redactor.rules else {}
    if not found:
        return None
    message = (
        f"ids hold what {', '.join(sorted(found))} find; ids are never rewritten, so the session "
        "is not exported (rename the ids in the store, or export with --no-redact)"
    )
    return ErrorRow(session.source, session.id, None, "id_holds_secret", message)


def redact(
    rt: Runtime, inputs: Iterable[SessionInput], stats: Stats, errors: list[ErrorRow]
) -> Iterator[SessionInput]:
    """Each tree redacted once, before enumeration; subsessions too (they get embedded)."""
    for inp in inputs:
        if rt.redactor.active:
            with stats.timed("redact") as st:
                st.taken += 1
                refused = _refused(rt, inp.session)
                if refused is not None:
                    st.dropped["id_holds_secret"] += 1
                    stats.counts["sessions_read"] += 1
                    stats.counts["sessions_failed"] += 1
                    errors.append(refused)
                    continue
                session, report = rt.redactor.session(inp.session)
                subs = {
                    sid: rt.redactor.session(s)[0]
                    for sid, s in inp.subsessions.items()
                    if _refused(rt, s) is None
                }
                inp = SessionInput(session, subs)
                st.passed += 1
            for rule, n in report.findings.items():
                stats.counts[f"redacted/tree/{rule}"] += n
            stats.counts["redacted_entries"] += report.entries_changed
            stats.counts["redacted_hashed_context_entries"] += report.hashed_context_entries_changed
        yield inp


def _account(session: Session, stats: Stats) -> list[ErrorRow]:
    """Count the session; a truncated final line is reported (its complete prefix is exported)."""
    stats.counts["sessions_read"] += 1
    stats.counts["entries"] += len(session.entries)
    stats.counts["trees"] += len(session.roots())
    stats.counts["forks"] += len(session.forks())
    for key, n in session.counts.items():
        stats.counts[f"reader/{key}"] += n
    rows = [ErrorRow(session.source, session.id, i.line, i.kind, i.message) for i in session.issues]
    t = session.truncation
    if t is None:
        return rows
    stats.counts["truncated_sessions"] += 1
    message = (
        f"final line cut short and left out ({t.reason}); the "
        f"{len(session.entries)} entries before it were exported"
    )
    return [*rows, ErrorRow(session.source, session.id, t.line, "truncated", message)]


def enumerate_(
    rt: Runtime, inputs: Iterable[SessionInput], unit: Unit, stats: Stats
) -> Iterator[SessionTrajectories]:
    """Every leaf's trajectory, forks decided once; a leaf whose context fails is an error
    row.  Trajectories are built as ``export`` takes them, so a session's are not all held."""
    for inp in inputs:
        session = inp.session
        errors = _account(session, stats)
        with stats.timed("enumerate"):
            index = TreeIndex(session)
            decisions = decide(index, rt.policies)
            outcomes = outcome_records(session)
        leaves = _leaves(trajectories(session, index=index, decisions=decisions), unit, stats)
        yield SessionTrajectories(inp, decisions, leaves, outcomes, index.best_score, errors)


def _leaves(
    items: Iterator[Trajectory | ContextError], unit: Unit, stats: Stats
) -> Iterator[Trajectory | ErrorRow]:
    while True:
        with stats.timed("enumerate") as st:
            item = next(items, None)
            if item is None:
                return
            st.taken += 1
            if isinstance(item, ContextError):
                st.dropped[item.kind] += 1
            else:
                st.passed += 1
        yield error_row(item, unit) if isinstance(item, ContextError) else item


def _export_one(
    rt: Runtime, t: Trajectory, options: AtifOptions, stats: Stats
) -> tuple[ExportedTrajectory, list[str]]:
    """The trajectory's document and messages, and the media kept as references."""
    doc = to_atif(t, options)
    for rule, n in rt.redactor.document(doc).items():
        stats.counts[f"redacted/atif/{rule}"] += n
    name, doc, media, omitted = prepare_document(doc, t.main, rt.max_media_bytes)
    messages = document_messages(doc, t.context.settings.instructions)
    return ExportedTrajectory(t, name, doc, media, messages), omitted


def export(
    rt: Runtime, items: Iterable[SessionTrajectories], unit: Unit, stats: Stats
) -> Iterator[SessionExport]:
    """Each trajectory's validated document and messages, in slices of ``SLICE`` per session
    (so a session's documents are written and released slice by slice); the last slice of
    a session carries the prompt at every fork."""
    for st_ in items:
        session = st_.session
        options = AtifOptions(
            subsessions=st_.input.subsessions,
            preferences=rt.policies,
            embedding=frozenset({session.id}),
        )
        exported: list[ExportedTrajectory] = []
        errors = list(st_.errors)
        omitted: dict[str, None] = {}  # once per session, though documents share media
        for item in st_.results:
            if len(exported) == SLICE:
                yield SessionExport(
                    st_, exported, ForkPrompts.none(), list(exported), 0, errors, last=False
                )
                exported, errors = [], []
            if isinstance(item, ErrorRow):
                errors.append(item)
                continue
            with stats.timed("export") as st:
                st.taken += 1
                try:
                    et, kept_as_reference = _export_one(rt, item, options, stats)
                    exported.append(et)
                    omitted.update(dict.fromkeys(kept_as_reference))
                    st.passed += 1
                except BadRecord as exc:
                    exc.source = exc.source or session.source
                    st.dropped[exc.kind] += 1
                    errors.append(error_row(exc, unit))
        if omitted:
            stats.counts["media_kept_as_reference"] += len(omitted)
        errors.extend(
            ErrorRow(session.source, session.id, None, "media_too_large", m) for m in omitted
        )
        prompts = ForkPrompts(
            st_.decisions, partial(fork_prompt, session, max_media_bytes=rt.max_media_bytes)
        )
        yield SessionExport(st_, exported, prompts, list(exported), 0, errors)


def where(rt: Runtime, exports: Iterable[SessionExport], stats: Stats) -> Iterator[SessionExport]:
    """Keep the trajectories whose columns match ``--where`` (all of them without one)."""
    for ex in exports:
        with stats.timed("where") as st:
            st.taken += len(ex.exported)
            keep = (
                where_filter.matching([scalars(et, ex) for et in ex.exported], rt.where)
                if rt.where is not None
                else [True] * len(ex.exported)
            )
            ex.kept = [et for et, k in zip(ex.exported, keep, strict=True) if k]
            ex.filtered_out = len(ex.exported) - len(ex.kept)
            st.dropped["where"] += ex.filtered_out
            st.passed += len(ex.kept)
            stats.counts["trajectories_filtered_out"] += ex.filtered_out
        yield ex


def make_runtime(ctx: RunContext) -> Runtime:
    """What a worker derives from the run's options: built once per job, where it runs."""
    o = ctx.options
    return Runtime(
        o.redactor(list(ctx.secrets)),
        o.policies(),
        where_filter.compile_where(o.where) if o.where else None,
        o.max_media_bytes,
    )


def export_session(session: Session, options: ExportOptions | None = None) -> SessionExport:
    """One in-memory session through redact, enumerate, export and ``--where``; nothing is written.

    For notebooks and tests: the records every table is built from.
    """
    rt = make_runtime(RunContext(Path(), options or ExportOptions()))
    unit, stats = Unit("memory", (session.source or session.id,)), Stats()
    trees = redact(rt, [SessionInput(session)], stats, [])
    enumerated = list(enumerate_(rt, trees, unit, stats))
    for st_ in enumerated:  # kept, for a look at them afterwards
        st_.results = list(st_.results)
    *head, ex = where(rt, export(rt, enumerated, unit, stats), stats)
    for part in reversed(head):  # slices joined again, documents kept
        ex.exported[:0], ex.kept[:0], ex.errors[:0] = part.exported, part.kept, part.errors
        ex.filtered_out += part.filtered_out
    return ex
