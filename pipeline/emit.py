"""The chain's last stage, tables and write: each slice's table rows and documents.

A slice's documents are written and released at once; ``session`` tables
(outcomes, preferences) get a session's kept trajectories without them when
its last slice is done, and a unit that writes many documents spills the rows
it holds every ``SPILL_BYTES`` (``jobs.BatchParts`` puts them in parts), so
neither documents nor rows of a huge session pile up in a worker.  Of a
trajectory's messages, what its session's pairs take stays until the last slice
(``preferences.PairSides``): for a regenerated answer, the answer alone.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace

from trajset.schemas.records import ErrorRow, ExportedTrajectory, ForkPrompts, SessionExport

from .outputs.audit import count_placeholders
from .outputs.documents import write_document, write_media
from .results import UnitResult
from .stages import RunContext, Runtime
from .stats import Stats
from .tables import TABLES, Row
from .tables.preferences import PairSides

#: a unit hands on (spills) the table rows it holds once it wrote this many document bytes
SPILL_BYTES = 32 * 1000 * 1000

#: and once a session table (preferences) has built this many rows of a session
SPILL_ROWS = 256

#: where a unit spills its rows (``jobs.BatchParts.spill``)
Spill = Callable[[dict[str, list[Row]]], None]


def tables_and_write(
    ctx: RunContext,
    rt: Runtime,
    exports: Iterable[SessionExport],
    result: UnitResult,
    spill: Spill,
) -> dict[str, list[Row]]:
    """Table rows and documents of every slice of every session as it arrives; a slice's
    documents are released once written (``session`` tables get each session's kept
    trajectories without them), and the rows go to ``spill`` every ``SPILL_BYTES`` of
    documents.  Returns the rows still held."""
    rows: dict[str, list[Row]] = {name: [] for name in TABLES}
    written = 0  # document bytes since the rows were last spilled
    whole: SessionExport | None = None  # the session so far, documents released
    sides: PairSides | None = None
    for ex in exports:
        if whole is None or sides is None:
            result.session_ids.append(ex.session.id)
            whole = SessionExport(ex.source, [], ForkPrompts.none())
            sides = PairSides(ex.session, ex.source.decisions)
        _table_rows(ex, "trajectory", rows, result.stats, None)
        written += _write_documents(ctx, rt, ex, result)
        released = {id(et): _released(et, sides) for et in ex.exported}  # kept are among them
        whole.exported += released.values()
        whole.kept += (released[id(et)] for et in ex.kept)
        whole.errors += ex.errors
        if ex.last:
            whole.prompts = ex.prompts
            _table_rows(whole, "session", rows, result.stats, spill)
            _write_prompt_media(ctx, whole, result)
            _finish_session(whole, result)
            whole = None
        if written >= SPILL_BYTES:
            _spill(rows, spill)
            written = 0
    return rows


def _spill(rows: dict[str, list[Row]], spill: Spill) -> None:
    spill(rows)
    for held in rows.values():
        held.clear()


def _released(et: ExportedTrajectory, sides: PairSides) -> ExportedTrajectory:
    """The trajectory without its document and media (written already) and its context's
    items and entries, and of its messages only those a pair of its session takes."""
    t = et.trajectory
    context = replace(t.context, items=[], entries=[], item_entries=[])
    messages = sides.messages(t.leaf_id, et.messages)
    return replace(
        et, trajectory=replace(t, context=context), document={}, media={}, messages=messages
    )


def _table_rows(
    ex: SessionExport, per: str, rows: dict[str, list[Row]], stats: Stats, spill: Spill | None
) -> None:
    """The rows of the tables built ``per`` slice or session; a session table's rows are
    spilled every ``SPILL_ROWS`` (a session's pairs can outweigh its documents)."""
    with stats.timed("tables") as st:
        st.taken += len(ex.kept) if per == "trajectory" else 0
        for name, table in TABLES.items():
            if table.per != per:
                continue
            for row in table.rows(ex, stats.counts):
                rows[name].append(row)
                if spill is not None and len(rows[name]) >= SPILL_ROWS:
                    _spill(rows, spill)
        st.passed += len(ex.kept) if per == "trajectory" else 0


def _write_documents(ctx: RunContext, rt: Runtime, ex: SessionExport, result: UnitResult) -> int:
    """The slice's kept documents; returns their bytes."""
    atif_dir, written = ctx.out / "atif", 0
    with result.stats.timed("write") as st:
        for et in ex.kept:
            st.taken += 1
            data = write_document(atif_dir, et.name, et.document, et.media)
            written += len(data)
            if rt.redactor.active:
                for rule, n in count_placeholders(data).items():
                    result.stats.counts[f"redacted/atif/{rule}"] += n
            st.passed += 1
            result.documents.append(et.name)
    return written


def _write_prompt_media(ctx: RunContext, ex: SessionExport, result: UnitResult) -> None:
    """The media of the session's fork prompts (a pair's prompt may show an image no kept
    document does), once its tables have built the prompts they use."""
    with result.stats.timed("write"):
        write_media(ctx.out / "atif", ex.prompts.media())


def _finish_session(ex: SessionExport, result: UnitResult) -> None:
    """A session with no document is failed, unless ``--where`` filtered its trajectories
    out (that is counted as filtered, not failed); say why when no other error does."""
    exported = bool(ex.kept) or bool(ex.exported)
    result.exported = result.exported or bool(ex.kept)
    result.stats.counts["sessions_exported" if exported else "sessions_failed"] += 1
    if ex.exported and not ex.kept:
        result.stats.counts["sessions_filtered_out"] += 1
    errors = list(ex.errors)
    if not exported and not any(e.kind != "truncated" for e in errors):
        reason = "the session holds no entry that makes a step, so no document was written"
        errors.append(ErrorRow(ex.session.source, ex.session.id, None, "no_trajectory", reason))
    result.errors.extend(errors)
