"""Every registered reader survives hostile files: the case table of ``hostile_cases.py``.

Each case is one export, on 1 and on 2 workers, of a real store of the kind (the first of
its fixtures: ``Reader.fixtures``) with the case made in it.  It must end within
``TIMEOUT`` with exit 0, 1 or 2, print no traceback (the workers' output included: it is
read from the file descriptors), give no ``internal`` error row, and write nothing outside
its output folder: the store and the folder around it are as they were.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import threading
from contextlib import closing
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner, Result

from trajset.pipeline.cli import app
from trajset.pipeline.stores import READERS

from .fixture_stores import fixtures, lay_out
from .hostile_cases import DATABASE_CASES, FILE_CASES, TEXT_CASES, apply, is_database, victim

FIXTURES = fixtures()

TIMEOUT = 120.0
#: the kinds whose first fixture is a database (the one where the wrong column types go)
DATABASE_KINDS = ("agentsession-sqlite", "cursor", "opencode")
CASES = [
    (kind, case)
    for kind in sorted(READERS)
    for case in [*FILE_CASES, *TEXT_CASES, *(DATABASE_CASES if kind in DATABASE_KINDS else ())]
]


def _state(root: Path, out: Path) -> dict[str, tuple[int, int]]:
    """Every path below ``root`` but ``out``: (size, mtime in ns), links not followed."""
    seen: dict[str, tuple[int, int]] = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if Path(folder, d) != out]
        for name in [*dirs, *files]:
            st = os.lstat(Path(folder, name))
            seen[os.path.relpath(Path(folder, name), root)] = (st.st_size, st.st_mtime_ns)
    return seen


def _export(argv: list[str]) -> Result | None:
    """The command's result, or None when it did not end within ``TIMEOUT``."""
    done: list[Result] = []
    worker = threading.Thread(
        target=lambda: done.append(CliRunner().invoke(app, argv)), daemon=True
    )
    worker.start()
    worker.join(TIMEOUT)
    return done[0] if done else None


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize(("kind", "case"), CASES)
def test_a_hostile_input_ends_cleanly(
    kind: str, case: str, workers: int, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    store = lay_out(FIXTURES[kind][0], tmp_path / "store")
    assert is_database(victim(store)) == (kind in DATABASE_KINDS)
    apply(case, store)
    out = tmp_path / "out"
    before = _state(tmp_path, out)
    result = _export(["export", str(store), "--out", str(out), "-q", "--workers", str(workers)])
    printed = capfd.readouterr()
    assert result is not None, f"{kind}, {case}: no end within {TIMEOUT:.0f} s"
    text = result.output + printed.out + printed.err
    assert result.exit_code in (0, 1, 2), (result.exception, text)
    assert result.exception is None or isinstance(result.exception, SystemExit), text
    assert "Traceback" not in text, text
    assert _state(tmp_path, out) == before, "something was written beside the output"
    if (out / "errors.parquet").exists():
        rows = pq.read_table(out / "errors.parquet").to_pylist()
        internal = [r for r in rows if r["kind"] == "internal"]
        assert not internal, internal


def test_a_named_pipe_for_an_einox_session_is_skipped_with_its_reason(tmp_path: Path) -> None:
    """Found by hand: the fork-group facts read the pipe while finding units, and waited."""
    store = lay_out(FIXTURES["einox"][0], tmp_path / "store")
    pipe = store / "users" / "alice" / "sessions" / "s-pipe" / "session.json"
    pipe.parent.mkdir()
    os.mkfifo(pipe)
    result = _export(["export", str(store), "--out", str(tmp_path / "out"), "-q"])
    assert result is not None and result.exit_code == 0, result and result.output
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    [skip] = [s for s in manifest["skipped"] if s["path"].endswith("s-pipe/session.json")]
    assert skip["reason"] == "a named pipe (FIFO); not read"


#: per converting reader: (its fixture, the files that hold usage, a token count's key)
USAGE = {
    "claude-code": (0, "*.jsonl", "input_tokens"),
    "suga": (0, "trace_events.jsonl", "input_tokens"),
    "codex": (0, "*.jsonl", "input_tokens"),
    "einox": (0, "session.json", "prompt_tokens"),
    "harbor": (0, "trajectory.json", "prompt_tokens"),
    "gemini-cli": (0, "*.jsonl", "input"),
    "pi": (0, "*.jsonl", "input"),
    "opencode": (1, "*.json", "input"),  # its message files (the first fixture is a database)
}
#: counts no 64-bit integer column holds, as written in the file, and as the error shows them
OUT_OF_RANGE = {"1e400": "inf", "NaN": "nan", str(2**70): str(2**70), "-1": "-1", "2.5": "2.5"}


@pytest.mark.parametrize("kind", sorted(USAGE))
def test_a_token_count_out_of_range_is_a_field_problem_and_the_session_exports(
    kind: str, tmp_path: Path
) -> None:
    """Found by hand: ``int(inf)`` failed a Claude Code, suga or einox unit as an
    ``internal`` error, and the other readers read such a count as 0.  Now each is an error
    row naming file (or message), line and field, written as null; the sessions export."""
    fixture, files, key = USAGE[kind]
    number = re.compile(rf'"{key}":\s*\d+(?![.\d])')
    was = None
    for n, (written, shown) in enumerate(OUT_OF_RANGE.items()):
        store = lay_out(FIXTURES[kind][fixture], tmp_path / f"store{n}")
        if was is None:
            before = tmp_path / "before"
            done = CliRunner().invoke(app, ["export", str(store), "--out", str(before), "-q"])
            assert done.exit_code == 0, done.output
            was = json.loads((before / "manifest.json").read_text())["counts"]
        [target] = [p for p in sorted(store.rglob(files)) if number.search(p.read_text())][:1]
        text = number.sub(f'"{key}": {written}', target.read_text())
        target.write_text(text)
        out = tmp_path / f"out{n}"
        result = CliRunner().invoke(app, ["export", str(store), "--out", str(out), "-q"])
        assert result.exit_code == 0, result.output
        rows = pq.read_table(out / "errors.parquet").to_pylist()
        assert not [r for r in rows if r["kind"] == "internal"], rows
        found = [r for r in rows if r["kind"] == "out_of_range"]
        assert found, (written, rows)
        for r in found:
            assert r["source"].endswith(target.name) or target.stem in r["message"], r
            assert f"{key}: {shown} is not a count" in r["message"], r
        if target.suffix == ".jsonl":
            lines = {i for i, line in enumerate(text.splitlines(), 1) if written in line}
            assert {r["line"] for r in found} <= lines, found
        counts = json.loads((out / "manifest.json").read_text())["counts"]
        assert counts["reader/values_out_of_range"] == len(found)
        assert counts["sessions_exported"] == was["sessions_exported"] > 0


@pytest.mark.parametrize("kind", DATABASE_KINDS)
def test_a_table_name_that_is_not_utf8_is_the_databases_error(kind: str, tmp_path: Path) -> None:
    """Found by ``benchmarks/fuzz.py`` (seed 37, round 2027): a byte flipped in a table's name
    raised ``UnicodeDecodeError`` out of finding the units."""
    store = lay_out(FIXTURES[kind][0], tmp_path / "store")
    db = victim(store)
    with closing(sqlite3.connect(db)) as con:
        names = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")]
    data = db.read_bytes()
    record = next(b"table" + n.encode() * 2 for n in names if b"table" + n.encode() * 2 in data)
    at = data.index(record) + len(b"table")  # the first byte of the name column
    db.write_bytes(data[:at] + b"\xf4" + data[at + 1 :])
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["export", str(store), "--out", str(out), "-q"])
    assert result.exit_code in (0, 2), result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    if result.exit_code == 0:
        rows = pq.read_table(out / "errors.parquet").to_pylist()
        assert rows and not [r for r in rows if r["kind"] == "internal"], rows
