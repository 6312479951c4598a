"""What a unit's processing runs in: the frozen ``RunContext`` that travels to every worker,
the ``Runtime`` a worker builds from it once, and the ``UnitScope`` of one unit.

Nothing here is module state: ``worker.BatchJob`` carries the context to any
process an executor runs it in and builds the runtime where it lands.  A
stage records what happens to its unit only through the scope: errors
(``error``), counts (``ledger``) and its times (``stats``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from trajset.redactors import Identity, Redactor
from trajset.schemas.records import ErrorRow

from ..errors import TrajsetError
from ..options import ExportOptions, RunSettings
from ..stores import READERS, Index, SessionIndex, Unit
from ..tables import where as where_filter
from ..tree.policies import Policy, parse_policy
from .ledger import Ledger
from .results import UnitResult
from .stats import Stats

if TYPE_CHECKING:
    import polars as pl


@dataclass(frozen=True)
class RunContext:
    """Everything a unit's processing depends on; frozen, picklable, passed explicitly."""

    out: Path
    options: ExportOptions
    secrets: tuple[str, ...] = ()
    index: Index = field(default_factory=SessionIndex)
    rank: int = 0
    world_size: int = 1
    settings: RunSettings = field(default_factory=RunSettings)
    terms: tuple[str, ...] = field(default=(), repr=False)  # --redact-terms
    #: the store's identities in unit order, numbered into pseudonyms where they are used
    identities: tuple[Identity, ...] = field(default=(), repr=False)
    #: the folders holding the stores: paths in error rows are shown relative to them
    roots: tuple[str, ...] = field(default=(), repr=False)
    #: ``--pseudonym-key-env``'s key: identities named by a keyed hash ("": numbered)
    pseudonym_key: str = field(default="", repr=False)


@dataclass
class Runtime:
    """What a worker derives from the options once: the redactor, the policies, the filter."""

    redactor: Redactor
    policies: Sequence[Policy]
    where: pl.Expr | None
    max_media_bytes: int | None = None
    #: store kind -> the policies its reader says the store means (``Reader.prefer``)
    store_policies: dict[str, list[Policy]] = field(default_factory=dict)

    def policies_for(self, kind: str) -> Sequence[Policy]:
        """``--prefer``'s policies, else those the store kind means (else none: latest)."""
        return self.policies or self.store_policies.get(kind, ())


def make_runtime(ctx: RunContext) -> Runtime:
    """What a worker derives from the run's options: built once per job, where it runs."""
    o = ctx.options
    return Runtime(
        o.redactor(list(ctx.secrets), ctx.terms, ctx.identities, ctx.roots, ctx.pseudonym_key),
        o.policies(),
        where_filter.compile_where(o.where) if o.where else None,
        o.max_media_bytes,
        {k: [parse_policy(p) for p in r.prefer] for k, r in READERS.items() if r.prefer},
    )


class UnitScope:
    """One unit's processing: the run's context and runtime, and where every stage records
    what happened (the unit's ``UnitResult``: error rows, ledger, stage stats)."""

    def __init__(
        self, ctx: RunContext, rt: Runtime, result: UnitResult, skip: frozenset[str] = frozenset()
    ) -> None:
        self.ctx, self.rt, self.result = ctx, rt, result
        self.settings = ctx.settings
        #: sessions not to read again: an unplanned error stopped them in an earlier attempt
        self.skip = skip
        #: (id, source) of the session the chain is working on (the last one ``read`` passed on)
        self.current: tuple[str, str] | None = None
        #: error rows per session id that are not about a cut final line
        self._failures: Counter[str] = Counter()

    @property
    def unit(self) -> Unit:
        return self.result.unit

    @property
    def ledger(self) -> Ledger:
        return self.result.ledger

    @property
    def stats(self) -> Stats:
        return self.result.stats

    def error(self, row: ErrorRow) -> None:
        """An error row of the unit (``errors.parquet``), in the order they happen."""
        self.result.errors.append(row)
        if row.kind != "truncated":
            self._failures[row.session_id] += 1

    def failed(self, exc: TrajsetError) -> None:
        """The error row of an exception trajset raised on purpose."""
        self.error(error_row(exc, self.unit))

    def had_failures(self, session_id: str) -> bool:
        """Whether an error other than a cut final line was recorded for the session."""
        return self._failures[session_id] > 0


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
