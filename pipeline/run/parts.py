"""A batch's share of every table as Arrow IPC parts (none for a table it has no rows of),
the redaction of a unit's error rows (they travel in its result and marker), and the
assembly that plans each table's shards from the parts as results arrive (the workers
write them, ``parquet.write_shard``, and count their placeholders)."""

from __future__ import annotations

from dataclasses import replace
from functools import cache, partial
from pathlib import Path
from typing import Any

from trajset.redactors import Redactor
from trajset.schemas.records import ErrorRow

from ..options import RunSettings
from ..outputs.markers import part_path
from ..outputs.parquet import ShardPlan, ShardTask, Split
from ..outputs.part_files import read_part, to_table, write_part
from ..outputs.tables_info import table_facts
from ..splits import TRAIN, Splits, assign, split_names
from ..tables import CONFIGS, TABLES, Row
from ..tables.tool_schemas import Shapes, call_shapes, merge, schemas
from .batches import Batch, batch_key
from .dedup import Digests, RowKey, decide, digests
from .results import BatchResult, PartFacts, UnitResult

JSON = Any


def redact_errors(r: Redactor, result: UnitResult) -> None:
    """The unit's error rows redacted like any text (they are written to ``errors.parquet``)."""
    if r.active:
        result.errors = [
            ErrorRow(
                r.plain_text(e.source),
                r.plain_id(e.session_id),
                e.line,
                e.kind,
                r.plain_text(e.message),
            )
            for e in result.errors
        ]


def write_parts(
    out: Path, batch: Batch, seq: int, rows: dict[str, list[Row]], dedup: str
) -> tuple[PartFacts, Digests, Shapes]:
    """Part ``seq`` of the batch: a file per table it holds rows of; returns their facts,
    and with ``dedup`` the digest of each row of the tables it applies to."""
    facts: PartFacts = {}
    held = digests(rows, dedup == "near") if dedup != "off" else {}
    for name in TABLES:
        path = part_path(out, batch_key(batch), seq, name)
        if rows[name]:  # one table's Arrow at a time: a huge session's tables each weigh it
            facts[name] = write_part(path, to_table(name, rows[name], TABLES[name].shared))
        else:  # no part for no rows (most batches have no outcomes); a stale one must not stay
            path.unlink(missing_ok=True)
    taught = (r for name, t in TABLES.items() if t.teaches_tools for r in rows.get(name, []))
    return facts, held, call_shapes(taught)


def _splits_held(
    split_of: dict[str, str], key: tuple[str, ...], drop: set[tuple[Any, ...]], part: Path
) -> frozenset[str]:
    """The splits a part has rows of, rows left out as duplicates not counted."""
    table = read_part(part).select(["session_id", *(c for c in key if c != "session_id")])
    sessions = table.column("session_id").to_pylist()
    if drop:
        keys = zip(*(table.column(c).to_pylist() for c in key), strict=True)
        sessions = [s for s, k in zip(sessions, keys, strict=True) if k not in drop]
    return frozenset(split_of.get(s, TRAIN) for s in sessions)


