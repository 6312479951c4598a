"""The ``sft`` config: preferred paths only, one row per context window, every answer
trainable in exactly one row."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from trajset.pipeline import ExportOptions, RunOptions, run_export, sample_store

from .conftest import UPSTREAM

CC = UPSTREAM / "claude-code"


def _rows(out: Path, table: str) -> list[dict[str, Any]]:
    return pq.read_table(out / "data" / table).to_pylist()


@pytest.fixture(scope="module")
def claude(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sft") / "claude"
    run_export([CC], out, ExportOptions(redact=False), RunOptions(workers=1))
    return out


def _tool_uses(folder: Path) -> set[str]:
    ids = set()
    for f in folder.rglob("*.jsonl"):
        for line in f.read_text(encoding="utf-8").splitlines():
            r = json.loads(line) if line.strip() else {}
            if r.get("type") == "assistant":
                for b in (r.get("message") or {}).get("content") or []:
                    if isinstance(b, dict) and b.get("type") == "tool_use":
                        ids.add(b["id"])
    return ids


def test_every_tool_call_is_trainable_in_exactly_one_row(claude: Path) -> None:
    trainable: Counter[str] = Counter()
    for row in _rows(claude, "sft"):
        for m in row["messages"]:
            if m["role"] == "assistant" and m["trainable"]:
                trainable.update(c["id"] for c in m["tool_calls"] or [])
    source = _tool_uses(CC)
    assert source and {i: trainable[i] for i in source} == dict.fromkeys(source, 1)


def test_a_compacted_session_is_one_row_per_window(claude: Path) -> None:
    """The real compacted session: its history up to the compaction, then summary, kept tail
    and what followed; the answers of the first window are trainable there, copied after."""
    rows = [r for r in _rows(claude, "sft") if r["session_id"].startswith("624a4a58")]
    assert [r["window"] for r in rows] == [0, 1]
    whole = next(
        t for t in _rows(claude, "trajectories") if t["session_id"] == rows[0]["session_id"]
    )
    assert rows[1]["messages"] == whole["messages"]  # the last window is the trajectory
    first = [m for m in rows[0]["messages"] if m["role"] == "assistant"]
    assert first and all(m["trainable"] for m in first)
    assert len(rows[0]["messages"]) < len(whole["messages"])
    answered_before = [{**m, "trainable": False} for m in first]
    again = [m for m in rows[1]["messages"] if m["role"] == "assistant" and m["trainable"]]
    assert again and not [m for m in again if {**m, "trainable": False} in answered_before]


def test_only_preferred_paths_and_their_windows(tmp_path: Path) -> None:
    out = tmp_path / "sample"
    run_export([sample_store()], out, ExportOptions(), RunOptions(workers=1))
    paths = _rows(out, "trajectories")
    preferred = {(t["session_id"], t["leaf_id"]) for t in paths if t["is_preferred"]}
    rows = _rows(out, "sft")
    assert {(r["session_id"], r["leaf_id"]) for r in rows} == preferred
    windows = Counter((r["session_id"], r["leaf_id"]) for r in rows)
    assert max(windows.values()) == 2  # the sample's compacted session
    for r in rows:
        assert r["n_trainable"] == sum(m["trainable"] for m in r["messages"])
        assert r["tools_source"] in ("recorded", "inferred") and json.loads(r["tools"]) is not None


def test_where_keeps_the_windows_of_the_paths_it_keeps(tmp_path: Path) -> None:
    out = tmp_path / "filtered"
    run_export([sample_store()], out, ExportOptions(where="n_steps > 3"), RunOptions(workers=1))
    kept = {(t["session_id"], t["leaf_id"]) for t in _rows(out, "trajectories")}
    assert kept and {(r["session_id"], r["leaf_id"]) for r in _rows(out, "sft")} <= kept


def test_claude_code_rows_carry_inferred_tools_every_call_fits(claude: Path) -> None:
    """Claude Code records no tool definitions: each row's tools are inferred per agent and
    version from the store's calls, cover every name the row calls, and every call's
    arguments validate against its tool's schema."""
    import jsonschema

    checked = 0
    for table in ("sft", "trajectories"):
        for row in _rows(claude, table):
            tools = {
                t["function"]["name"]: t["function"]["parameters"] for t in json.loads(row["tools"])
            }
            calls = [c for m in row["messages"] for c in m["tool_calls"] or []]
            if not calls:
                continue
            assert row["tools_source"] == "inferred"
            for c in calls:
                jsonschema.validate(
                    json.loads(c["function"]["arguments"]), tools[c["function"]["name"]]
                )
                checked += 1
    assert checked > 180


def test_recorded_tools_are_kept(tmp_path: Path) -> None:
    out = tmp_path / "sample"
    run_export([sample_store()], out, ExportOptions(), RunOptions(workers=2))
    recorded = [r for r in _rows(out, "sft") if r["tools_source"] == "recorded"]
    assert recorded and all(json.loads(r["tools"]) for r in recorded)
    paths = {(t["session_id"], t["leaf_id"]): t for t in _rows(out, "trajectories")}
    for r in recorded:  # the session's own definitions, descriptions and all
        path = paths[(r["session_id"], r["leaf_id"])]
        assert path["tools_source"] == "recorded" and path["tools"] == r["tools"]
        assert all(t["function"]["description"] for t in json.loads(r["tools"]))


def test_calls_that_do_not_fit_the_recorded_tools_are_counted(tmp_path: Path) -> None:
    """A store's own definitions: a call of a tool it never defined and one whose argument
    has the wrong type are counted; a call that fits, an enum and all, is not."""
    from .builder import SessionBuilder

    b = SessionBuilder("0199a1b2-0000-7000-8000-0000000000c1", hashes=False)
    schema = {
        "type": "object",
        "properties": {"path": {"type": "string"}, "mode": {"enum": ["r", "w"]}},
        "required": ["path"],
    }
    b.config(tools_added=[{"type": "function", "name": "open", "parameters": schema}])
    b.user("open three files")
    b.respond(calls=[("c1", "open", {"path": "a", "mode": "r"}),
                     ("c2", "open", {"path": 3}),
                     ("c3", "delete", {"path": "a"})])  # fmt: skip
    for cid in ("c1", "c2", "c3"):
        b.tool_output(cid, "ok")
    b.respond(text="Done.")
    store = tmp_path / "store"
    store.mkdir()
    (store / "s.jsonl").write_text(b.text())
    out = tmp_path / "out"
    run_export([store], out, ExportOptions(), RunOptions(workers=1))
    counts = json.loads((out / "manifest.json").read_text())["counts"]
    assert {k: counts[k] for k in counts if k.startswith("tool_calls_")} == {
        "tool_calls_unknown_tool": 1,
        "tool_calls_outside_schema": 1,
        "tool_calls_schema_invalid": 0,
    }
    assert _rows(out, "sft")[0]["tools_source"] == "recorded"
