"""Records passed between the stages of one unit (DESIGN §2).

::

    read/redact ─▶ SessionInput ─▶ enumerate ─▶ SessionTrajectories ─▶ export
        ─▶ SessionExport (ExportedTrajectory*, ForkPrompt*) ─▶ where ─▶ tables ─▶ write

Forks are decided once per session (``ForkDecision``); every later step
reads those decisions.  Errors travel as ``ErrorRow`` records, the rows of
``errors.parquet``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from .context import Context
from .session import Session

if TYPE_CHECKING:
    from trajset.redactors.base import Placeholders

JSON = Any
Message = dict[str, JSON]  # one TRL chat message (schemas.tables.MESSAGE)
Anchored = tuple[Message, str]  # a message and the entry id its ATIF step is anchored at


@dataclass(frozen=True)
class ErrorRow:
    """One row of ``errors.parquet``: an input, line or leaf that could not be used, and why."""

    source: str
    session_id: str
    line: int | None
    kind: str
    message: str


@dataclass
class SessionInput:
    """A session as read (and later redacted), with the subsessions its links name, by id."""

    session: Session
    subsessions: dict[str, Session] = field(default_factory=dict)
    #: the placeholders its redaction numbered (``TreeReport.placeholders``), for its trace
    placeholders: Placeholders | None = None


@dataclass(frozen=True)
class ForkDecision:
    """The preferred child at a fork and the ``--prefer`` spelling of the policy that chose it."""

    fork: str
    children: tuple[str, ...]
    preferred: str
    policy: str
    #: children a ``score`` policy found as good as the preferred one: no preference, no pair
    tied: tuple[str, ...] = ()


@dataclass(frozen=True)
class ForkChoice:
    """A fork on one trajectory's path: the decision, and the child the path takes."""

    decision: ForkDecision
    taken: str

    @property
    def fork(self) -> str:
        return self.decision.fork

    @property
    def followed(self) -> bool:
        return self.taken == self.decision.preferred


@dataclass
class Trajectory:
    """One root-to-leaf path with its context and where it stands at each fork."""

    session: Session
    leaf_id: str
    context: Context
    main: bool
    preferred_over: list[str] = field(default_factory=list)
    abandoned_at: str = ""
    forks: list[ForkChoice] = field(default_factory=list)

    @property
    def is_preferred(self) -> bool:
        """True when the path follows the preferred child at every fork."""
        return not self.abandoned_at


@dataclass(frozen=True)
class OutcomeRecord:
    """An outcome entry, the leaves whose path holds its target (all leaves without one) and
    the leaf whose own part it judges."""

    entry_id: str
    kind: str
    target: str | None
    score: float | None
    passed: bool | None
    label: str | None
    details: str | None  # JSON text
    leaf_ids: tuple[str, ...]
    #: the leaf whose own part (below its last fork) the outcome is located on, if any
    own_leaf: str | None = None

    @cached_property
    def leaf_set(self) -> frozenset[str]:
        return frozenset(self.leaf_ids)


@dataclass
class SessionTrajectories:
    """``enumerate``'s output: every trajectory of a session and the facts shared by all of them."""

    input: SessionInput
    decisions: dict[str, ForkDecision]
    results: Iterable[Trajectory]  # one per leaf that builds, in file order; built as taken
    outcomes: list[OutcomeRecord]
    best_score: dict[str, float]

    @property
    def session(self) -> Session:
        return self.input.session

    @property
    def trajectories(self) -> list[Trajectory]:
        """The trajectories (of a list of results; an iterator is consumed)."""
        return [t for t in self.results if isinstance(t, Trajectory)]


@dataclass
class ExportedTrajectory:
    """A trajectory's validated ATIF document (media spilled), file name and chat messages."""

    trajectory: Trajectory
    name: str
    document: dict[str, JSON]
    media: dict[str, bytes]
    messages: list[Anchored]
    #: what each table that declares a ``prepare`` took of the trajectory while its session's
    #: tree was at hand, by table name (the ``sft`` table's earlier context windows; what a
    #: branch compacted after its fork said, for ``preferences``)
    prepared: dict[str, Any] = field(default_factory=dict)


@dataclass
class ForkPrompt:
    """The shared context at a fork as chat messages, the tools in force, and its media."""

    messages: list[Message]
    tools: str  # JSON text
    media: dict[str, bytes]


class ForkPrompts(Mapping[str, "ForkPrompt | None"]):
    """A session's prompt at each fork (``None``: the context there does not build), built
    when asked and not kept: a prompt holds the whole context at its fork, so together
    they grow with the square of a session that regenerates an answer at every turn.  The
    media of those built are kept (by content path, so each once) for ``media``."""

    def __init__(self, forks: Iterable[str], build: Callable[[str], ForkPrompt | None]) -> None:
        self._forks = dict.fromkeys(forks)
        self._build = build
        self._built: set[str] = set()
        self._media: dict[str, bytes] = {}

    @classmethod
    def none(cls) -> ForkPrompts:
        """No fork (a slice before a session's last)."""
        return cls((), lambda fork: None)

    def __getitem__(self, fork: str) -> ForkPrompt | None:
        if fork not in self._forks:
            raise KeyError(fork)
        prompt = self._build(fork)
        self._built.add(fork)
        if prompt is not None:
            self._media.update(prompt.media)
        return prompt

    def __iter__(self) -> Iterator[str]:
        return iter(self._forks)

    def __len__(self) -> int:
        return len(self._forks)

    def media(self) -> dict[str, bytes]:
        """The media of every fork's prompt (those nobody asked for are built now)."""
        for fork in self._forks:
            if fork not in self._built:
                self[fork]
        return self._media


@dataclass
class SessionExport:
    """``export``'s output, a session's trajectories or a slice of them (``last`` marks the
    session's final slice, which carries its fork prompts); ``where`` narrows ``kept`` and
    counts what it dropped."""

    source: SessionTrajectories
    exported: list[ExportedTrajectory]
    prompts: ForkPrompts
    kept: list[ExportedTrajectory] = field(default_factory=list)
    filtered_out: int = 0
    last: bool = True
    #: where the ``kto`` rows come from (``--kto-from``): ``pairs`` or ``outcomes``
    kto_from: str = "pairs"

    @property
    def session(self) -> Session:
        return self.source.session
