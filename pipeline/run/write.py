"""The chain's last stage, ``write``: each slice's table rows and documents.

A slice's documents are written and released at once; ``session`` tables
(outcomes, preferences) get a session's kept trajectories without them when
its last slice is done.  The rows a unit holds are handed on (``TableRows``,
``final=False``) every ``RunSettings.spill_document_bytes`` of documents and every
``spill_session_rows`` rows of a session table, so neither documents nor rows
of a huge session pile up in a worker (``worker.BatchParts`` writes them to
parts); what is left is yielded last (``final=True``).  Of a trajectory's
messages, what a session table ``retain``s stays until the last slice (for the
preference pairs: of a regenerated answer, the answer alone).  The rows a slice
makes are counted against the row checks (``outputs.row_checks``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace

from trajset.schemas.records import (
    Anchored,
    ErrorRow,
    ExportedTrajectory,
    ForkPrompts,
    SessionExport,
)

from ..outputs import row_checks
from ..outputs.documents import write_document, write_media
from ..outputs.traces import write_trace
from ..tables import TABLES, Row
from .context import UnitScope

#: table name -> rows
Rows = dict[str, list[Row]]
#: the tables the row checks read, in ``row_checks.count``'s order
ROW_CHECKED = ("sft", "steps")


def no_rows() -> Rows:
    return {name: [] for name in TABLES}


@dataclass(frozen=True)
class TableRows:
    """Rows the unit hands on: on the way (``final`` False: a part of their own), or what
    it still held at its end."""

    rows: Rows
    final: bool


def write(scope: UnitScope, exports: Iterable[SessionExport]) -> Iterator[TableRows]:
    """Table rows and documents of every slice of every session as it arrives; a slice's
    documents are released once written (``session`` tables get each session's kept
    trajectories without them)."""
    settings = scope.settings
    rows = no_rows()
    written = 0  # document bytes since the rows were last handed on
    whole: SessionExport | None = None  # the session so far, documents released
    keep: Keep = _keep_nothing
    for ex in exports:
        if whole is None:
            scope.result.session_ids.append(ex.session.id)
            whole = SessionExport(ex.source, [], ForkPrompts.none(), kto_from=ex.kto_from)
            keep = _kept_messages(ex)
        yield from _table_rows(scope, ex, "trajectory", rows)
        written += _write_documents(scope, ex)
        released = {id(et): _released(et, keep) for et in ex.exported}  # kept are among them
        whole.exported += released.values()
        whole.kept += (released[id(et)] for et in ex.kept)
        whole.filtered_out += ex.filtered_out
        if ex.last:
            whole.prompts = ex.prompts
            yield from _table_rows(scope, whole, "session", rows)
            _write_prompt_media(scope, whole)
            _finish_session(scope, whole)
            whole = None
        if written >= settings.spill_document_bytes:
            yield _handed_on(rows)
            written = 0
    yield TableRows(rows, final=True)


def _handed_on(rows: Rows) -> TableRows:
    """The rows held so far, as a part of their own; ``rows`` is emptied for what follows."""
    out = TableRows({name: list(held) for name, held in rows.items()}, final=False)
    for held in rows.values():
        held.clear()
    return out


#: what the session tables keep of a trajectory's messages until the session's last slice
Keep = Callable[[ExportedTrajectory], list[Anchored]]


def _keep_nothing(et: ExportedTrajectory) -> list[Anchored]:
    return []


def _kept_messages(ex: SessionExport) -> Keep:
    """What the session tables that ``retain`` messages keep of each trajectory's (each
    such table's, one after the other)."""
    keepers = [t.retain(ex) for t in TABLES.values() if t.retain is not None]
    return lambda et: [m for keep in keepers for m in keep(et)]


def _released(et: ExportedTrajectory, keep: Keep) -> ExportedTrajectory:
    """The trajectory without its document and media (written already), its context's
    items and entries and what tables prepared of it, and of what it said only what a
    session table keeps."""
    t = et.trajectory
    context = replace(t.context, items=[], entries=[], item_entries=[])
    return replace(
        et,
        trajectory=replace(t, context=context),
        document={},
        media={},
        messages=keep(et),
        prepared={},
    )