class Assembly:
    """Every table's shards, planned from each batch's parts as its result arrives in unit
    order (``ShardPlan``); ``tasks`` hands them to the workers, ``facts`` gathers what they
    return per table."""

    def __init__(
        self,
        out: Path,
        settings: RunSettings,
        near: float | None = None,
        splits: Splits = (),
        split_by: str | None = None,
        audit: bool = False,
        redaction_version: str | None = None,
    ) -> None:
        self.out, self.near, self.splits, self.split_by = out, near, splits, split_by
        self.audit = audit  # the shards count the placeholders in the rows they write
        self.redaction_version = redaction_version  # stamped on every row
        self.plans = {name: ShardPlan(out, name, settings) for name in CONFIGS}
        self.digests: Digests = {}  # every row's, per table, in unit order
        self.dropped: dict[str, dict[RowKey, RowKey]] = {}  # per table
        self.shapes: Shapes = {}  # every call's, merged in unit order
        self.inferred: dict[tuple[str, str], str] = {}

    def add(self, result: BatchResult) -> None:
        for seq, facts in enumerate(result.parts):
            for name, (rows, nbytes) in facts.items():
                path = part_path(self.out, batch_key(result.batch), seq, name)
                self.plans[name].add(path, rows, nbytes)
        for part in result.digests:
            for name, held in part.items():
                self.digests.setdefault(name, []).extend(held)
        for shapes in result.shapes:
            merge(self.shapes, shapes)

    def tasks(self) -> list[ShardTask]:
        """Every shard to write, largest first (so the workers finish together); the rows
        held twice (``dedup.decide``) are left out of theirs, and the rows whose store
        recorded no tools get the inferred ones."""
        self.dropped = {name: decide(held, self.near) for name, held in self.digests.items()}
        self.inferred = schemas(self.shapes)
        tools = tuple(sorted(self.inferred.items()))
        placed = self.sessions_by_split()
        held = frozenset(s for ss in placed.values() for s in ss)  # not in train
        split_of = {s: name for name, ss in placed.items() for s in ss}
        tasks = []
        for plan in self.plans.values():
            spec = TABLES[plan.name].dedup
            drop = tuple(sorted(self.dropped.get(plan.name, {})))
            holds = cache(
                partial(_splits_held, split_of, spec.key if spec and drop else (), set(drop))
            )  # each part read once, for its few columns, and only with --split
            for task in plan.tasks(dict(self.splits), holds):
                if drop and spec is not None:
                    task = replace(task, key=spec.key, drop=drop)
                if TABLES[plan.name].takes_inferred_tools:
                    task = replace(task, tools=tools)
                name = task.split.name
                task = replace(
                    task,
                    audit=self.audit,
                    split=Split(name, exclude=held, redaction_version=self.redaction_version)
                    if name == TRAIN
                    else Split(
                        name, frozenset(placed.get(name, ())), frozenset(), self.redaction_version
                    ),
                )
                tasks.append(task)
        return sorted(tasks, key=lambda t: t.nbytes, reverse=True)

    def sessions_by_split(self) -> dict[str, tuple[str, ...]]:
        """Each ``--split``'s sessions (``splits.assign``), from the ``trajectories`` parts:
        every session with rows has trajectories; its stratum is the ``--split-by`` value
        on its first preferred path."""
        if not self.splits:
            return {}
        columns = ["session_id", "is_preferred", *([self.split_by] if self.split_by else [])]
        strata: dict[str, Any] = {}
        preferred: set[str] = set()
        for path, _, _ in self.plans["trajectories"].parts:
            for row in read_part(path).select(columns).to_pylist():
                sid = row["session_id"]
                if sid not in preferred and (sid not in strata or row["is_preferred"]):
                    strata[sid] = row.get(self.split_by) if self.split_by else None
                    if row["is_preferred"]:
                        preferred.add(sid)
        out: dict[str, list[str]] = {}
        for sid, name in assign(strata, self.splits, self.split_by is not None).items():
            out.setdefault(name, []).append(sid)
        return {name: tuple(sorted(sessions)) for name, sessions in out.items()}

    def facts(self, tasks: list[ShardTask], written: list[dict[str, Any]]) -> dict[str, JSON]:
        """Each table's facts (``table_facts``) from what ``write_shard`` returned per task,
        with the rows and bytes of each split."""
        shards = sorted(zip(tasks, written, strict=True), key=lambda tw: tw[0].path.name)
        out: dict[str, JSON] = {}
        for name in self.plans:
            mine = [(t, f) for t, f in shards if t.table == name]
            out[name] = table_facts(self.out, [(t.path, f) for t, f in mine])
            out[name]["splits"] = {
                split: {
                    "rows": sum(f["rows"] for t, f in mine if t.split.name == split),
                    "bytes": sum(f["bytes"] for t, f in mine if t.split.name == split),
                }
                for split in split_names(self.splits)
            }
        return out
