"""The suga reader: the suga-export folder written from sugasdk's public types (specs/suga.md §4)."""

from __future__ import annotations

import builtins
import json
import shutil
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from typer.testing import CliRunner

from trajset.pipeline import ExportOptions, RunOptions, read_store, run_export
from trajset.pipeline.cli import app
from trajset.pipeline.stores import detect_kind
from trajset.schemas.session import Session

from .conftest import UPSTREAM, benchmark_module

SAMPLE = UPSTREAM / "suga" / "synthetic-export"

build_suga_corpus = benchmark_module("suga_corpus").build_suga_corpus  # the benchmark's suga export


@pytest.fixture
def store(tmp_path: Path) -> Path:
    dest = tmp_path / "export"
    shutil.copytree(SAMPLE, dest)
    return dest


def _append(path: Path, record: dict[str, Any]) -> None:
    with path.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(record) + "\n")


def test_the_sample_converts_and_exports(tmp_path: Path) -> None:
    assert detect_kind(SAMPLE) == "suga"
    sessions = {s.id: s for s in read_store(SAMPLE)}
    main = sessions["sess-main-1"]
    assert main.source_format == "suga" and main.header.parent_session is None
    assert sessions["sess-sub-1"].header.parent_session == "sess-main-1"
    [link] = [e for e in main.entries if e.type == "link"]
    assert link.raw["rel"] == "subsession" and link.raw["session"] == "sess-sub-1"
    responses = [e.raw for e in main.entries if e.type == "response"]
    assert responses[0]["usage"]["input_tokens"] == 5120 and responses[0]["latency_ms"] == 2800
    assert responses[0]["usage"]["input_tokens_details"]["cached_tokens"] == 4096
    assert responses[-1]["status"] == "failed" and "deadline" in responses[-1]["error"]["message"]
    run = run_export([SAMPLE], tmp_path / "out", ExportOptions(), RunOptions(workers=1))
    assert run.counts["trajectories"] == 1
    outcomes = pl.read_parquet(tmp_path / "out/data/outcomes/*.parquet").to_dicts()
    requests = {o["label"]: o for o in outcomes if "turn_id" in json.loads(o["details"])}
    assert requests["done"]["pass"] is True and requests["failed"]["pass"] is False
    # The sub-agent session has no entries: it is reported, not dropped.
    assert [e.session_id for e in run.errors] == ["sess-sub-1"]


def test_unknown_types_are_kept_counted_and_survive_convert(store: Path, tmp_path: Path) -> None:
    body = {"steps": [{"title": "x", "status": "todo"}], "nested": {"a": [1, 2.5, None]}}
    _append(
        store / "entries.jsonl",
        {
            "session_id": "sess-main-1",
            "seq": 7,
            "turn_id": "turn-2",
            "type": "plan",
            "json": body,
            "created_at": "2026-11-09T08:05:02Z",
        },
    )
    [main] = [s for s in read_store(store) if s.id == "sess-main-1"]
    [plan] = [e for e in main.entries if e.type == "suga:plan"]
    assert plan.raw["body"] == body and main.counts == {"suga_unknown_type/plan": 1}
    run = run_export([store], tmp_path / "out", ExportOptions(), RunOptions(workers=1))
    assert run.counts["reader/suga_unknown_type/plan"] == 1
    result = CliRunner().invoke(app, ["convert", str(store), "--out", str(tmp_path / "asf")])
    assert result.exit_code == 0, result.output
    [converted] = [s for s in read_store(tmp_path / "asf") if s.id == "sess-main-1"]
    [again] = [e for e in converted.entries if e.type == "suga:plan"]
    assert again.raw == plan.raw


def test_a_gap_in_seq_is_an_incomplete_session(store: Path, tmp_path: Path) -> None:
    _append(
        store / "entries.jsonl",
        {
            "session_id": "sess-main-1",
            "seq": 9,
            "turn_id": "turn-3",
            "type": "user",
            "json": {"text": "again"},
            "created_at": "2026-11-09T08:06:00Z",
        },
    )
    run = run_export([store], tmp_path / "out", ExportOptions(), RunOptions(workers=1))
    [gap] = [e for e in run.errors if e.kind == "incomplete"]
    assert gap.session_id == "sess-main-1" and "seq 7, 8" in gap.message
    assert run.counts["sessions_exported"] == 1  # exported as far as it goes


def test_nothing_but_the_declared_files_is_read(
    store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (store / ".env").write_text("OPENAI_API_KEY=sk-live-do-not-read\n")
    (store / "config.yaml").write_text("token: do-not-read\n")
    manifest = json.loads((store / "manifest.json").read_text())
    manifest["files"] = ["sessions.jsonl", "entries.jsonl"]  # trace events and meta not declared
    (store / "manifest.json").write_text(json.dumps(manifest))
    opened: list[str] = []
    real_open = builtins.open

    def spy(file: Any, *args: Any, **kwargs: Any) -> Any:
        opened.append(str(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", spy)
    sessions = read_store(store)
    monkeypatch.undo()
    names = {Path(p).name for p in opened if str(store) in p}
    assert names <= {"manifest.json", "sessions.jsonl", "entries.jsonl"}, names
    assert all(isinstance(s, Session) for s in sessions)
    assert not any(e.type == "response" and "usage" in e.raw for s in sessions for e in s.entries)


def test_the_benchmark_generator_writes_an_export_the_reader_reads_whole(tmp_path: Path) -> None:
    """``suga_corpus.py`` (the benchmark's suga export): every session exports with no error,
    each model call's usage from its trace event, each turn's request state an outcome."""
    store, out = tmp_path / "store", tmp_path / "out"
    build_suga_corpus(store, 6, seed=2, turns=3, fork_rate=0.5, tool_output_bytes=4_000)
    assert detect_kind(store) == "suga"
    run = run_export([store], out, ExportOptions(), RunOptions(workers=1))
    assert run.counts["trees"] == 6 and run.counts["trajectories"] == 6 and not run.errors
    entries = (store / "entries.jsonl").read_text(encoding="utf-8").splitlines()
    turns = sum('"type":"user"' in line for line in entries)
    assert turns > 6 * 3  # retried turns are asked again: suga does not fork
    steps = pl.read_parquet(out / "data/steps/*.parquet")
    calls = steps.filter(pl.col("source") == "agent")
    assert calls.height == 2 * turns and calls["prompt_tokens"].null_count() == 0
    outcomes = pl.read_parquet(out / "data/outcomes/*.parquet")
    assert outcomes.filter(pl.col("label") == "done").height == turns
