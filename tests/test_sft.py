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


def _conversation(session_id: str, turns: int) -> str:
    from .builder import SessionBuilder

    b = SessionBuilder(session_id, hashes=False)
    for i in range(turns):
        b.user(f"step {i}: what comes after {i}?")
        b.respond(text=f"{i + 1} comes after {i}.", usage=(5, 3, 0))
    return b.text()


def _dedup_store(root: Path) -> Path:
    """One conversation, the same copied under another id, and a copy continued two turns."""
    root.mkdir()
    (root / "a.jsonl").write_text(_conversation("0199a1b2-0000-7000-8000-0000000000a1", 3))
    (root / "b.jsonl").write_text(_conversation("0199a1b2-0000-7000-8000-0000000000b2", 3))
    (root / "c.jsonl").write_text(_conversation("0199a1b2-0000-7000-8000-0000000000c3", 5))
    (root / "d.jsonl").write_text(_conversation("0199a1b2-0000-7000-8000-0000000000d4", 2))
    return root


@pytest.mark.parametrize("workers", [1, 2])
def test_a_copied_history_appears_once_in_sft(tmp_path: Path, workers: int) -> None:
    """a and b are the same conversation, c continues it, d is its first two turns: only c's
    row remains, and every answer of the four is trainable in it exactly once."""
    store = _dedup_store(tmp_path / "store")
    out = tmp_path / "out"
    run = run_export([store], out, ExportOptions(), RunOptions(workers=workers))
    rows = _rows(out, "sft")
    assert [r["session_id"][-2:] for r in rows] == ["c3"]
    answers = Counter(
        m["content"] for m in rows[0]["messages"] if m["role"] == "assistant" and m["trainable"]
    )
    assert answers == Counter(f"{i + 1} comes after {i}." for i in range(5))
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["dedup"]["dropped"] == 3 == run.counts["sft_rows_dropped_duplicate"]
    held = {
        (d["session_id"][-2:], d["duplicate_of"]["session_id"][-2:])
        for d in manifest["dedup"]["rows"]
    }
    assert held == {("a1", "c3"), ("b2", "c3"), ("d4", "c3")}
    assert len(_rows(out, "trajectories")) == 4  # every path stays for analysis
    kept = run_export([store], tmp_path / "off", ExportOptions(dedup="off"), RunOptions(workers=1))
    assert (
        len(_rows(tmp_path / "off", "sft")) == 4 and kept.counts["sft_rows_dropped_duplicate"] == 0
    )


def test_an_unknown_dedup_mode_is_a_usage_error(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from trajset.pipeline.cli import app

    result = CliRunner().invoke(app, ["export", "--out", str(tmp_path / "o"), "--dedup", "fuzzy"])
    assert result.exit_code == 2 and "valid: exact, near, off" in result.output


def test_near_duplicates_differing_in_one_word_are_held_once(tmp_path: Path) -> None:
    from .builder import SessionBuilder

    text = (
        "Open the parser module, find the function that splits a header line into its fields, "
        "and make it accept a trailing comma after the last field without raising an error; "
        "then add a test that feeds it three such lines and checks every field it returns."
    )
    store = tmp_path / "store"
    store.mkdir()
    for sid, word in (("0199a1b2-0000-7000-8000-0000000000e1", "three"),
                      ("0199a1b2-0000-7000-8000-0000000000e2", "four")):  # fmt: skip
        b = SessionBuilder(sid, hashes=False)
        b.user(text.replace("three", word))
        b.respond(text="Done: the parser accepts the comma and the test passes.", usage=(5, 3, 0))
        (store / f"{sid[-2:]}.jsonl").write_text(b.text())
    exact = tmp_path / "exact"
    run_export([store], exact, ExportOptions(), RunOptions(workers=1))
    assert len(_rows(exact, "sft")) == 2  # not equal: exact keeps both
    near = tmp_path / "near"
    run_export([store], near, ExportOptions(dedup="near"), RunOptions(workers=2))
    assert [r["session_id"][-2:] for r in _rows(near, "sft")] == ["e1"]
    rows = json.loads((near / "manifest.json").read_text())["dedup"]["rows"]
    assert [(r["session_id"][-2:], r["duplicate_of"]["session_id"][-2:]) for r in rows] == [
        ("e2", "e1")
    ]
    strict = tmp_path / "strict"
    run_export(
        [store], strict, ExportOptions(dedup="near", dedup_threshold=0.99), RunOptions(workers=1)
    )
    assert len(_rows(strict, "sft")) == 2  # one word in 50 is below 0.99


def test_near_without_rensa_says_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    from trajset.pipeline.errors import UsageError

    monkeypatch.setitem(sys.modules, "rensa", None)  # an import of it fails, as if not installed
    with pytest.raises(UsageError, match=r"pip install 'trajset\[near\]'"):
        run_export([sample_store()], tmp_path / "o", ExportOptions(dedup="near"), RunOptions())
    assert not (tmp_path / "o").exists()


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
