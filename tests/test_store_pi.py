"""The Pi reader against real sessions and the synthetic branches and forks (specs/pi.md).

Each case's expectations are the rows of ``tests/data/upstream/pi/SOURCE.md``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from trajset.pipeline import ExportOptions, RunOptions, run_export
from trajset.pipeline.cli import app
from trajset.pipeline.stores import detect_kind, discover, load_unit, reader_for
from trajset.schemas.session import Session

from .conftest import UPSTREAM
from .exports import answers, export, only_session, table
from .round_trip import assert_round_trip
from .test_export_conformance import harbor_trajectory

PI = UPSTREAM / "pi"
SESSIONS = PI / "synthetic" / "sessions"
LEXER = SESSIONS / "--home-sam-work-lexer--"
A = LEXER / "2026-03-02T09-12-44-107Z_6a1d3c5e-8f20-4b7a-9c41-0e2d5f7a9b13.jsonl"
B = LEXER / "2026-03-02T10-02-11-563Z_d93e0b47-2a6c-4f15-b8e0-7c1a4d6f2e58.jsonl"
C = LEXER / "2026-01-03T18-20-09-318Z_1b7f5e92-c3d0-4a86-9f2b-5e8a0c3d7f61.jsonl"
TEICH = PI / "real" / "teich" / "example_pi_session.jsonl"
V1 = PI / "real" / "pi-mono" / "before-compaction.jsonl"
INSPECTOR = PI / "pi-session-inspector" / "branching.jsonl"


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def test_detection_and_the_default_location(tmp_path: Path) -> None:
    for path in (SESSIONS, LEXER, A, TEICH, V1, INSPECTOR):
        assert detect_kind(path) == "pi", path
    [unit] = discover([SESSIONS])
    assert len(unit.files) == 3
    [where] = reader_for("pi").locations
    assert where.resolve({"HOME": "/h"}) == Path("/h/.pi/agent/sessions")
    assert where.resolve({"HOME": "/h", "PI_CODING_AGENT_DIR": "/p"}) == Path("/p/sessions")


@pytest.mark.parametrize("store", [TEICH, V1], ids=["teich-v3", "pi-mono-v1"])
def test_real_sessions_have_no_fork_keep_every_call_and_validate(
    store: Path, tmp_path: Path
) -> None:
    session = only_session(store)
    assert not session.forks()
    out = export(store, tmp_path / "out")
    assert len(table(out, "trajectories")) == 1 and not table(out, "preferences")
    called = {c["tool_call_id"] for s in table(out, "steps") for c in s["tool_calls"]}
    # the document holds the last context window (after v1's second compaction); the sft rows
    # hold every window
    called |= {
        c["id"] for r in table(out, "sft") for m in r["messages"] for c in m["tool_calls"] or []
    }

    def calls(resent: bool) -> set[str]:
        return {
            b["id"] for e in _lines(store) if e.get("type") == "message"
            and (e["message"].get("stopReason") not in ("error", "aborted")) is resent
            for b in e["message"].get("content") or [] if isinstance(b, dict) and b.get("type") == "toolCall"
        }  # fmt: skip

    assert calls(resent=True) and calls(resent=True) <= called
    trained = {
        c["id"] for r in table(out, "sft") for m in r["messages"] for c in m["tool_calls"] or []
    }
    assert not calls(resent=False) & trained  # Pi never sent an errored answer again
    for doc in (out / "atif").glob("*.json"):
        harbor_trajectory().model_validate_json(doc.read_text())


def test_usage_counts_cache_reads_and_writes_as_input() -> None:
    session = only_session(TEICH)
    want_in = want_cached = 0
    for e in _lines(TEICH):
        u = (e.get("message") or {}).get("usage") if e.get("type") == "message" else None
        if u and e["message"].get("role") == "assistant":
            want_in += u["input"] + u["cacheRead"] + u["cacheWrite"]
            want_cached += u["cacheRead"]
    got = [e.raw["usage"] for e in session.entries if e.type == "response" and "usage" in e.raw]
    assert sum(u["input_tokens"] for u in got) == want_in
    assert sum(u["input_tokens_details"]["cached_tokens"] for u in got) == want_cached
    aborted = [
        e
        for e in session.entries
        if e.type == "response" and e.raw.get("pi:stop_reason") == "aborted"
    ]
    assert len(aborted) == 2 and all(e.raw["status"] == "incomplete" for e in aborted)


def test_an_image_in_a_tool_result_is_kept() -> None:
    outputs = [
        e
        for e in only_session(TEICH).entries
        if e.type == "item" and e.raw["item"]["type"] == "function_call_output"
    ]
    images = [e for e in outputs if isinstance(e.raw["item"]["output"], list)]
    assert len(images) == 1
    assert [p["type"] for p in images[0].raw["item"]["output"]].count("input_image") == 1
    assert any(e.raw.get("trajset:failed") for e in outputs)  # isError bash results


def test_v1_compactions_keep_from_the_entries_the_migration_gives() -> None:
    session = only_session(V1)
    lines = _lines(V1)
    compactions = [e for e in session.entries if e.type == "compaction"]
    assert [e.raw["pi:firstKeptEntryIndex"] for e in compactions] == [293, 551]
    for k in compactions:
        kept = next(e for e in session.entries if e.id == k.raw["first_kept"])
        assert kept.raw["item"]["role"] == "user"  # the line the index names, the header at 0
        assert lines[k.raw["pi:firstKeptEntryIndex"]]["message"]["role"] == "user"
    errors = [e for e in session.entries if e.type == "response" and e.raw["status"] == "failed"]
    assert len(errors) == 1
    assert session.header_raw["parent_session"] == "d97339c6-6c10-4827-846b-9ff1d9c3dc37"


def test_a_regenerated_answer_is_a_response_fork(tmp_path: Path) -> None:
    session = only_session(INSPECTOR)
    assert session.forks() == ["e2"] and session.last_id() == "e8"
    out = export(INSPECTOR, tmp_path / "out")
    assert sorted(r["leaf_id"] for r in table(out, "trajectories")) == ["e6:response", "e8"]
    pairs = table(out, "preferences")
    assert len(pairs) == 2 and {p["kind"] for p in pairs} == {"response"}
    assert {p["chosen_leaf_id"] for p in pairs} == {"e8"}  # the unknown future_entry is kept
    [e8] = [e for e in session.entries if e.id == "e8"]
    assert e8.type == "pi:future_entry"


def test_a_branch_summary_and_a_fork_file_make_one_tree(tmp_path: Path) -> None:
    store = tmp_path / "lexer"
    store.mkdir()
    shutil.copy(A, store)
    shutil.copy(B, store)
    session = only_session(store)
    assert len(session.forks()) == 2 and len(session.roots()) == 1
    assert session.counts["pi/copied_entries"] == 14  # the shared path once
    ids = [e.id for e in session.entries]
    assert len(ids) == len(set(ids))
    [summary] = [e for e in session.entries if e.type == "branch_summary"]
    assert summary.raw["summary"]["content"][0]["text"].startswith(
        "The following is a summary of a branch"
    )
    out = export(store, tmp_path / "out")
    rows = table(out, "trajectories")
    assert len(rows) == 3 and len(table(out, "preferences")) == 4
    [kept] = [r for r in rows if r["is_preferred"]]
    assert answers(kept)[-1] == "Opened draft PR #42 from branch `test/skip-0x` (commit 51c0d7e)."
    labels = [e for e in session.entries if e.type == "label"]
    assert labels and all(e.raw["target"] in ids for e in labels)


def test_a_fork_without_its_source_stands_alone(tmp_path: Path) -> None:
    store = tmp_path / "lexer"
    store.mkdir()
    shutil.copy(B, store)
    session = only_session(store)
    assert session.counts["pi/relinked"] == 1  # the copied entry whose label Pi dropped
    [link] = [e for e in session.entries if e.type == "link"]
    assert (
        link.raw["rel"] == "fork_of"
        and link.raw["session"] == "6a1d3c5e-8f20-4b7a-9c41-0e2d5f7a9b13"
    )
    run = run_export([store], tmp_path / "out", ExportOptions(), RunOptions(workers=1))
    assert not run.errors and run.counts["trajectories"] == 1


def test_a_second_root_is_a_fork_under_the_shared_config(tmp_path: Path) -> None:
    session = only_session(C)
    assert session.forks() == ["config"] and len(session.children("config")) == 2
    hooks = [e for e in session.entries if e.raw.get("pi:custom_type") is not None]
    assert len(hooks) == 1 and hooks[0].raw["visible"] is False  # v2 hookMessage, display false
    out = export(C, tmp_path / "out")
    assert len(table(out, "trajectories")) == 2
    # an edited first prompt: nothing before the fork for a trainer's prompt (TRL's DPO and
    # KTO stop on an empty one), so no pair, counted
    assert not table(out, "preferences")
    counts = json.loads((out / "manifest.json").read_text())["counts"]
    assert counts["pairs_dropped_empty_prompt"] == 2


def test_the_synthetic_store(tmp_path: Path) -> None:
    out = export(SESSIONS, tmp_path / "out")
    assert len(table(out, "trajectories")) == 5 and len(table(out, "preferences")) == 4
    # the edited first prompt of file C: no prompt for its 2 pairs
    counts = json.loads((out / "manifest.json").read_text())["counts"]
    assert counts["pairs_dropped_empty_prompt"] == 2
    for doc in (out / "atif").glob("*.json"):
        harbor_trajectory().model_validate_json(doc.read_text())
    assert assert_round_trip(SESSIONS, out, tmp_path) == 5


@pytest.mark.parametrize("fraction", [0.05, 0.3, 0.5, 0.77, 0.999])
def test_a_cut_session_exports_its_complete_prefix_and_reports_the_tail(
    fraction: float, tmp_path: Path
) -> None:
    data = A.read_bytes()
    store = tmp_path / "p"
    store.mkdir()
    cut = data[: int(len(data) * fraction)]
    (store / A.name).write_bytes(cut)
    run = run_export([store], tmp_path / "out", ExportOptions(), RunOptions(workers=1))
    truncated = [e for e in run.errors if e.kind == "truncated"]
    assert cut.endswith(b"\n") or (truncated and truncated[0].line == cut.count(b"\n") + 1)
    whole = [e.id for e in only_session(A).entries]
    got = [e.id for e in only_session(store).entries]
    assert set(got) <= set(whole)


def test_a_bad_line_and_a_file_without_a_header_are_error_rows(tmp_path: Path) -> None:
    store = tmp_path / "p"
    store.mkdir()
    lines = A.read_text().splitlines()
    (store / A.name).write_text("\n".join([*lines[:5], "{not json", *lines[5:]]) + "\n")
    (store / "2026-03-02T11-00-00-000Z_00000000-0000-4000-8000-000000000000.jsonl").write_text(
        '{"type": "message"}\n'
    )
    run = run_export([store], tmp_path / "out", ExportOptions(), RunOptions(workers=1))
    kinds = sorted(e.kind for e in run.errors)
    assert kinds == ["bad_line", "format"] and run.counts["trajectories"] >= 2
    [bad] = [e for e in run.errors if e.kind == "bad_line"]
    assert (
        bad.line == 6
        and "(Expecting property name enclosed in double quotes, column 2)" in bad.message
    )


def test_inspect_and_convert() -> None:
    shown = CliRunner().invoke(app, ["inspect", str(SESSIONS)]).output
    assert "fork " in shown and "pi/branch_summaries" in shown


def test_every_unit_loads_without_an_error() -> None:
    for store in (
        SESSIONS,
        PI / "real" / "teich",
        PI / "real" / "pi-mono",
        PI / "pi-session-inspector",
    ):
        for unit in discover([store]):
            assert all(isinstance(s, Session) for s in load_unit(unit)), store


def test_merged_entries_are_ordered_by_time_not_by_file(tmp_path: Path) -> None:
    """A fork used before the source's last turn is the older branch: ``latest`` prefers the
    source's, though the fork's file was written after it."""
    store = tmp_path / "lexer"
    store.mkdir()
    shutil.copy(A, store)
    copied = {e["id"] for e in _lines(A)}
    lines = []
    for e in _lines(B):
        if e.get("type") != "session" and e["id"] not in copied:
            e["timestamp"] = e["timestamp"].replace(
                "T10:0", "T09:0"
            )  # 10:02 -> 09:02, before A's end
        lines.append(json.dumps(e))
    (store / B.name).write_text("\n".join(lines) + "\n")
    rows = table(export(store, tmp_path / "out"), "trajectories")
    [kept] = [r for r in rows if r["is_preferred"]]
    assert answers(kept)[-1] == "Committed as 9e2f1ab."


def test_a_label_decides_a_fork_under_prefer_label(tmp_path: Path) -> None:
    """A Pi label is a label entry: ``--prefer label:keep`` takes the branch it marks."""
    store = tmp_path / "lexer"
    store.mkdir()
    last = _lines(A)[-1]
    label = {"type": "label", "id": "aaaa0001", "parentId": last["id"],
             "timestamp": "2026-03-02T09:30:00.000Z", "targetId": "fc3a0611", "label": "keep"}  # fmt: skip
    (store / A.name).write_text(A.read_text() + json.dumps(label) + "\n")
    out = export(store, tmp_path / "out", prefer=("label:keep",))
    [kept] = [r for r in table(out, "trajectories") if r["is_preferred"]]
    assert answers(kept)[-1].startswith('`readNumber` now returns `ILLEGAL("0x")`')
