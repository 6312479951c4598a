"""What a store recorded a model call cost is carried: each step's ``cost_usd`` and the
trajectory's ``total_cost_usd`` (Pi's ``usage.cost.total``, Harbor's step
``metrics.cost_usd``, OpenCode's step-finish ``cost``), checked against the real files'
own numbers; a cost no column can hold is an error row, and the session exports."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from trajset.pipeline import ExportOptions, RunOptions, run_export

from .conftest import UPSTREAM


def _export(store: Path, out: Path) -> list[dict[str, Any]]:
    run_export([store], out, ExportOptions(redact=False), RunOptions(workers=1))
    return pq.read_table(out / "data" / "trajectories").to_pylist()


def test_a_pi_sessions_cost_and_tokens_are_its_files_own(tmp_path: Path) -> None:
    """The real teich session: one linear path, every response priced by Pi."""
    path = UPSTREAM / "pi" / "real" / "teich" / "example_pi_session.jsonl"
    cost = prompt = 0.0
    for line in path.read_text(encoding="utf-8").splitlines():
        m = json.loads(line).get("message") or {}
        if m.get("role") == "assistant":
            u = m["usage"]
            cost += u["cost"]["total"]
            prompt += u["input"] + u["cacheRead"] + u["cacheWrite"]
    [row] = _export(path.parent, tmp_path / "out")
    assert row["total_cost_usd"] == pytest.approx(cost, rel=1e-12) and cost > 10
    assert row["total_prompt_tokens"] == prompt
    steps = pq.read_table(tmp_path / "out" / "data" / "steps").to_pylist()
    priced = [s for s in steps if s["cost_usd"] is not None]
    assert priced and all(s["source"] == "agent" for s in priced)


def _chain_cost(trial: Path) -> float:
    """A trial's steps' costs over its main document and its continuations."""
    total, name = 0.0, "trajectory.json"
    while name:
        doc = json.loads((trial / "agent" / name).read_text(encoding="utf-8"))
        total += sum((s.get("metrics") or {}).get("cost_usd") or 0 for s in doc["steps"])
        name = doc.get("continued_trajectory_ref") or ""
    return total


def test_a_harbor_trials_cost_is_its_steps(tmp_path: Path) -> None:
    """Each trial's branch costs what its documents' steps say (a subagent's steps are its
    own session's)."""
    rows = _export(UPSTREAM / "harbor-jobs", tmp_path / "out")
    trials = sorted(UPSTREAM.glob("harbor-jobs/*/jobs/*/*/agent/trajectory.json"))
    assert len(trials) >= 8
    for doc in trials:
        trial = doc.parent.parent
        [row] = [r for r in rows if r["leaf_id"].startswith(trial.name + "/")]
        assert row["total_cost_usd"] == pytest.approx(_chain_cost(trial), rel=1e-12), trial.name


def test_a_harbor_trials_recorded_totals_are_its_sessions_totals(tmp_path: Path) -> None:
    """Harbor's ``final_metrics`` count the trial's summarisation subagents too: the main
    trajectory's totals plus its subagents' sessions' equal them, tokens and cost."""
    trial = (
        UPSTREAM / "harbor-jobs/golden-terminus-2/jobs/2025-12-30__10-00-00/hello-world__GcS7m2Q"
    )
    final = json.loads((trial / "agent" / "trajectory.json").read_text())["final_metrics"]
    rows = _export(UPSTREAM / "harbor-jobs" / "golden-terminus-2" / "jobs", tmp_path / "out")
    # only this trial has subagents (trajectory.summarization-*.json)
    mine = [r for r in rows if r["leaf_id"].startswith((trial.name + "/", "sub/"))]
    assert len(mine) == 1 + len(list((trial / "agent").glob("trajectory.summarization-*.json")))
    assert sum(r["total_prompt_tokens"] for r in mine) == final["total_prompt_tokens"]
    assert sum(r["total_completion_tokens"] for r in mine) == final["total_completion_tokens"]
    assert sum(r["total_cost_usd"] for r in mine) == pytest.approx(final["total_cost_usd"])


def test_an_opencode_sessions_cost_is_its_step_finishes(tmp_path: Path) -> None:
    """Sessions with one path and no compaction: the trajectory costs what OpenCode's
    step-finish parts say."""
    rows = _export(UPSTREAM / "opencode" / "sqlite", tmp_path / "out")
    db = sqlite3.connect(UPSTREAM / "opencode" / "sqlite" / "opencode.db")
    linear = ("ses_394f5135fffedkCCnJHwRkl0ok", "ses_394f522ffffeCm04BUqfoQSP0W",
              "ses_0000d818fffevH8diISnzD4xHQ")  # fmt: skip
    for sid in linear:
        parts = [json.loads(d) for (d,) in db.execute("SELECT data FROM part WHERE session_id = ?", (sid,))]  # fmt: skip
        spent = sum(p.get("cost") or 0 for p in parts if p.get("type") == "step-finish")
        [row] = [r for r in rows if r["session_id"] == sid]
        assert row["total_cost_usd"] == pytest.approx(spent, rel=1e-12) and spent > 0, sid
    db.close()


def test_a_cost_no_column_holds_is_an_error_row_and_the_session_exports(tmp_path: Path) -> None:
    store = shutil.copytree(UPSTREAM / "pi" / "real" / "teich", tmp_path / "store")
    path = store / "example_pi_session.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    n = next(i for i, line in enumerate(lines) if '"cost":{' in line)
    record = json.loads(lines[n])
    record["message"]["usage"]["cost"]["total"] = -1
    lines[n] = json.dumps(record)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    run = run_export([store], tmp_path / "out", ExportOptions(), RunOptions(workers=1))
    [row] = [e for e in run.errors if e.kind == "out_of_range"]
    assert row.line == n + 1 and "message.usage.cost.total: -1 is not a cost" in row.message
    assert run.counts["sessions_exported"] == 1
