"""Batches: cut where a unit's own label and size say, so an added or removed unit changes
one batch, and large sessions get small batches."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from trajset.pipeline.options import RunSettings
from trajset.pipeline.run.batches import batch_key, batches, ends_batch
from trajset.pipeline.stores import READERS, Unit

from .builder import write_sqlite_store
from .conftest import session_file

DEFAULTS = RunSettings()
MEAN_UNITS, TARGET_BYTES = DEFAULTS.batch_mean_units, DEFAULTS.batch_input_bytes


def _units(n: int, prefix: str = "s") -> list[Unit]:
    return [Unit("agentsession", (f"store/{prefix}{i:05d}.jsonl",)) for i in range(n)]


def test_batches_cover_every_unit_in_order_and_end_where_a_unit_says() -> None:
    units = _units(5000)
    cut = batches(units)
    assert [u for b in cut for u in b] == units
    assert all(ends_batch(b[-1], 0, DEFAULTS) for b in cut[:-1])  # the files do not exist: size 0
    assert not any(ends_batch(u, 0, DEFAULTS) for b in cut for u in b[:-1])
    assert MEAN_UNITS / 1.5 < len(units) / len(cut) < MEAN_UNITS * 1.5  # about the mean


def test_an_added_or_removed_unit_changes_only_its_own_batch() -> None:
    units = _units(3000)
    before = {batch_key(b) for b in batches(units)}
    added = [*units[:1234], Unit("agentsession", ("store/new.jsonl",)), *units[1234:]]
    removed = units[:2000] + units[2001:]
    for changed in (added, removed):
        after = {batch_key(b) for b in batches(changed)}
        assert len(before - after) <= 2  # the batch that held the change (or two it joined)
        assert len(after - before) == 1


def test_large_sessions_get_batches_of_about_target_bytes(tmp_path: Path) -> None:
    units = []
    for i in range(400):
        f = tmp_path / f"s{i:03d}.jsonl"
        f.write_bytes(b"x" * (TARGET_BYTES // 4))
        units.append(Unit("agentsession", (str(f),)))
    per_batch = len(units) / len(batches(units))
    assert 2 < per_batch < 6  # about four quarter-target sessions a batch, not 64


def test_owners_count_their_files_and_database_sessions_their_measured_size(
    tmp_path: Path,
) -> None:
    """An einox owner (a key and a folder of its own) weighs its files, so large owners get
    batches of their own; a database session (a key in a shared file) weighs what its reader
    measured of it, not the shared file, and without a measure nothing."""
    owners = []
    for i in range(12):
        f = tmp_path / f"user{i}" / "sessions" / "s0" / "session.json"
        f.parent.mkdir(parents=True)
        f.write_bytes(b"x" * TARGET_BYTES)
        owners.append(Unit("einox", (str(f),), f"user{i}", name=str(tmp_path / f"user{i}")))
    assert len(batches(owners)) == len(owners)  # each a batch: both workers have work
    db = tmp_path / "store.db"
    db.write_bytes(b"x" * TARGET_BYTES * 4)
    unmeasured = [Unit("agentsession-sqlite", (str(db),), f"s{i}") for i in range(200)]
    assert len(batches(unmeasured)) < 20  # about one in 64 ends a batch, not every one
    measured = [replace(u, size=TARGET_BYTES // 3) for u in unmeasured]
    assert 50 < len(batches(measured)) < 90  # about three a batch, as files of that size


def test_a_database_sessions_unit_carries_its_size(tmp_path: Path) -> None:
    """Found by the runner: 200 sessions of one agentsession database (68.9 MB) fell into 3
    batches, and 2 workers ran 1.15x one."""
    db = tmp_path / "sessions.db"
    write_sqlite_store(db, [session_file(n) for n in ("basic", "branch", "runs")])
    units = READERS["agentsession-sqlite"].units(db)
    sizes = {u.key: u.size for u in units}
    for name in ("basic", "branch", "runs"):
        text = session_file(name).read_text()
        sid = json.loads(text.splitlines()[0])["id"]
        assert sizes[sid] == sum(len(line) for line in text.splitlines() if line)


def test_the_settings_cut_the_batches() -> None:
    """Settings reach the cut: a mean of one unit gives a batch per unit."""
    units = _units(50)
    assert len(batches(units, RunSettings(batch_mean_units=1))) == 50
    assert len(batches(units, RunSettings(batch_mean_units=10**9))) < 5