def _table_rows(scope: UnitScope, ex: SessionExport, per: str, rows: Rows) -> Iterator[TableRows]:
    """The rows of the tables built ``per`` slice or session; a session table's rows are
    handed on every ``spill_session_rows`` (a session's pairs can outweigh its documents)."""
    limit = scope.settings.spill_session_rows
    before = {name: len(rows[name]) for name in ROW_CHECKED}
    with scope.stats.timed("tables") as st:
        st.taken += len(ex.kept) if per == "trajectory" else 0
        for name, table in TABLES.items():
            if table.per != per:
                continue
            derived = [
                (other, t.derive[1](ex))
                for other, t in TABLES.items()
                if t.derive is not None and t.derive[0] == name
            ]
            for row in table.rows(ex, scope.ledger.counts):
                rows[name].append(row)
                for other, made in derived:  # rows made of this one (kto of a pair)
                    rows[other].extend(made(row, scope.ledger.counts))
                if per == "session" and len(rows[name]) >= limit:
                    yield _handed_on(rows)
        st.passed += len(ex.kept) if per == "trajectory" else 0
    if per == "trajectory":  # the row checks, over the rows this slice made
        new = [rows[name][before[name] :] for name in ROW_CHECKED]
        for check, n in row_checks.count(*new).items():
            scope.ledger.add(f"{row_checks.COUNTED}{check}", n)


def _write_documents(scope: UnitScope, ex: SessionExport) -> int:
    """The slice's kept documents; returns their bytes."""
    atif_dir, written, result = scope.ctx.out / "atif", 0, scope.result
    audit = scope.rt.redactor.active  # count the placeholders written
    with scope.stats.timed("write") as st:
        for et in ex.kept:
            st.taken += 1
            size, placeholders = write_document(atif_dir, et.name, et.document, et.media, audit)
            written += size
            scope.ledger.redacted("atif", placeholders)
            st.passed += 1
            result.documents.append(et.name)
            if et.trajectory.main and scope.ctx.options.traces:
                written += _write_trace(scope, ex, et)
    return written


def _write_trace(scope: UnitScope, ex: SessionExport, et: ExportedTrajectory) -> int:
    """The session's trace (``outputs.traces``), written with its main document."""
    rt, inp, ledger = scope.rt, ex.source.input, scope.ledger
    redactor = rt.redactor if rt.redactor.active else None
    done = write_trace(
        scope.ctx.out, inp.session, et.document, et.name, redactor, inp.placeholders,
        scope.ctx.options.redaction_version(),
    )  # fmt: skip
    scope.result.traces += done.files
    ledger.add("traces_native" if done.native else "traces_sts")
    ledger.add("trace_files", len(done.files))
    ledger.add("trace_lines_left_out", done.dropped_lines)
    ledger.redacted("traces", dict(done.placeholders))
    return done.bytes


def _write_prompt_media(scope: UnitScope, ex: SessionExport) -> None:
    """The media of the session's fork prompts (a pair's prompt may show an image no kept
    document does), once its tables have built the prompts they use."""
    with scope.stats.timed("write"):
        write_media(scope.ctx.out / "atif", ex.prompts.media())


def _finish_session(scope: UnitScope, ex: SessionExport) -> None:
    """A session with no document is failed, unless ``--where`` filtered its trajectories
    out (that is counted as filtered, not failed); say why when no other error does."""
    exported = bool(ex.kept) or bool(ex.exported)
    scope.result.exported = scope.result.exported or bool(ex.kept)
    if exported:
        scope.ledger.session_exported()
    else:
        scope.ledger.session_failed()
    if ex.exported and not ex.kept:
        scope.ledger.session_filtered_out()
    if not exported and not scope.had_failures(ex.session.id):
        reason = "the session holds no entry that makes a step, so no document was written"
        scope.error(ErrorRow(ex.session.source, ex.session.id, None, "no_trajectory", reason))
