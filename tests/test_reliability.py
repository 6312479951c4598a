"""Reliability: no input stops a run, names stay safe, resume is sound, outputs are deterministic."""

from __future__ import annotations

import fcntl
import json
import os
import shlex
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from typer.testing import CliRunner

from tests.builder import SessionBuilder
from tests.conftest import benchmark_corpus
from trajset.pipeline import ExportOptions, Mode, RunOptions, RunSettings, run_export, sample_store
from trajset.pipeline.cli import app
from trajset.pipeline.errors import OutputError
from trajset.pipeline.outputs.folder import locked

from .exports import data_files
from .hostile import basic, write_hostile_store


def _rows(out: Path, table: str) -> list[dict[str, Any]]:
    return pl.read_parquet(out / "data" / table / "*.parquet").to_dicts()


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, str]]:
    root = tmp_path_factory.mktemp("hostile")
    made = write_hostile_store(root / "store")
    run = run_export([root / "store"], root / "out", ExportOptions(), RunOptions(workers=1))
    assert run.counts["units"] == len(made) - 1  # the FIFO is skipped, not a unit
    return root / "store", root / "out", made


def test_no_hostile_file_stops_the_run_and_every_file_is_accounted_for(hostile) -> None:  # type: ignore[no-untyped-def]
    _, out, made = hostile
    manifest = json.loads((out / "manifest.json").read_text())
    c = manifest["counts"]
    assert c["sessions_read"] == c["sessions_exported"] + c["sessions_failed"] == len(made) - 1
    [fifo] = [s for s in manifest["skipped"] if s["path"].endswith("fifo.jsonl")]
    assert fifo["reason"] == "a named pipe (FIFO); not read"
    errors = pl.read_parquet(out / "errors.parquet").to_dicts()
    failed_files = {Path(e["source"]).name for e in errors if e["kind"] != "truncated"}
    assert failed_files == {
        "bom.jsonl", "dangling.jsonl", "deep.jsonl", "empty.jsonl", "folder.jsonl",
        "loop.jsonl", "types.jsonl", "ok.jsonl",  # ok.jsonl repeats dup.jsonl's session id
        "badid0.jsonl", "badid1.jsonl",
    }  # fmt: skip
    kinds = {Path(e["source"]).name: e["kind"] for e in errors}
    assert kinds["big.jsonl"] == kinds["cut.jsonl"] == kinds["neginf.jsonl"] == "truncated"
    assert all(e["kind"] != "internal" for e in errors)


def test_hostile_ids_get_safe_unique_names_and_rows_point_at_their_own_document(hostile) -> None:  # type: ignore[no-untyped-def]
    _, out, _ = hostile
    names = [p.name for p in (out / "atif").glob("*.json")]
    assert all(len(n) <= 100 and not n.startswith(".") and "/" not in n for n in names)
    assert not list((out / "atif").glob(".*")) and out.joinpath("atif").is_dir()
    rows = _rows(out, "trajectories")
    assert len({r["atif_path"] for r in rows}) == len(rows)
    for r in rows:
        doc = json.loads((out / r["atif_path"]).read_text())
        assert (doc["session_id"], doc["trajectory_id"]) == (r["session_id"], r["leaf_id"])
    assert {r["session_id"] for r in rows} >= {
        "a/b",
        "a:b",
        "a b",
        "..",
        "../x",
        "CON",
        "s_L",
        "s",
        "L" * 300,
    }
    assert CliRunner().invoke(app, ["validate", str(out)]).exit_code == 0


