"""Quality columns (user turns, tool calls, failed calls, recovery, duration) on
``trajectories`` and ``sft``, checked against the real Claude Code sources and a built store."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from trajset.pipeline import ExportOptions, RunOptions, run_export

from .builder import SessionBuilder
from .conftest import UPSTREAM

CC = UPSTREAM / "claude-code"


def _rows(out: Path, table: str) -> list[dict[str, Any]]:
    return pq.read_table(out / "data" / table).to_pylist()


def _error_results(folder: Path) -> set[str]:
    """The tool_use ids whose tool_result the source marks ``is_error``."""
    ids = set()
    for f in folder.rglob("*.jsonl"):
        for line in f.read_text(encoding="utf-8").splitlines():
            r = json.loads(line) if line.strip() else {}
            content = (r.get("message") or {}).get("content") if r.get("type") == "user" else None
            for b in content if isinstance(content, list) else []:
                if isinstance(b, dict) and b.get("type") == "tool_result" and b.get("is_error"):
                    ids.add(b["tool_use_id"])
    return ids


def _from_messages(row: dict[str, Any], failed_ids: set[str]) -> tuple[int, int, bool]:
    """(calls, failed calls, recovered) of the calls the row's trainable answers make, read
    from its messages: another route than the tree's entries the columns are counted from."""
    own: dict[str, str] = {}
    calls = failed = 0
    failing: set[str] = set()
    recovered = False
    for m in row["messages"]:
        if m["role"] == "assistant" and m["trainable"]:
            for c in m["tool_calls"] or []:
                own[c["id"]] = c["function"]["name"]
                calls += 1
        elif m["role"] == "tool" and m["tool_call_id"] in own:
            tool = own[m["tool_call_id"]]
            if m["tool_call_id"] in failed_ids:
                failed += 1
                failing.add(tool)
            elif tool in failing:
                recovered = True
    return calls, failed, recovered


def test_claude_code_failed_calls_match_the_sources_is_error(tmp_path: Path) -> None:
    out = tmp_path / "cc"
    run_export([CC], out, ExportOptions(redact=False), RunOptions(workers=1))
    failed_ids = _error_results(CC)
    rows = _rows(out, "sft")
    for row in rows:
        assert (row["n_tool_calls"], row["n_failed_tool_calls"], row["recovered"]) == (
            _from_messages(row, failed_ids)
        ), (row["session_id"], row["window"])
    assert sum(r["n_failed_tool_calls"] for r in rows) >= 5 and any(r["recovered"] for r in rows)
    paths = {(t["session_id"], t["leaf_id"]): t for t in _rows(out, "trajectories")}
    for key in {(r["session_id"], r["leaf_id"]) for r in rows}:  # windows add up to the path
        windows = [r for r in rows if (r["session_id"], r["leaf_id"]) == key]
        for column in ("n_user_turns", "n_tool_calls", "n_failed_tool_calls"):
            assert sum(w[column] for w in windows) == paths[key][column], (key, column)


def _store(root: Path) -> Path:
    """A user asks; the agent runs a command that exits 1, runs it again (exit 0), edits a
    file that fails; a hidden context message and the answer follow.  A second branch
    forks after the first failure and reads a file: another tool, so not a recovery."""
    b = SessionBuilder("0199a1b2-0000-7000-8000-0000000000f1", hashes=False)
    b.message("developer", "answer briefly")
    b.user("run the tests, then fix the parser")
    b.respond(calls=[("c1", "bash", {"cmd": "pytest"})])
    fork = b.tool_output("c1", "1 failed", **{"trajset:exit_code": 1})
    b.respond(calls=[("c2", "bash", {"cmd": "pytest -x"})])
    b.tool_output("c2", "passed", **{"trajset:exit_code": 0})
    b.respond(calls=[("c3", "edit", {"path": "p.py"})])
    b.tool_output("c3", "no such file", **{"trajset:failed": True})
    b.message("user", "<system-reminder>", visible=False)
    b.respond(text="Tests pass; the edit failed.")
    b.branch(fork).user("never mind, read it")
    b.respond(calls=[("c4", "read", {"path": "p.py"})])
    b.tool_output("c4", "def parse(): ...")
    b.respond(text="Stopped.")
    root.mkdir()
    (root / "s.jsonl").write_text(b.text())
    return root


@pytest.mark.parametrize("workers", [1, 2])
def test_columns_of_a_built_store(tmp_path: Path, workers: int) -> None:
    store = _store(tmp_path / "store")
    out = tmp_path / "out"
    run_export([store], out, ExportOptions(), RunOptions(workers=workers))
    got = {
        t["n_steps"]: {k: t[k] for k in ("n_user_turns", "n_tool_calls", "n_failed_tool_calls",
                                          "recovered", "duration_sec")}
        for t in _rows(out, "trajectories")
    }  # fmt: skip
    # entries are one second apart, in file order: 1-14 on the long path (the developer
    # message first); 1-5, then 15-20 (the branch was written last) on the short one
    assert sorted(got.values(), key=lambda q: q["n_tool_calls"]) == [
        {"n_user_turns": 2, "n_tool_calls": 2, "n_failed_tool_calls": 1, "recovered": False,
         "duration_sec": 19.0},
        {"n_user_turns": 1, "n_tool_calls": 3, "n_failed_tool_calls": 2, "recovered": True,
         "duration_sec": 13.0},
    ]  # fmt: skip
    (sft,) = _rows(out, "sft")  # the latest branch, preferred
    assert (sft["n_tool_calls"], sft["n_failed_tool_calls"], sft["duration_sec"]) == (2, 1, 19.0)


def test_where_filters_on_the_quality_columns(tmp_path: Path) -> None:
    store = _store(tmp_path / "store")
    out = tmp_path / "out"
    where = "n_failed_tool_calls > 0 and not recovered"
    run_export([store], out, ExportOptions(where=where), RunOptions(workers=1))
    assert [t["n_tool_calls"] for t in _rows(out, "trajectories")] == [2]


@pytest.mark.parametrize(
    ("fixture", "file", "ok", "failed"),
    [
        ("einox/synthetic/data", "users/alice/sessions/s1a2b3c4d/session.json",
         '"call_id": "call_ls1",\n        "ok": true', '"call_id": "call_ls1",\n        "ok": false'),
        ("suga/synthetic-export", "entries.jsonl", '"ok":true', '"ok":false'),
    ],
)  # fmt: skip
def test_a_result_with_ok_false_is_a_failed_call(
    tmp_path: Path, fixture: str, file: str, ok: str, failed: str
) -> None:
    """einox and suga mark a failed tool result ``ok: false``: the same store with one result
    turned so has one failed call on the paths through it, and none before."""
    import shutil

    counts = []
    for text in (ok, failed):
        store = tmp_path / text[-5:].strip() / "store"
        shutil.copytree(UPSTREAM / fixture, store)
        source = (store / file).read_text(encoding="utf-8")
        assert source.count(ok) == 1
        (store / file).write_text(source.replace(ok, text), encoding="utf-8")
        out = store.parent / "out"
        run_export([store], out, ExportOptions(), RunOptions(workers=1))
        counts.append(max(t["n_failed_tool_calls"] for t in _rows(out, "trajectories")))
    assert counts == [0, 1]
