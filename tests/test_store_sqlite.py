"""The agentsession SQLite store (spec §8.2): a reader behind the store seam, like the files."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from trajset.pipeline import (
    ExportOptions,
    RunOptions,
    discover,
    read_session,
    read_store,
    run_export,
)
from trajset.pipeline.stores import detect_kind

from .builder import write_sqlite_store as make_db
from .conftest import session_file


def test_sqlite_store_reads_like_the_files(agentsession_data: Path, tmp_path: Path) -> None:
    names = ["basic", "branch", "compaction", "extensions", "runs"]
    db = tmp_path / "store.db"
    make_db(db, [session_file(n) for n in names])
    units = discover([db])
    assert [u.kind for u in units] == ["agentsession-sqlite"] * 5
    by_id = {s.id: s for s in read_store(db)}
    for n in names:
        expected = read_session(session_file(n))
        got = by_id[expected.id]
        assert [e.raw for e in got.entries] == [e.raw for e in expected.entries]
        assert got.header_raw == expected.header_raw


def test_sqlite_store_exports(agentsession_data: Path, tmp_path: Path) -> None:
    db = tmp_path / "store.db"
    make_db(db, [session_file(n) for n in ["basic", "branch"]])
    run = run_export([db], tmp_path / "out", ExportOptions(), RunOptions(workers=1))
    assert run.counts["trajectories"] == 3
    assert not run.errors


def test_a_database_is_detected_and_a_folder_is_not(
    agentsession_data: Path, tmp_path: Path
) -> None:
    db = tmp_path / "store.db"
    make_db(db, [session_file("basic")])
    assert detect_kind(db) == "agentsession-sqlite"
    assert detect_kind(tmp_path) == "agentsession"
    assert detect_kind(session_file("basic")) == "agentsession"


def test_a_unit_is_one_session_row(agentsession_data: Path, tmp_path: Path) -> None:
    db = tmp_path / "store.db"
    make_db(db, [session_file("basic"), session_file("branch")])
    units = discover([db])
    assert [len(u.files) for u in units] == [1, 1] and all(u.key for u in units)
    assert {u.label for u in units} == {f"{db}#{u.key}" for u in units}


WRITER = """
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1], timeout=0, isolation_level=None)  # timeout 0: never waits
ids = [r[0] for r in db.execute("SELECT id FROM sessions ORDER BY id")]
last = {s: db.execute("SELECT id, seq FROM entries WHERE session_id=? ORDER BY seq DESC LIMIT 1", (s,)).fetchone() for s in ids}
print("started", flush=True)
for i in range(int(sys.argv[2])):
    for s in ids:
        parent, seq = last[s]
        eid = f"w{i:05d}"
        line = json.dumps({"type": "item", "id": eid, "parent": parent, "ts": "2026-09-17T12:00:00Z",
                           "item": {"type": "message", "role": "user", "content": "more"}})
        db.execute("BEGIN IMMEDIATE")
        db.execute("INSERT INTO entries VALUES (?,?,?,?,?,?)", (s, seq + 1, eid, parent, "item", line))
        db.execute("COMMIT")
        last[s] = (eid, seq + 1)
print("done", flush=True)
"""


def test_a_live_store_exports_a_consistent_prefix_and_never_blocks_the_writer(
    agentsession_data: Path, tmp_path: Path
) -> None:
    import subprocess
    import sys

    db = tmp_path / "live.db"
    make_db(db, [session_file(n) for n in ["basic", "branch", "runs"]])
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA journal_mode=WAL")  # as the reference writer runs it
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(db), "400"], stdout=subprocess.PIPE, text=True
    )
    assert writer.stdout is not None and writer.stdout.readline().strip() == "started"
    run = run_export([db], tmp_path / "out", ExportOptions(), RunOptions(workers=2))
    rest, _ = writer.communicate(timeout=120)
    assert writer.returncode == 0 and rest.strip() == "done"  # never "database is locked"
    assert not run.errors
    final = {s.id: [e.id for e in s.entries] for s in read_store(db)}
    for doc_path in (tmp_path / "out" / "atif").glob("*.json"):
        doc = json.loads(doc_path.read_text())
        seen = [s["extra"]["agentsession"]["entry_id"] for s in doc["steps"]]
        order = final[doc["session_id"]]
        positions = [order.index(e) for e in seen]
        assert positions == sorted(positions)  # steps come from a prefix-consistent snapshot


def test_a_foreign_sqlite_file_is_refused_naming_what_is_missing(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from trajset.pipeline.cli import app

    other = tmp_path / "other.db"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE notes (id TEXT)")
    result = CliRunner().invoke(app, ["export", str(other), "--out", str(tmp_path / "o")])
    assert result.exit_code == 2 and "no table 'sessions'" in result.output
    half = tmp_path / "half.db"
    with sqlite3.connect(half) as conn:
        conn.execute("CREATE TABLE sessions (id TEXT, created_at TEXT, header TEXT)")
        conn.execute("CREATE TABLE entries (session_id TEXT, seq INTEGER)")
    result = CliRunner().invoke(app, ["inspect", str(half)])
    assert result.exit_code == 2 and "has no column 'line'" in result.output


def test_a_wal_database_is_read_without_leaving_files_beside_it(
    agentsession_data: Path, tmp_path: Path
) -> None:
    store = tmp_path / "store"
    store.mkdir()
    db = store / "sessions.db"
    make_db(db, [session_file(n) for n in ["basic", "branch"]])
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA journal_mode=WAL")  # closed: its -wal and -shm are gone
    assert sorted(p.name for p in store.iterdir()) == ["sessions.db"]
    run = run_export([db], tmp_path / "out", ExportOptions(), RunOptions(workers=1))
    assert run.counts["trajectories"] == 3 and not run.errors
    assert sorted(p.name for p in store.iterdir()) == ["sessions.db"]  # a plain ro open leaves two
