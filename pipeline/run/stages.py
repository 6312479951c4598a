"""The stages of the per-unit chain (DESIGN §2), one signature for all of them.

::

    Unit ─read─▶ SessionInput ─redact─▶ SessionInput ─enumerate─▶ SessionTrajectories
         ─export─▶ SessionExport ─where─▶ SessionExport ─write─▶ TableRows

A stage is ``stage(scope, records) -> records``: a generator over the
records of one unit (a unit may hold several sessions; from ``export`` on, a
session travels in slices of ``RunSettings.slice_trajectories`` trajectories,
so its documents are written and released slice by slice).  A stage never
changes a record it was given (it yields new ones), and records errors and
counts only through the unit's ``UnitScope``; it counts what it took,
passed on and dropped (by reason) in the scope's stats and times itself.
``chain.py`` declares the chain and runs it; ``write.py`` is its last stage.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import replace
from functools import partial

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

from ..atif import AtifOptions, to_atif
from ..errors import BadRecord, ContextError, SessionReadError, UnitFailed, UnitSkipped
from ..outputs.documents import prepare_document
from ..stores import Unit, linked_sessions, load_unit
from ..tables import TABLES
from ..tables import where as where_filter
from ..tables.messages import document_messages, fork_prompt
from ..tables.trajectories import scalars
from ..tree import TreeIndex, decide, outcome_records, trajectories
from .characters import fix_characters
from .context import Runtime, UnitScope


def read(scope: UnitScope, units: Iterable[Unit]) -> Iterator[SessionInput]:
    """The unit's sessions with their linked subsessions; what does not read is an error row.
    Each is let go once yielded, so the stage after holds it alone (``redact`` then holds
    the redacted copy alone: a large session is never held twice)."""
    for unit in units:
        inputs = _inputs(scope, unit)
        inputs.reverse()
        while inputs:
            scope.current = (inputs[-1].session.id, inputs[-1].session.source)
            yield inputs.pop()


def _inputs(scope: UnitScope, unit: Unit) -> list[SessionInput]:
    stats, ledger, index = scope.stats, scope.ledger, scope.ctx.index
    with stats.timed("read") as st:
        st.taken += 1
        try:
            loaded = load_unit(unit)
        except UnitSkipped as exc:
            st.dropped[f"skipped_{exc.reason}"] += 1
            ledger.add("units_skipped")
            return []
        except UnitFailed as exc:
            loaded = [exc]
        inputs = []
        own: dict[str, Session] = {}
        copies: dict[str, str] = {}  # session id -> where the session this copies was read
        for s in loaded:
            if isinstance(s, Session):
                own.setdefault(s.id, s)
        for s in loaded:
            if isinstance(s, Session) and s.id in scope.skip:
                continue  # stopped by an unplanned error: the worker reports it
            if isinstance(s, Session):
                first = index.unit_of(s.id)
                # documents are named by session id: a copy (in another unit, or beside the
                # first in this one) is not exported twice
                where = first.label if first is not None and first != unit else None
                if own[s.id] is not s:
                    where = own[s.id].source or unit.label
                if s.header.parent_session in copies:  # a copy's subsessions are copies too
                    where = copies[s.header.parent_session]
                if where is not None:
                    copies[s.id] = where
                    s = SessionReadError(
                        f"session id {s.id!r} was already read from {where}; this copy "
                        "is not exported", rule="duplicate_session", source=s.source,
                        session_id=s.id,
                    )  # fmt: skip
                else:
                    s, rows = fix_characters(s)
                    for row in rows:
                        scope.error(row)
                    subs = {k: fix_characters(v)[0]
                            for k, v in linked_sessions(index, s, own).items()}  # fmt: skip
                    inputs.append(SessionInput(s, subs))
                    continue
            st.dropped[getattr(s, "rule", s.kind)] += 1
            scope.failed(s)
            ledger.session_failed(read=True)
        st.passed += bool(inputs)
    return inputs


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


def redact(scope: UnitScope, inputs: Iterable[SessionInput]) -> Iterator[SessionInput]:
    """Each tree redacted once, before enumeration; subsessions too (they get embedded)."""
    rt, stats, ledger = scope.rt, scope.stats, scope.ledger
    for inp in inputs:
        if rt.redactor.active:
            with stats.timed("redact") as st:
                st.taken += 1
                refused = _refused(rt, inp.session)
                if refused is not None:
                    st.dropped["id_holds_secret"] += 1
                    ledger.session_failed(read=True)
                    scope.error(refused)
                    continue
                session, report = rt.redactor.session(inp.session)
                subs = {
                    sid: rt.redactor.session(s)[0]
                    for sid, s in inp.subsessions.items()
                    if _refused(rt, s) is None
                }
                inp = SessionInput(session, subs, report.placeholders)
                st.passed += 1
            ledger.redacted("tree", report.findings)
            ledger.add("redacted_entries", report.entries_changed)
            ledger.add("redacted_hashed_context_entries", report.hashed_context_entries_changed)
        yield inp


def _account(scope: UnitScope, session: Session) -> None:
    """Count the session read; its reader's issues and a truncated final line are error rows
    (a cut session's complete prefix is exported)."""
    ledger = scope.ledger
    ledger.session_read()
    ledger.add("entries", len(session.entries))
    ledger.add("trees", len(session.roots()))
    ledger.add("forks", len(session.forks()))
    counts: Counter[str] = Counter()  # a reader may name a count by a value it read
    for key, n in session.counts.items():
        counts[scope.rt.redactor.plain_text(key)] += n
    ledger.reader(counts)
    for i in session.issues:
        scope.error(ErrorRow(i.source or session.source, session.id, i.line, i.kind, i.message))
    t = session.truncation
    if t is None:
        return
    ledger.add("truncated_sessions")
    message = (
        f"final line cut short and left out ({t.reason}); the "
        f"{len(session.entries)} entries before it were exported"
    )
    scope.error(ErrorRow(session.source, session.id, t.line, "truncated", message))


def enumerate_(scope: UnitScope, inputs: Iterable[SessionInput]) -> Iterator[SessionTrajectories]:
    """Every leaf's trajectory, forks decided once; a leaf whose context fails is an error
    row.  Trajectories are built as ``export`` takes them, so a session's are not all held."""
    for inp in inputs:
        session = inp.session
        _account(scope, session)
        with scope.stats.timed("enumerate"):
            index = TreeIndex(session)
            decisions = decide(index, scope.rt.policies_for(session.source_format))
            outcomes = outcome_records(session)
        leaves = _leaves(scope, trajectories(session, index=index, decisions=decisions))
        yield SessionTrajectories(inp, decisions, leaves, outcomes, index.best_score)


def _leaves(scope: UnitScope, items: Iterator[Trajectory | ContextError]) -> Iterator[Trajectory]:
    while True:
        with scope.stats.timed("enumerate") as st:
            item = next(items, None)
            if item is None:
                return
            st.taken += 1
            if isinstance(item, ContextError):
                st.dropped[item.kind] += 1
                scope.failed(item)
                continue
            st.passed += 1
        yield item


def _export_one(
    scope: UnitScope, t: Trajectory, options: AtifOptions
) -> tuple[ExportedTrajectory, list[str]]:
    """The trajectory's document and messages, and the media kept as references."""
    rt = scope.rt
    doc = to_atif(t, options)
    scope.ledger.redacted("atif", rt.redactor.document(doc))
    name, doc, media, omitted = prepare_document(doc, t.main, rt.max_media_bytes)
    messages = document_messages(doc, t.context.settings.instructions)
    prepared = {}
    for table in TABLES.values():  # what each table needs of the tree, beside the document
        if table.prepare is not None:
            got = table.prepare(t, messages, rt.max_media_bytes)
            prepared[table.name] = got.value
            media = {**media, **got.media} if got.media else media  # named by content
    return ExportedTrajectory(t, name, doc, media, messages, prepared), omitted


def export(scope: UnitScope, items: Iterable[SessionTrajectories]) -> Iterator[SessionExport]:
    """Each trajectory's validated document and messages, in slices of
    ``slice_trajectories`` per session (so a session's documents are written and released
    slice by slice); the last slice of a session carries the prompt at every fork."""
    rt, size = scope.rt, scope.settings.slice_trajectories
    for st_ in items:
        session = st_.session
        options = AtifOptions(
            subsessions=st_.input.subsessions,
            preferences=rt.policies_for(session.source_format),
            embedding=frozenset({session.id}),
        )
        exported: list[ExportedTrajectory] = []
        omitted: dict[str, None] = {}  # once per session, though documents share media
        for t in st_.results:
            if len(exported) == size:
                yield SessionExport(
                    st_, exported, ForkPrompts.none(), list(exported), last=False,
                    kto_from=scope.ctx.options.kto_from,
                )  # fmt: skip
                exported = []
            with scope.stats.timed("export") as st:
                st.taken += 1
                try:
                    et, kept_as_reference = _export_one(scope, t, options)
                    exported.append(et)
                    omitted.update(dict.fromkeys(kept_as_reference))
                    st.passed += 1
                except BadRecord as exc:
                    exc.source = exc.source or session.source
                    st.dropped[exc.kind] += 1
                    scope.failed(exc)
        if omitted:
            scope.ledger.add("media_kept_as_reference", len(omitted))
        for m in omitted:
            scope.error(ErrorRow(session.source, session.id, None, "media_too_large", m))
        prompts = ForkPrompts(
            st_.decisions, partial(fork_prompt, session, max_media_bytes=rt.max_media_bytes)
        )
        yield SessionExport(
            st_, exported, prompts, list(exported), kto_from=scope.ctx.options.kto_from
        )


def where(scope: UnitScope, exports: Iterable[SessionExport]) -> Iterator[SessionExport]:
    """Keep the trajectories whose columns match ``--where`` (all of them without one)."""
    rt = scope.rt
    for ex in exports:
        with scope.stats.timed("where") as st:
            st.taken += len(ex.exported)
            keep = (
                where_filter.matching([scalars(et, ex) for et in ex.exported], rt.where)
                if rt.where is not None
                else [True] * len(ex.exported)
            )
            kept = [et for et, k in zip(ex.exported, keep, strict=True) if k]
            dropped = len(ex.exported) - len(kept)
            st.dropped["where"] += dropped
            st.passed += len(kept)
            scope.ledger.add("trajectories_filtered_out", dropped)
        yield replace(ex, kept=kept, filtered_out=dropped)
