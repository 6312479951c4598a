"""An export merged into what a repository already holds: the files to send and to delete.

A session the export holds replaces that session on the repository, row by row: a row
whose content hash the repository already holds for that session stays where it is and
is not sent; a row it lacks goes into a new shard (``<split>-<batch>-00000.parquet``,
``batch`` named by the rows' hashes; an export shard whose rows are all new and whose
name is free is sent as it is); a row of the session the export no longer has is taken
out of its shard, which is sent again without it (or deleted when empty).  Documents,
traces and media are compared by path and SHA-256: only new and changed ones are sent,
and a re-exported session's documents that are gone are deleted.  A session the export
does not hold stays as it is, unless ``prune``, which makes the repository this export.
Rows and files of two redaction rule sets are never left side by side (``PublishRefused``).
"""

from __future__ import annotations

import hashlib
import os
import shutil
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from ..outputs.parquet import WRITE_OPTIONS
from ..tables import SCHEMAS
from .checks import PublishRefused
from .index import Item, row_hash, shard_items

#: a remote file brought to a local path (``remote.Remote.fetch``)
Fetch = Callable[[str], Path]
Key = tuple[str, str, str]  # (table, session, row hash)


@dataclass
class Merged:
    """What to send (``stage`` holds it) and delete, and the merged repository's items."""

    items: list[Item] = field(default_factory=list)
    sent: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    rows_added: Counter[str] = field(default_factory=Counter)
    rows_removed: Counter[str] = field(default_factory=Counter)
    sessions_kept: int = 0  # of earlier publishes, which this export does not hold


def merge(
    directory: Path, stage: Path, local: list[Item], remote: list[Item], *,
    prune: bool, version: str, fetch: Fetch, repo_id: str,
) -> Merged:  # fmt: skip
    """Stage the files of ``directory`` that ``remote`` lacks (see the module docstring)."""
    ours = {i.session_id for i in local if i.session_id}
    theirs = {i.session_id for i in remote if i.session_id}
    kept = theirs - ours if not prune else set()
    _refuse_mixed(remote, kept, version, repo_id, directory)
    out = Merged(sessions_kept=len(kept))
    _rows(directory, stage, local, remote, kept, version, fetch, out)
    _files(directory, stage, local, remote, kept, out)
    return out


def _refuse_mixed(
    remote: list[Item], kept: set[str], version: str, repo_id: str, directory: Path
) -> None:
    stale = [
        i
        for i in remote
        if i.kind == "row" and i.session_id in kept and i.redaction_version != version
    ]
    if not stale:
        return
    sessions, old = {i.session_id for i in stale}, {i.redaction_version for i in stale}
    raise PublishRefused(
        f"{repo_id} holds {len(stale)} row(s) of {len(sessions)} session(s) this export does "
        f"not hold, redacted under rule set {', '.join(sorted(old))}, not this export's "
        f"{version}: rows of two rule sets would stand side by side. Export those sessions "
        f"again with this trajset into {directory} (the stores that still hold them, `trajset "
        f"export STORES --out {directory} --mode overwrite`), or remove them from the "
        f"repository: `trajset publish {directory} {repo_id} --prune`"
    )


def _rows(
    directory: Path, stage: Path, local: list[Item], remote: list[Item], kept: set[str],
    version: str, fetch: Fetch, out: Merged,
) -> None:  # fmt: skip
    """Rows: matched ones stay, the repository's others leave their shards, new ones go."""
    budget = Counter((i.table, i.session_id, i.hash) for i in local if i.kind == "row")
    drop: dict[str, Counter[Key]] = defaultdict(Counter)  # remote shard -> rows to drop
    stay: list[Item] = []
    for i in (i for i in remote if i.kind == "row"):
        key = (i.table, i.session_id, i.hash)
        if i.session_id in kept or budget[key] > 0:
            budget[key] -= i.session_id not in kept
            stay.append(i)
        else:
            drop[i.path][key] += 1
    have = Counter((i.table, i.session_id, i.hash) for i in stay)
    shards = {i.path: i for i in remote if i.kind == "shard"}
    rewritten = []
    for path, rows in sorted(drop.items()):
        out.rows_removed[shards[path].table] += rows.total()
        rewritten += _rewritten(stage, path, shards.pop(path), rows, fetch, version, out)
    out.items += [i for i in stay if i.path not in drop] + rewritten + list(shards.values())
    _new_rows(directory, stage, local, have, set(shards) | set(drop), version, out)


