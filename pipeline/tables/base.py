"""What an output table is: a declared Arrow schema, a description for the card, and its rows.

A table's rows are built from the records the stages made (``SessionExport``),
never by re-reading documents or inputs: a ``trajectory`` table from each slice
of a session's trajectories, with their documents; a ``session`` table once per
session, from all its kept trajectories after their documents were written and
released, with only the messages a preference pair takes of them
(``preferences.PairSides``), so a session of thousands of trajectories never
holds every document, or every message, at once.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

import pyarrow as pa

from trajset.schemas.records import Anchored, ExportedTrajectory, SessionExport, Trajectory

Row = dict[str, Any]


@dataclass(frozen=True)
class Dedup:
    """How ``--dedup`` tells two rows of a table apart (``run/dedup.py``)."""

    #: the columns that name a row, the session id first (a row held inside another
    #: session's row is subsumed by it)
    key: tuple[str, ...]
    #: the columns hashed before the links (rows that differ in them are never equal)
    seed: tuple[str, ...]
    #: a row's parts in order: every prefix is hashed, the whole row last
    links: Callable[[Row], list[Any]]
    #: the messages ``--dedup near`` compares by their words
    messages: Callable[[Row], list[Any]]
    #: the manifest count of the rows left out
    counter: str


@dataclass(frozen=True)
class Table:
    """One dataset config: ``data/<name>/*.parquet``."""

    name: str
    schema: pa.Schema
    description: str  # one line for the dataset card
    rows: Callable[[SessionExport, Counter[str]], Iterable[Row]]  # may count into the unit's stats
    per: Literal["trajectory", "session"] = "trajectory"
    dedup: Dedup | None = None  # ``--dedup`` leaves out the rows it holds twice
    #: rows made from another table's, as they are made: (that table, a factory called
    #: once per session giving ``row, stats -> rows``), so nothing is built twice
    derive: (
        tuple[str, Callable[[SessionExport], Callable[[Row, Counter[str]], Iterable[Row]]]] | None
    ) = None
    #: columns whose value one object holds for many rows (a fork's pairs share its
    #: prompt): a part writes each such object once (``part_files.to_table``)
    shared: tuple[str, ...] = ()
    #: what the table needs of a trajectory while its session's tree is at hand (its document
    #: holds the last context window only): ``(trajectory, messages, max_media_bytes) ->
    #: Prepared``, kept as ``ExportedTrajectory.prepared[name]``, its media written with the
    #: document's
    prepare: Callable[[Trajectory, list[Anchored], int | None], Prepared] | None = None
    #: what a ``session`` table keeps of a trajectory's messages once its document is written,
    #: until the session's last slice: a factory called once per session
    retain: Callable[[SessionExport], Callable[[ExportedTrajectory], list[Anchored]]] | None = None
    #: its rows' trainable tool calls are what the tools a store did not record are inferred
    #: from (``tool_schemas``)
    teaches_tools: bool = False
    #: its ``tools`` column takes the inferred tools where a store recorded none
    takes_inferred_tools: bool = False
    #: the JSON-text fields (at any depth) a trainer reads as objects: the card declares them
    #: with the ``datasets`` ``Json()`` feature, so ``load_dataset`` gives objects, while the
    #: Parquet column stays text
    json_fields: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Prepared:
    """What a table's ``prepare`` took of a trajectory, and the media that took (by path)."""

    value: Any
    media: dict[str, bytes] = field(default_factory=dict)
