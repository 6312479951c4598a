"""The Cursor reader against its fixtures (specs/cursor.md).  Each case's expectations are the
rows of ``tests/data/upstream/cursor/SOURCE.md``; no real Cursor store is public, so the last
test lists what a real one could hold that these do not, and what the reader then does."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from typer.testing import CliRunner

from trajset.pipeline import ExportOptions, RunOptions, read_store, run_export
from trajset.pipeline.cli import app
from trajset.pipeline.stores import detect_kind, discover, reader_for
from trajset.schemas.session import Session

from .conftest import UPSTREAM
from .exports import answers, export, table
from .round_trip import assert_round_trip

CURSOR = UPSTREAM / "cursor"
HOME = CURSOR / "synthetic" / "home"
TRANSCRIPTS = HOME / ".cursor" / "projects" / "home-dev-code-inkwell" / "agent-transcripts"
IDE = HOME / ".config" / "Cursor" / "User" / "globalStorage" / "state.vscdb"
THIRD = CURSOR / "third-party"
JAZZY = THIRD / "agent-sessions" / "AgentSessionsTests" / "Fixtures" / "Cursor"
LINEAR, REWIND, SUMMARY = (
    "3d9a6f0e-5b1c-4e27-9f84-2c7a1e6b0d53",
    "8e41c7b2-0a9d-4f6e-b3c5-71d2e9a4f608",
    "c5f2a8d1-6e3b-4a90-8d17-2b4e6f9c0a35",
)
PARENT, CHILD, LIMIT, LEGACY = (
    "6b1f0c2e-9d47-4a85-b3e2-1f8c7a0d5e94",
    "a02d7e5f-3c81-4b69-8e14-5d9b2f6c0a73",
    "f47b0a93-2e6c-4d18-a5f9-8c3d1e7b0246",
    "1c9e5b72-8f03-4d6a-b421-7e0a3c9d5f18",
)
IDE3, IDE2025, IDE_V2, BEST, DRAFT = (
    "0f6c2d84-3b7a-4e15-a9d2-5c8e1f0b7a46",
    "7a93e1c5-0b2d-4f68-9c47-e3a1d5b8f026",
    "2e5a9c71-8d04-4b36-a1f7-9c3e0b6d2a58",
    "9c1b4e07-3f8a-4d25-b6e9-0a7d2c5f8e13",
    "5b3f8d21-7c6e-4a90-b2d4-1e8f0a9c3b67",
)


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return export(HOME, tmp_path_factory.mktemp("cursor") / "out")


@pytest.fixture(scope="module")
def sessions() -> dict[str, Session]:
    return {s.id: s for s in read_store(HOME)}


def _rows(out: Path, name: str, sid: str) -> list[dict[str, Any]]:
    return [r for r in table(out, name) if r["session_id"] == sid]


# --------------------------------------------------------------------------- where conversations are


def test_detection_and_one_unit_per_conversation() -> None:
    for path in (HOME, HOME / ".cursor", HOME / ".cursor" / "chats", TRANSCRIPTS, IDE,
                 TRANSCRIPTS / f"{LEGACY}.txt"):  # fmt: skip
        assert detect_kind(path) == "cursor", path
    units = discover([HOME])
    assert len(units) == 10  # a CLI store's transcript and a subagent are no units of their own
    [linear] = [u for u in units if LINEAR in u.files[0]]
    assert Path(linear.files[0]).name == "store.db" and linear.files[1].endswith(f"{LINEAR}.jsonl")


def test_the_synthetic_home_totals(out: Path) -> None:
    """11 sessions (the Best-of-N pair in one tree), 13 trajectories, 4 pairs, one error row
    (the torn last line); the empty draft is no session."""
    rows = table(out, "trajectories")
    assert len(rows) == 13 and len({r["session_id"] for r in rows}) == 11
    assert len(table(out, "preferences")) == 4
    errors = pl.read_parquet(out / "errors.parquet")
    assert errors["kind"].to_list() == ["truncated"] and LIMIT in errors["source"][0]
    assert DRAFT not in {r["session_id"] for r in rows}
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["row_checks"] == dict.fromkeys(manifest["row_checks"], 0)


# --------------------------------------------------------------------------- the CLI's store.db


def test_a_linear_cli_session_with_mid_turn_roots(out: Path, sessions: dict[str, Session]) -> None:
    [row] = _rows(out, "trajectories", LINEAR)
    assert answers(row)[-1].startswith("Fixed: `collectHeadings()` now joins")
    assert row["n_user_turns"] == 1 and row["model_name"] == "claude-4.5-sonnet-thinking"
    s = sessions[LINEAR]
    assert s.counts["responses"] == 5 and not s.forks() and s.counts["duplicate_sources"] == 1
    calls = {c["id"] for m in row["messages"] for c in m["tool_calls"] or []}
    assert len(calls) == 5 and calls == {
        m["tool_call_id"] for m in row["messages"] if m["role"] == "tool"
    }


def test_a_rewound_root_is_an_abandoned_branch_and_its_pairs(out: Path) -> None:
    rows = _rows(out, "trajectories", REWIND)
    [kept] = [r for r in rows if r["is_preferred"]]
    [left] = [r for r in rows if not r["is_preferred"]]
    assert answers(kept)[-1].startswith("Documented `--paper <a4|letter>` under Options")
    assert answers(left)[-1].startswith("`--paper` now defaults to `letter`")
    pairs = _rows(out, "preferences", REWIND)
    assert len(pairs) == 2 and {p["kind"] for p in pairs} == {"prompt"}


def test_a_summarised_root_is_a_compaction(out: Path, sessions: dict[str, Session]) -> None:
    [row] = _rows(out, "trajectories", SUMMARY)
    assert answers(row)[-1].startswith("Added `--jobs <n>`")
    [k] = [e for e in sessions[SUMMARY].entries if e.type == "compaction"]
    assert "<conversation_summary>" in k.raw["summary"]["content"][0]["text"]
    assert not _rows(out, "preferences", SUMMARY)


# --------------------------------------------------------------------------- transcripts


def test_a_transcript_with_a_subagent_withheld_thinking_and_an_abort(
    out: Path, sessions: dict[str, Session]
) -> None:
    [row] = _rows(out, "trajectories", PARENT)
    said = [m for m in row["messages"] if m["role"] == "assistant"]
    assert len(said) == 4 and all(
        m["content"] or m["tool_calls"] or m["reasoning_content"] is not None for m in said
    )
    assert all("[REDACTED]" not in (m["content"] or "") for m in said)
    assert sessions[PARENT].counts["responses"] == 4  # the [REDACTED] line is no call of its own
    assert [
        e.raw["item"]["type"] for e in sessions[PARENT].entries if e.raw.get("cursor:redacted")
    ] == [
        "reasoning"  # the withheld thinking, as the next call's (empty) reasoning
    ]
    [link] = [e for e in sessions[PARENT].entries if e.type == "link"]
    assert link.raw["session"] == CHILD and link.raw["call_id"].endswith(":3:0")
    assert sessions[CHILD].header_raw["parent_session"] == PARENT
    [o] = _rows(out, "outcomes", PARENT)
    assert o["pass"] is False
    [sft] = _rows(out, "sft", PARENT)
    trained = [m["content"] for m in sft["messages"] if m.get("trainable")]
    assert "Adding the fallback; running the header tests next." not in trained


def test_a_call_without_a_recorded_result_is_never_followed_by_a_trained_answer(out: Path) -> None:
    """Transcripts keep no tool results: a call gets an output that says so, and what the
    model said after it in its turn answered a result the file does not hold: context."""
    for sid in (PARENT, CHILD, LIMIT):
        for r in _rows(out, "sft", sid):
            called = False
            for m in r["messages"]:
                if m["role"] == "user":
                    called = False
                if m["role"] == "assistant":
                    assert not (called and m.get("trainable")), (sid, m["content"])
                    called = called or bool(m["tool_calls"])


def test_an_error_turn_and_a_torn_last_line(out: Path) -> None:
    [o] = _rows(out, "outcomes", LIMIT)
    assert o["pass"] is False and "usage limit" in o["details"]
    assert len(_rows(out, "trajectories", LIMIT)) == 1


def test_the_legacy_text_transcript(out: Path) -> None:
    [row] = _rows(out, "trajectories", LEGACY)
    assert answers(row)[-1].startswith("Renamed `--theme` to `--style`")
    outputs = [m for m in row["messages"] if m["role"] == "tool"]
    assert len(outputs) == 2 and outputs[0]["content"].startswith("src/cli.ts:18")


# --------------------------------------------------------------------------- the IDE database


def test_cursor_3_bubbles_grouped_into_model_calls(out: Path, sessions: dict[str, Session]) -> None:
    s = sessions[IDE3]
    responses = [e for e in s.entries if e.type == "response"]
    assert [e.id for e in responses] == ["th1:response", "x2:response", "x3:response"]
    assert (
        all("usage" not in e.raw for e in responses) and responses[0].raw["model"] == "composer-2"
    )
    [row] = _rows(out, "trajectories", IDE3)
    assert answers(row)[-1].startswith("Footnotes now count up across the whole document")


def test_2025_bubbles_with_usage_an_error_and_a_rejection(
    out: Path, sessions: dict[str, Session]
) -> None:
    s = sessions[IDE2025]
    usage = [e.raw["usage"] for e in s.entries if e.type == "response"]
    assert [(u["input_tokens"], u["output_tokens"]) for u in usage] == [
        (8412, 61),
        (8977, 74),
        (9310, 188),
        (9622, 35),
    ]
    [row] = _rows(out, "trajectories", IDE2025)
    assert (row["total_prompt_tokens"], row["total_completion_tokens"]) == (36321, 358)
    assert row["n_failed_tool_calls"] == 2  # the error and the rejected call
    [d] = [e for e in s.entries if e.type == "decision"]
    assert d.raw["verdict"] == "reject" and d.raw["by"] == "human"


def test_an_early_composer_with_inline_bubbles(out: Path) -> None:
    [row] = _rows(out, "trajectories", IDE_V2)
    calls = [c for m in row["messages"] for c in m["tool_calls"] or []]
    assert [c["function"]["name"] for c in calls] == ["read_file"]
    assert next(m for m in row["messages"] if m["role"] == "tool")["content"]


def test_best_of_n_is_one_tree_and_the_judges_winner_is_chosen(out: Path) -> None:
    rows = _rows(out, "trajectories", BEST)
    assert len(rows) == 2
    [kept] = [r for r in rows if r["is_preferred"]]
    assert answers(kept)[-1].startswith("Gave `.cover h1` a max width of 80%")
    pairs = _rows(out, "preferences", BEST)
    assert len(pairs) == 2 and all(p["chosen"][-1]["content"].startswith("Gave") for p in pairs)
    judged = {o["pass"] for o in _rows(out, "outcomes", BEST)}
    assert judged == {True, False}


# --------------------------------------------------------------------------- third-party samples


def test_the_third_party_samples() -> None:
    reader = reader_for("cursor")
    assert reader.load(reader.unit((str(JAZZY / "test-store.db"),))) == []  # its root is missing
    [s] = read_store(JAZZY / "test-session.jsonl")
    assert s.counts["responses"] == 4 and "[REDACTED]" not in json.dumps(
        [e.raw.get("item") for e in s.entries]
    )
    [smoke] = read_store(
        THIRD / "codeburn" / "tests" / "fixtures" / "cursor-agent" / "workspace-less"
    )
    texts = [e.raw["item"]["content"][0].get("text") for e in smoke.entries if e.type == "item"
             and e.raw["item"].get("role") == "assistant"]  # fmt: skip
    assert texts[-1] == "Smoke test passed."


# --------------------------------------------------------------------------- what the fixtures lack


def _store_with(tmp_path: Path, change: str) -> Path:
    home = shutil.copytree(HOME, tmp_path / "home")
    db = sqlite3.connect(home / IDE.relative_to(HOME))
    if change == "damaged_composer":
        db.execute(
            "UPDATE cursorDiskKV SET value = '{not json' WHERE key = ?", (f"composerData:{IDE3}",)
        )
    elif change == "unknown_bubble_member":
        row = db.execute(
            "SELECT key, value FROM cursorDiskKV WHERE key LIKE ?", (f"bubbleId:{IDE3}:x3",)
        ).fetchone()
        db.execute("UPDATE cursorDiskKV SET value = ? WHERE key = ?",
                   (json.dumps({**json.loads(row[1]), "codeBlocks": [{"x": 1}]}), row[0]))  # fmt: skip
    db.commit()
    db.close()
    if change == "transcript_tool_result":
        t = home / TRANSCRIPTS.relative_to(HOME) / LIMIT / f"{LIMIT}.jsonl"
        line = {
            "role": "assistant",
            "message": {"content": [{"type": "tool_result", "content": "ok"}]},
        }
        t.write_text(json.dumps(line) + "\n" + t.read_text())
    return home


@pytest.mark.parametrize(
    ("change", "what"),
    [
        ("damaged_composer", "an error row for that conversation; the others export"),
        ("unknown_bubble_member", "kept in the bubble's entry, nothing lost, no row"),
        ("transcript_tool_result", "a cursor:block entry, counted, never a message"),
    ],
)
def test_what_a_real_store_could_hold_that_the_fixtures_do_not(
    change: str, what: str, tmp_path: Path
) -> None:
    home = _store_with(tmp_path, change)
    run = run_export([home], tmp_path / "out", ExportOptions(), RunOptions(workers=1))
    sids = {r["session_id"] for r in table(tmp_path / "out", "trajectories")}
    if change == "damaged_composer":
        assert any(e.kind == "bad_composer" for e in run.errors) and IDE3 not in sids
        assert len(sids) == 10
    elif change == "transcript_tool_result":
        assert run.counts["reader/blocks_unknown/tool_result"] == 1
    else:
        assert len(sids) == 11 and [e.kind for e in run.errors] == ["truncated"]
        kept = json.dumps([e.raw for s in read_store(home) if s.id == IDE3 for e in s.entries])
        assert '"codeBlocks": [{"x": 1}]' in kept


# --------------------------------------------------------------------------- the commands


def test_convert_then_export_equals_exporting_the_store(tmp_path: Path, out: Path) -> None:
    assert assert_round_trip(HOME, out, tmp_path) == 13


def test_inspect_shows_the_fork_and_the_compaction() -> None:
    shown = CliRunner().invoke(app, ["inspect", str(HOME / ".cursor" / "chats")]).output
    assert "fork " in shown and "compaction " in shown and "roots" in shown