def _rewritten(
    stage: Path, path: str, shard: Item, drop: Counter[Key], fetch: Fetch, version: str,
    out: Merged,
) -> list[Item]:  # fmt: skip
    """A remote shard without the rows in ``drop``: staged, or deleted when none is left."""
    table = pq.read_table(fetch(path))
    keep = []
    for row in table.to_pylist():
        key = (shard.table, str(row.get("session_id") or ""), row_hash(row))
        keep.append(drop[key] <= 0)
        drop[key] -= 1
    left = table.filter(pa.array(keep, pa.bool_()))
    if left.num_rows == 0:
        out.deleted.append(path)
        return []
    _write(stage / path, left)
    out.sent.append(path)
    return shard_items(stage, path, shard.table, version)


def _new_rows(
    directory: Path, stage: Path, local: list[Item], have: Counter[Key], taken: set[str],
    version: str, out: Merged,
) -> None:  # fmt: skip
    """The export's rows the repository lacks: a shard of nothing else, unsent and under a
    free name, as it is; the rest in a new shard per table and split."""
    by_shard: dict[str, list[Item]] = defaultdict(list)
    for i in local:
        if i.kind == "row":
            by_shard[i.path].append(i)
    shards = {i.path: i for i in local if i.kind == "shard"}
    pending: dict[tuple[str, str], list[tuple[str, int]]] = defaultdict(list)
    for path in sorted(shards):  # an empty one too: its table's schema, where it is free
        rows, new = by_shard.get(path, []), []
        for n, i in enumerate(rows):
            key = (i.table, i.session_id, i.hash)
            if have[key] > 0:
                have[key] -= 1
            else:
                new.append(n)
        out.rows_added[shards[path].table] += len(new)
        if len(new) == len(rows) and path not in taken:
            _link(directory / path, stage / path)
            out.sent.append(path)
            out.items += [shards[path], *rows]
        else:
            for n in new:
                pending[(shards[path].table, rows[n].split)].append((path, n))
    for (table, split), where in sorted(pending.items()):
        out.items += _batch(directory, stage, table, split, where, version, out)


def _batch(
    directory: Path, stage: Path, table: str, split: str, where: list[tuple[str, int]],
    version: str, out: Merged,
) -> list[Item]:  # fmt: skip
    """New rows of one table and split in one shard named by their hashes."""
    wanted: dict[str, list[int]] = defaultdict(list)  # shard -> its rows, in order
    for path, n in where:
        wanted[path].append(n)
    rows = []
    for path, ns in wanted.items():
        got = pq.read_table(directory / path).to_pylist()
        rows += [got[n] for n in ns]
    digest = hashlib.sha256("".join(row_hash(r) for r in rows).encode()).hexdigest()[:12]
    rel = f"data/{table}/{split}-{digest}-00000.parquet"
    _write(stage / rel, pa.Table.from_pylist(rows, schema=SCHEMAS[table]))
    out.sent.append(rel)
    return shard_items(stage, rel, table, version)


def _files(
    directory: Path, stage: Path, local: list[Item], remote: list[Item], kept: set[str],
    out: Merged,
) -> None:  # fmt: skip
    """Documents, traces, media, errors: new and changed ones sent; a re-exported session's
    that are gone deleted (every one gone, with ``prune``); the kept sessions' stay."""
    mine = {i.path: i for i in local if i.kind == "file"}
    theirs = {i.path: i for i in remote if i.kind == "file"}
    for path, i in sorted(mine.items()):
        if path not in theirs or theirs[path].hash != i.hash:
            _link(directory / path, stage / path)
            out.sent.append(path)
        out.items.append(i)
    for path, i in sorted(theirs.items()):
        if path in mine:
            continue
        if i.session_id in kept or (not i.session_id and kept):  # media a kept session shows
            out.items.append(i)
        else:
            out.deleted.append(path)


def _write(path: Path, table: pa.Table) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path, **WRITE_OPTIONS)


def _link(source: Path, target: Path) -> None:
    """``target`` holds ``source``'s bytes: a hard link where the file system allows."""
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.exists():
        target.unlink()
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)