def test_workers_and_repeated_runs_give_the_same_bytes_despite_failures(
    hostile, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    store, out, _ = hostile
    run_export([store], tmp_path / "two", ExportOptions(), RunOptions(workers=2))
    run_export([store], tmp_path / "again", ExportOptions(), RunOptions(workers=1))
    assert data_files(out) == data_files(tmp_path / "two") == data_files(tmp_path / "again")


def test_the_same_store_by_three_paths_is_read_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = tmp_path / "store"
    store.mkdir()
    (store / "a.jsonl").write_text(basic("one").text())
    os.symlink(store, tmp_path / "link")
    monkeypatch.chdir(tmp_path)
    run = run_export(
        [Path("store"), store, tmp_path / "link"],
        tmp_path / "out",
        ExportOptions(),
        RunOptions(workers=1),
    )
    assert run.counts["units"] == 1 and len(_rows(tmp_path / "out", "trajectories")) == 1


def test_a_store_with_nothing_readable_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    result = CliRunner().invoke(
        app, ["export", str(tmp_path / "empty"), "--out", str(tmp_path / "o")]
    )
    assert result.exit_code == 2 and "holds no session" in result.output


def test_paths_no_reader_reads_are_counted_and_listed_skips(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = tmp_path / "store"
    shutil.copytree(sample_store(), store)
    (store / "notes.txt").write_text("not a session")
    (store / "srv-build" / "s.jsonl.lock").write_text("")  # a writer's lock file
    (store / "elsewhere").symlink_to(tmp_path, target_is_directory=True)
    (store / "sealed").mkdir()
    scandir = os.scandir

    def refuse(path: Any = ".") -> Any:  # a folder this user may not list (root may list all)
        if isinstance(path, str | os.PathLike) and Path(path).name == "sealed":
            raise PermissionError(13, "Permission denied", str(path))
        return scandir(path)

    monkeypatch.setattr(os, "scandir", refuse)
    out = tmp_path / "out"
    run = run_export([store], out, ExportOptions(), RunOptions(workers=1))
    manifest = json.loads((out / "manifest.json").read_text())
    listed = {Path(s["path"]).name: s["reason"] for s in manifest["skipped"]}
    assert listed == {
        "elsewhere": "a link to a folder; not followed",
        "notes.txt": "not a session file of this store",
        "s.jsonl.lock": "not a session file of this store",
        "sealed": "folder cannot be read: Permission denied",
    }
    assert manifest["counts"]["paths_skipped"] == 4 == len(run.skipped)
    assert manifest["counts"]["units"] == 6  # the session files themselves are all read


def test_overwrite_keeps_the_old_export_whole_until_the_new_one_replaces_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from trajset.pipeline.run import driver as export

    out = tmp_path / "out"
    run_export([sample_store()], out, ExportOptions(), RunOptions(workers=1))
    old = data_files(out)
    seen: list[bool] = []
    assemble = export.assemble_outputs

    def watch(target: Path, *args: Any) -> Any:  # mid-run: what a reader of ``out`` sees
        seen.append(data_files(out) == old and (out / "manifest.json").exists())
        return assemble(target, *args)

    monkeypatch.setattr(export, "assemble_outputs", watch)
    options = ExportOptions(where="outcome_pass")  # a different export, so the bytes change
    run_export([sample_store()], out, options, RunOptions(workers=1, mode=Mode.overwrite))
    assert seen == [True]
    fresh = tmp_path / "fresh"
    run_export([sample_store()], fresh, options, RunOptions(workers=1))
    assert data_files(out) == data_files(fresh) != old
    assert sorted(p.name for p in out.iterdir()) == sorted(p.name for p in fresh.iterdir())


def test_two_runs_never_both_hold_a_folder(tmp_path: Path) -> None:
    """Taking a lock is one ``flock``: a run that has created the lock file and not yet
    written its pid holds it too (a check of the pid, then an unlink, let a second run take
    it then, and two stale-lock takers both take one)."""
    out = tmp_path / "out"
    out.mkdir()
    starting = os.open(out / ".trajset.lock", os.O_CREAT | os.O_RDWR)
    fcntl.flock(starting, fcntl.LOCK_EX)  # created, its pid not written yet
    with pytest.raises(OutputError, match="another export"), locked(out):
        pass
    os.close(starting)
    (out / ".trajset.lock").write_text("999999999")  # left by a killed run: taken over
    with locked(out), pytest.raises(OutputError, match=f"process {os.getpid()}"), locked(out):
        pass
    assert not (out / ".trajset.lock").exists()


def test_unusable_output_folders_are_one_line(tmp_path: Path) -> None:
    runner = CliRunner()
    (tmp_path / "file").write_text("x")
    result = runner.invoke(app, ["export", "--out", str(tmp_path / "file" / "sub"), "-q"])
    assert (
        result.exit_code == 1
        and "cannot be used" in result.output
        and "Traceback" not in result.output
    )
    out = tmp_path / "busy"
    out.mkdir()
    (out / ".trajset.lock").write_text(str(os.getppid()))
    holder = os.open(out / ".trajset.lock", os.O_RDWR)
    fcntl.flock(holder, fcntl.LOCK_EX)  # a live run holds it
    result = runner.invoke(app, ["export", "--out", str(out), "-q", "--mode", "overwrite"])
    assert result.exit_code == 1 and "another export" in result.output
    assert f"process {os.getppid()}" in result.output
    os.close(holder)  # the run is gone (killed): its lock with it, its file left behind
    assert (
        runner.invoke(app, ["export", "--out", str(out), "-q", "--mode", "overwrite"]).exit_code
        == 0
    )
    assert not (out / ".trajset.lock").exists()


@pytest.mark.parametrize(("keep_state", "one_batch"), [(True, False), (False, False), (True, True)])
def test_resume_re_exports_changed_and_added_inputs_and_drops_removed_ones(
    tmp_path: Path, keep_state: bool, one_batch: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Batches are what resume reuses: with a batch per unit the four untouched units are
    reused; with the store in one batch nothing is."""
    settings = RunSettings(batch_mean_units=10**9 if one_batch else 1, batch_input_bytes=10**18)
    store = tmp_path / "store"
    shutil.copytree(sample_store(), store)
    out = tmp_path / "out"
    first = RunOptions(workers=1, keep_state=keep_state, settings=settings)
    run_export([store], out, ExportOptions(), first)
    assert (out / ".trajset" / "parts").exists() == keep_state  # scratch goes unless kept
    assert not (out / ".trajset" / "index.db").exists()  # the jobs' index goes in any case
    files = sorted(store.rglob("*.jsonl"))
    [changed] = [f for f in files if "write a regex for emails" in f.read_text()]
    removed = next(f for f in files if f != changed)
    changed.write_text(changed.read_text().replace("write a regex for", "write a pattern for"))
    before = {p.name for p in (out / "atif").glob("*.json")}
    removed.unlink()
    (store / "added").mkdir()
    (store / "added" / "s.jsonl").write_text(basic("added-session").text())
    resume = RunOptions(workers=1, mode=Mode.resume, keep_state=keep_state, settings=settings)
    run = run_export([store], out, ExportOptions(), resume)
    assert run.counts["units_reused"] == (4 if keep_state and not one_batch else 0)
    if keep_state and not one_batch:  # a kept batch whose part went missing is run again
        next((out / ".trajset" / "parts" / "steps").glob("*.arrow")).unlink()
        run = run_export([store], out, ExportOptions(), resume)
        assert run.counts["units_reused"] == 5
    fresh = tmp_path / "fresh"
    run_export([store], fresh, ExportOptions(), RunOptions(workers=1))
    assert data_files(out) == data_files(fresh)
    assert before != {p.name for p in (out / "atif").glob("*.json")}


@pytest.mark.parametrize("keep_state", [False, True])
def test_the_scratch_is_gone_before_the_sync_that_puts_the_outputs_on_the_disk(
    tmp_path: Path, keep_state: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The parts (their rows, uncompressed: 499 MB for the 63 MB benchmark corpus) are
    removed before the manifest's ``sync``, which would otherwise write them to the disk
    only to free them after; kept with ``--keep-state``."""
    out, seen = tmp_path / "out", []
    monkeypatch.setattr(os, "sync", lambda: seen.append((out / ".trajset" / "parts").exists()))
    settings = RunSettings(batch_mean_units=1, batch_input_bytes=10**18)
    run_export(
        [sample_store()],
        out,
        ExportOptions(),
        RunOptions(workers=1, keep_state=keep_state, settings=settings),
    )
    assert seen == [keep_state]
    assert (out / "manifest.json").exists()


def test_a_where_that_filters_a_session_out_is_not_a_failure(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app,
        [
            "export",
            "--out",
            str(tmp_path / "o"),
            "-q",
            "--where",
            "outcome_score >= 0.99",
            "--strict",
        ],
    )
    manifest = json.loads((tmp_path / "o" / "manifest.json").read_text())["counts"]
    assert manifest["sessions_filtered_out"] >= 1
    errors = pl.read_parquet(tmp_path / "o" / "errors.parquet")["kind"].to_list()
    assert "no_trajectory" not in errors
    assert (
        result.exit_code == 1 and "truncated" in result.output
    )  # only the real bad input trips --strict


def test_sqlite_paths_with_uri_characters_create_nothing_beside(tmp_path: Path) -> None:
    folder = tmp_path / "odd"
    folder.mkdir()
    db = folder / "store#1?x.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE sessions (id TEXT, created_at TEXT, header TEXT)")
        conn.execute("CREATE TABLE entries (session_id TEXT, seq INTEGER, line TEXT)")
        conn.execute("INSERT INTO sessions VALUES ('s', 'x', NULL)")
    before = sorted(p.name for p in folder.iterdir())
    run = run_export([db], tmp_path / "out", ExportOptions(), RunOptions(workers=1))
    assert sorted(p.name for p in folder.iterdir()) == before
    [error] = run.errors
    assert error.kind == "bad_line"  # a NULL header is one error row, not a TypeError


def test_inspect_and_validate_never_show_a_traceback(hostile, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    store, out, _ = hostile
    runner = CliRunner()
    result = runner.invoke(app, ["inspect", str(store)])
    assert result.exit_code == 0 and "UNREADABLE" in result.output and result.exception is None
    broken = tmp_path / "broken"
    shutil.copytree(out, broken)
    (broken / "README.md").write_text("---\nconfigs: [unclosed\n---\n")
    shutil.rmtree(broken / "data" / "steps")
    next((broken / "atif").glob("*.json")).write_text('{"schema_version": ')
    result = runner.invoke(app, ["validate", str(broken)])
    assert (
        result.exit_code == 1
        and result.exception is not None
        and isinstance(result.exception, SystemExit)
    )
    assert "does not parse" in result.output and "table steps is missing" in result.output


def test_a_symlink_out_of_the_store_is_not_followed_unless_asked(tmp_path: Path) -> None:
    store = tmp_path / "store"
    store.mkdir()
    (tmp_path / "elsewhere.jsonl").write_text(basic("outside").text())
    os.symlink(tmp_path / "elsewhere.jsonl", store / "link.jsonl")
    (store / "in.jsonl").write_text(basic("inside").text())
    run = run_export([store], tmp_path / "a", ExportOptions(), RunOptions(workers=1))
    assert run.counts["sessions_exported"] == 1 and not run.errors
    skipped = json.loads((tmp_path / "a" / "manifest.json").read_text())["skipped"]
    assert [s["reason"] for s in skipped] == ["a link out of the store; not followed"]
    opts = ExportOptions(reader_options=(("follow_symlinks", "true"),))
    followed = run_export([store], tmp_path / "b", opts, RunOptions(workers=1))
    assert followed.counts["sessions_exported"] == 2 and not followed.errors


KILLED = """
import sys
from pathlib import Path
from trajset.pipeline import ExportOptions, RunOptions, RunSettings, run_export
settings = RunSettings(batch_mean_units=1)  # a batch (and a marker) per session file
run_export([Path(sys.argv[1])], Path(sys.argv[2]), ExportOptions(), RunOptions(settings=settings))
"""


@pytest.mark.slow
@pytest.mark.parametrize("markers", [1, 12, 30])
def test_resume_after_sigkill_mid_run_is_byte_identical(tmp_path: Path, markers: int) -> None:
    """The run is killed once ``markers`` batches are finished and before its manifest: the
    kill lands mid-run (checked), and the resume reuses what was finished."""
    import signal
    import subprocess
    import sys
    import time

    store = tmp_path / "corpus"
    benchmark_corpus().build_corpus(store, 40, seed=3)
    settings = RunSettings(batch_mean_units=1)
    whole = tmp_path / "whole"
    run_export([store], whole, ExportOptions(), RunOptions(workers=1, settings=settings))
    out = tmp_path / "killed"
    finished = out / ".trajset" / "units"
    proc = subprocess.Popen([sys.executable, "-c", KILLED, str(store), str(out)])
    deadline = time.monotonic() + 120
    while len(list(finished.glob("*.json"))) < markers:
        assert proc.poll() is None, "the run ended before the kill"
        assert time.monotonic() < deadline
        time.sleep(0.005)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    done = len(list(finished.glob("*.json")))
    assert not (out / "manifest.json").exists() and markers <= done < 40  # killed mid-run
    resume = RunOptions(workers=1, mode=Mode.resume, settings=settings)
    run = run_export([store], out, ExportOptions(), resume)
    assert run.counts["units_reused"] == done  # what was finished before the kill
    assert data_files(out) == data_files(whole)
    assert not list(out.rglob("*.tmp"))


def test_media_over_max_media_bytes_stay_references_and_are_reported(tmp_path: Path) -> None:
    full, small = tmp_path / "full", tmp_path / "small"
    run_export([sample_store()], full, ExportOptions(), RunOptions(workers=1))
    result = CliRunner().invoke(
        app, ["export", "--out", str(small), "--max-media-bytes", "10", "--quiet"]
    )
    assert result.exit_code == 0, result.output
    (image,) = (full / "atif" / "images").iterdir()  # the sample's one image
    assert not (small / "atif" / "images").exists()
    small_docs = {p.name: p.read_text() for p in (small / "atif").glob("*.json")}
    assert small_docs.keys() == {p.name for p in (full / "atif").glob("*.json")}
    assert any(f"sha256:{image.stem}" in text for text in small_docs.values())
    assert not any("images/" in text or "data:image" in text for text in small_docs.values())
    rows = pl.read_parquet(small / "errors.parquet").to_dicts()
    reported = [e for e in rows if e["kind"] == "media_too_large"]
    assert len(reported) == 1 and f"sha256:{image.stem}" in reported[0]["message"]
    manifest = json.loads((small / "manifest.json").read_text())
    assert manifest["options"]["max_media_bytes"] == 10
    full_counts = json.loads((full / "manifest.json").read_text())["counts"]
    assert manifest["counts"]["sessions_exported"] == full_counts["sessions_exported"]
    assert "sessions_failed" not in manifest["counts"]
    assert manifest["counts"]["media_kept_as_reference"] == 1
    assert CliRunner().invoke(app, ["validate", str(small)]).exit_code == 0
    usage = CliRunner().invoke(
        app, ["export", "--out", str(tmp_path / "x"), "--max-media-bytes", "-1"]
    )
    assert usage.exit_code == 2 and "--max-media-bytes" in usage.output


def test_a_live_session_exports_its_complete_lines_and_leaves_the_writer_lock_alone(
    tmp_path: Path,
) -> None:
    src = sorted((sample_store() / "srv-build").glob("*.jsonl"))[0]
    store = tmp_path / "store"
    store.mkdir()
    live = store / src.name
    complete = src.read_bytes()
    live.write_bytes(complete + b'{"type":"message","id":"half-writ')  # the writer is mid-line
    lock = store / (src.name + ".lock")
    lock.write_text('{"pid": 4242, "host": "build-1", "since": "2026-10-04T22:00:00Z"}')
    before = lock.read_bytes(), lock.stat().st_mtime_ns
    run = run_export([store], tmp_path / "out", ExportOptions(), RunOptions(workers=1))
    assert (lock.read_bytes(), lock.stat().st_mtime_ns) == before
    (row,) = pl.read_parquet(tmp_path / "out" / "errors.parquet").to_dicts()
    assert row["kind"] == "truncated" and row["line"] == complete.count(b"\n") + 1
    assert "pid 4242 host build-1" in row["message"] and "in progress" in row["message"]
    assert run.counts["reader/live"] == 1
    assert run.counts["sessions_exported"] == 1


def test_thousands_of_siblings_export_every_branch(tmp_path: Path) -> None:
    """50,000 regenerations took over ten minutes (session facts rescanned per document);
    benchmarks/RESULTS.md has the 50,000 measurement, this keeps the shape in the suite."""
    n = 3000
    b = SessionBuilder("siblings", hashes=False)
    prompt = b.user("hi")
    for i in range(n):
        b.leaf = prompt
        b.respond(text=f"answer {i}", usage=(5, 3, 0))
    b.add("info", name="many answers")
    (tmp_path / "store").mkdir()
    (tmp_path / "store" / "s.jsonl").write_text(b.text())
    run = run_export([tmp_path / "store"], tmp_path / "out", ExportOptions(), RunOptions())
    assert run.counts["trajectories"] == len(list((tmp_path / "out" / "atif").glob("*.json")))
    assert run.counts["trajectories"] == n
    docs = [json.loads(p.read_text()) for p in (tmp_path / "out" / "atif").glob("*.json")]
    assert {d["extra"]["agentsession"]["name"] for d in docs} == {"many answers"}


def test_a_deep_chain_and_a_huge_line_export(tmp_path: Path) -> None:
    """The 100,000-deep chain and the 200 MB line are measured in benchmarks/RESULTS.md;
    these keep both shapes in the suite at a size that runs in seconds."""
    b = SessionBuilder("deep-chain", hashes=False)
    for i in range(5000):
        b.user(f"turn {i}")
        b.respond(text=f"reply {i}", usage=(1, 1, 0))
    huge = "word " * (4 << 20)  # one 20 MB line
    (tmp_path / "store").mkdir()
    (tmp_path / "store" / "deep.jsonl").write_text(b.text())
    big = basic("huge")
    big.user(huge)
    big.respond(text="read it", usage=(1, 1, 0))
    (tmp_path / "store" / "huge.jsonl").write_text(big.text())
    out = tmp_path / "out"
    run = run_export([tmp_path / "store"], out, ExportOptions(), RunOptions(workers=1))
    assert run.counts["sessions_exported"] == 2 and not run.errors
    [deep] = [r for r in _rows(out, "trajectories") if r["session_id"] == "deep-chain"]
    assert len(json.loads((out / deep["atif_path"]).read_text())["steps"]) == 10_000


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A tmpfs the test mounts (CI runs as root); unmounted at the end."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small file system needs root (CI runs as root)")
    disk = tmp_path / "disk"
    disk.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(disk)], check=True)
    try:
        yield disk
    finally:
        # lazily: a worker process of the run may still be letting go of a file there
        subprocess.run(["umount", "-l", str(disk)], check=False)


