"""A newcomer's first hour (issue 36): an interrupt, a filter that leaves nothing, and
messages that say how to fix what went wrong."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

from typer.testing import CliRunner

from trajset.pipeline import ExportOptions, RunOptions, run_export
from trajset.pipeline.cli import app
from trajset.pipeline.cli.errors import interrupted_message

from .conftest import UPSTREAM, benchmark_corpus
from .exports import data_files


def test_ctrl_c_prints_one_line_with_the_command_that_finishes_the_export(tmp_path: Path) -> None:
    """SIGINT to the whole process group, as a terminal sends it: no worker's traceback,
    exit 130, and the command printed finishes the export as a fresh one would."""
    store, out = tmp_path / "store", tmp_path / "out"
    benchmark_corpus().build_corpus(store, 60, seed=3)
    cmd = [sys.executable, "-m", "trajset.pipeline", "export", str(store), "--out", str(out),
           "--workers", "2", "-q"]  # fmt: skip
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline = time.monotonic() + 120
    while not list((out / ".trajset" / "units").glob("*.json")) and proc.poll() is None:
        assert time.monotonic() < deadline
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    [line] = err.strip().splitlines()
    assert line.startswith("trajset: interrupted;") and "--mode resume" in line
    again = shlex.split(line.split(": ", 2)[-1])
    assert again[:2] == ["trajset", "export"]
    done = subprocess.run([sys.executable, "-m", "trajset.pipeline", *again[1:]], check=False)
    assert done.returncode == 0
    fresh = tmp_path / "fresh"
    run_export([store], fresh, ExportOptions(), RunOptions(workers=1))
    assert data_files(out) == data_files(fresh)


def test_the_resume_command_replaces_a_mode_given_before() -> None:
    line = interrupted_message(["export", "s", "--out", "o", "--mode", "overwrite", "-q"])
    assert line.endswith("trajset export s --out o -q --mode resume")


def test_a_filter_that_leaves_nothing_says_why_and_the_card_offers_no_load(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["export", str(UPSTREAM / "claude-code"), "--out", str(out),
                                      "-q", "--where", "outcome_score >= 0.5"])  # fmt: skip
    assert result.exit_code == 0
    assert "no trajectory is left" in result.output and "records no outcomes" in result.output
    card = (out / "README.md").read_text()
    assert "load_dataset(REPO" not in card and "nothing for `load_dataset` to load" in card


def test_an_input_that_is_no_session_file_is_named_with_what_one_looks_like(
    tmp_path: Path,
) -> None:
    store = tmp_path / "store"
    store.mkdir()
    (store / "x.jsonl").write_text('{"a": 1}\n{"b": 2}\n')
    result = CliRunner().invoke(app, ["export", str(store), "--out", str(tmp_path / "o"), "-q"])
    assert result.exit_code == 0
    # shown from the store's own name on, as in errors.parquet (no path of the machine)
    assert f"{store.name}/x.jsonl:1: bad_header: line 1 is not a session header" in result.output
    assert '{"type": "session", "format": "agentsession/0.2"' in result.output


def test_resume_with_another_option_names_only_that_option(tmp_path: Path) -> None:
    runner, out = CliRunner(), str(tmp_path / "o")
    assert runner.invoke(app, ["export", "--out", out, "-q", "--keep-state"]).exit_code == 0
    result = runner.invoke(app, ["export", "--out", out, "-q", "--mode", "resume",
                                 "--prefer", "score"])  # fmt: skip
    assert result.exit_code == 2
    assert 'other options: prefer=[] (now ["score"]);' in result.output
    assert "redact_rules" not in result.output


def test_a_refused_resume_leaves_the_finished_export_whole(tmp_path: Path) -> None:
    """Found writing the README's exit-code table: a refused resume dropped the manifest,
    so a finished export read as unfinished and ``publish`` refused it."""
    runner, out = CliRunner(), tmp_path / "o"
    assert runner.invoke(app, ["export", "--out", str(out), "-q"]).exit_code == 0
    manifest = (out / "manifest.json").read_bytes()
    for other in (["--prefer", "score"], ["--secret", "hunter2-hunter2"]):
        result = runner.invoke(app, ["export", "--out", str(out), "-q", "--mode", "resume", *other])
        assert result.exit_code == 2 and "was started with other" in result.output
        assert (out / "manifest.json").read_bytes() == manifest
    dry = runner.invoke(app, ["publish", str(out), "acme/x", "--dry-run"])
    assert dry.exit_code == 0, dry.output


def test_a_folder_trajset_did_not_write_is_refused_without_advice_to_overwrite(
    tmp_path: Path,
) -> None:
    (tmp_path / "o").mkdir()
    (tmp_path / "o" / "notes.txt").write_text("mine")
    result = CliRunner().invoke(app, ["export", "--out", str(tmp_path / "o"), "-q"])
    assert result.exit_code == 1 and "did not write (notes.txt)" in result.output
    assert "--mode overwrite" not in result.output and "empty or new folder" in result.output


def test_where_errors_say_how_sql_is_written(tmp_path: Path) -> None:
    runner = CliRunner()
    for expr, hint in (
        ("outcome_pass && n_tool_calls > 1", "and / or, not && / ||"),
        ('outcome_label == "thumbs_up"', "single quotes ('thumbs_up')"),
    ):
        result = runner.invoke(app, ["export", "--out", str(tmp_path / "o"), "--where", expr])
        assert result.exit_code == 2 and hint in result.output, result.output
    ok = runner.invoke(app, ["export", "--out", str(tmp_path / "o"), "-q",
                             "--where", "outcome_label = 'thumbs_up'"])  # fmt: skip
    assert ok.exit_code == 0, ok.output
    assert json.loads((tmp_path / "o" / "manifest.json").read_text())["options"]["where"]


def test_publish_dry_run_lists_folders_and_every_file_only_when_asked(tmp_path: Path) -> None:
    runner, out = CliRunner(), tmp_path / "o"
    run_export([UPSTREAM / "claude-code"], out, ExportOptions(), RunOptions(workers=1))
    short = runner.invoke(app, ["publish", str(out), "acme/x", "--dry-run"])
    assert short.exit_code == 0, short.output
    docs = len(list((out / "atif").glob("*.json")))
    assert f"atif/ ({docs} file(s))" in short.output and len(short.output.splitlines()) < 20
    every = runner.invoke(app, ["publish", str(out), "acme/x", "--dry-run", "--verbose"])
    assert len(every.output.splitlines()) >= docs + 5


def test_inspect_says_what_a_compaction_keeps() -> None:
    result = CliRunner().invoke(app, ["inspect"])
    assert "a summary stands for the context before entry" in result.output


def test_where_leaves_out_the_outcomes_of_the_trajectories_it_left_out(tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    runner, out = CliRunner(), tmp_path / "o"
    result = runner.invoke(app, ["export", "--out", str(out), "--where", "outcome_pass"])
    assert result.exit_code == 0
    assert "sessions filtered out" in result.output and "trajectories filtered out" in result.output
    kept = {r["leaf_id"] for r in pq.read_table(out / "data" / "trajectories").to_pylist()}
    rows = pq.read_table(out / "data" / "outcomes").to_pylist()
    assert rows and all(r["leaf_ids"] and set(r["leaf_ids"]) <= kept for r in rows)
    counts = json.loads((out / "manifest.json").read_text())["counts"]
    assert counts["outcomes_filtered_out"] == counts["outcomes"] - len(rows) > 0
