"""The per-unit chain, declared once, and the one function that runs it.

``CHAIN`` lists the stages in order (``stages.py``, ``write.py``); ``run_chain``
composes them over a unit's records.  The worker runs the whole chain on a
unit (``process_unit``), and the library's ``export_session`` runs the same
stages between ``read`` and ``write`` on one in-memory session, so both go
through the same code.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from trajset.schemas.records import SessionExport, SessionInput, SessionTrajectories
from trajset.schemas.session import Session

from ..options import ExportOptions
from ..stores import Unit
from .context import RunContext, UnitScope, make_runtime
from .results import UnitResult
from .stages import enumerate_, export, read, redact, where
from .write import write

#: a stage: the unit's scope and the records of the stage before, to the records it passes on
Stage = Callable[[UnitScope, Iterable[Any]], Iterator[Any]]

#: the chain, in order: Unit -> SessionInput -> SessionInput -> SessionTrajectories
#: -> SessionExport -> SessionExport -> TableRows
CHAIN: tuple[Stage, ...] = (read, redact, enumerate_, export, where, write)


def run_chain(
    scope: UnitScope, records: Iterable[Any], stages: Sequence[Stage] = CHAIN
) -> Iterator[Any]:
    """``stages`` composed over ``records`` (lazily: each pulls from the one before)."""
    out: Iterable[Any] = records
    for stage in stages:
        out = stage(scope, out)
    return iter(out)


def _held(scope: UnitScope, items: Iterable[SessionTrajectories]) -> Iterator[SessionTrajectories]:
    """Each session's trajectories built at once and kept (for a look at them afterwards)."""
    for st in items:
        yield replace(st, results=list(st.results))


def export_session(session: Session, options: ExportOptions | None = None) -> SessionExport:
    """One in-memory session through the chain from ``redact`` to ``where``; nothing is written.

    For notebooks and tests: the records every table is built from, the session's slices
    joined into one ``SessionExport`` (documents kept); its error rows are not returned.
    """
    ctx = RunContext(Path(), options or ExportOptions())
    unit = Unit("memory", (session.source or session.id,))
    scope = UnitScope(ctx, make_runtime(ctx), UnitResult(unit))
    stages = (redact, enumerate_, _held, export, where)
    slices = list(run_chain(scope, [SessionInput(session)], stages))
    last = slices[-1]
    return SessionExport(
        last.source,
        [et for s in slices for et in s.exported],
        last.prompts,
        [et for s in slices for et in s.kept],
        sum(s.filtered_out for s in slices),
    )
