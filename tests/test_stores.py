"""Finding sessions: files, folders (the jsonl store layout) and the agentsession SQLite store."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from trajset.pipeline import (
    ExportOptions,
    RunOptions,
    discover,
    read_session,
    read_store,
    run_export,
    sample_store,
)
from trajset.pipeline.errors import SessionReadError, UsageError

from .conftest import session_file

SCHEMA = """
CREATE TABLE sessions (id TEXT PRIMARY KEY, created_at TEXT, updated_at TEXT, cwd TEXT, parent_session TEXT,
                       name TEXT, superseded_by TEXT, header TEXT) STRICT;
CREATE TABLE entries (session_id TEXT REFERENCES sessions(id) ON DELETE CASCADE, seq INTEGER, id TEXT, parent TEXT,
                      type TEXT, line TEXT, UNIQUE(session_id, seq), UNIQUE(session_id, id)) STRICT;
"""


def make_db(path: Path, files: list[Path]) -> None:
    """An agentsession SQLite store (spec §8.2) holding the given session files."""
    db = sqlite3.connect(path)
    db.executescript(SCHEMA)
    for f in files:
        lines = [line for line in f.read_text().splitlines() if line]
        header = json.loads(lines[0])
        db.execute(
            "INSERT INTO sessions VALUES (?,?,?,?,?,?,?,?)",
            (
                header["id"],
                header["created_at"],
                header["created_at"],
                header.get("cwd"),
                None,
                None,
                None,
                lines[0],
            ),
        )
        for seq, line in enumerate(lines[1:]):
            e = json.loads(line)
            db.execute(
                "INSERT INTO entries VALUES (?,?,?,?,?,?)",
                (header["id"], seq, e["id"], e["parent"], e["type"], line),
            )
    db.commit()
    db.close()


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
    assert run.stats.counts["trajectories"] == 3
    assert not run.errors


def test_folder_discovery_is_recursive_and_sorted() -> None:
    labels = [u.label for u in discover([sample_store()])]
    assert labels == sorted(labels) and len(labels) == 6
    assert all(Path(label).parent.parent == sample_store() for label in labels)


def test_missing_store_and_unknown_kind_are_usage_errors(tmp_path: Path) -> None:
    with pytest.raises(UsageError):
        discover([tmp_path / "nope"])
    with pytest.raises(UsageError, match="valid"):
        discover([sample_store()], kind="parquet")


def test_unreadable_units_are_accounted_for(agentsession_data: Path, tmp_path: Path) -> None:
    store = tmp_path / "store"
    store.mkdir()
    for n in ["basic", "corrupt-middle", "duplicate-id", "truncated", "bad-first-kept"]:
        (store / f"{n}.jsonl").write_bytes(session_file(n).read_bytes())
    run = run_export([store], tmp_path / "out", ExportOptions(), RunOptions(workers=1))
    c = run.stats.counts
    assert c["sessions_read"] == 5 == c["sessions_exported"] + c["sessions_failed"]
    kinds = sorted(e.kind for e in run.errors)
    assert (
        kinds.count("bad_line") == 1 and kinds.count("duplicate_id") == 1 and "truncated" in kinds
    )
    assert "context" in kinds  # the bad-first-kept leaf
    lines = {e.kind: e.line for e in run.errors}
    assert lines["duplicate_id"] and lines["bad_line"]


def test_read_error_is_raised_for_an_unreadable_file(tmp_path: Path) -> None:
    with pytest.raises(SessionReadError) as info:
        read_session(tmp_path / "absent.jsonl")
    assert info.value.rule == "io"