def test_a_full_disk_ends_with_one_message_and_resume_finishes_the_same_bytes(
    small_disk: Path, tmp_path: Path, runner: CliRunner
) -> None:
    store = tmp_path / "store"
    benchmark_corpus().build_corpus(store, 30, seed=5)
    roomy = tmp_path / "roomy"
    assert runner.invoke(app, ["export", str(store), "--out", str(roomy), "-q"]).exit_code == 0
    out = small_disk / "out"
    command = [sys.executable, "-m", "trajset.pipeline", "export", str(store), "--out", str(out)]
    full = subprocess.run([*command, "-q"], capture_output=True, text=True, check=False)
    assert full.returncode == 1 and "Traceback" not in full.stderr, full.stderr
    [line] = full.stderr.splitlines()  # one message
    assert line.startswith("trajset: the disk is full") and f"bytes are in {out}" in line
    assert line.endswith(shlex.join(["trajset", *command[3:], "-q", "--mode", "resume"]))
    subprocess.run(["mount", "-o", "remount,size=64m", str(small_disk)], check=True)
    again = runner.invoke(app, ["export", str(store), "--out", str(out), "-q", "--mode", "resume"])
    assert again.exit_code == 0, again.output
    for part in ("atif", "data", "errors.parquet", "README.md"):
        assert _tree_bytes(out / part) == _tree_bytes(roomy / part), part


def _tree_bytes(path: Path) -> dict[str, bytes]:
    if path.is_file():
        return {"": path.read_bytes()}
    return {
        str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()
    }


def test_a_run_that_stops_leaves_no_file_of_its_state_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The session index's SQLite connection and the inputs' spool were left open when a run
    stopped on an error (and the index's after every run)."""
    import trajset.pipeline.run.driver as driver

    def broken(*_: Any) -> list[tuple[str, str]]:
        raise RuntimeError("stopped")

    monkeypatch.setattr(driver, "skipped_paths", broken)
    with pytest.raises(RuntimeError, match="stopped"):
        run_export([sample_store()], tmp_path / "out", ExportOptions(), RunOptions(workers=1))
    open_files = [os.readlink(f"/proc/self/fd/{fd}") for fd in os.listdir("/proc/self/fd")
                  if os.path.exists(f"/proc/self/fd/{fd}")]  # fmt: skip
    assert not [f for f in open_files if str(tmp_path) in f], open_files
