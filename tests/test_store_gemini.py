"""The Gemini CLI reader against real chats and the synthetic cases (specs/gemini-cli.md).

Each case's expectations are the rows of ``tests/data/upstream/gemini-cli/SOURCE.md``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from typer.testing import CliRunner

from trajset.pipeline import ExportOptions, RunOptions, read_store, run_export
from trajset.pipeline.cli import app
from trajset.pipeline.stores import detect_kind, discover, load_unit
from trajset.schemas.session import Session

from .conftest import UPSTREAM
from .exports import answers, export, only_session, table
from .round_trip import assert_round_trip
from .test_export_conformance import harbor_trajectory

GEMINI = UPSTREAM / "gemini-cli"
REAL = GEMINI / "real" / "gemini-home"
HOME = GEMINI / "synthetic" / "gemini-home"
PROJECT = HOME / "tmp" / "recipe-box"
CHATS = PROJECT / "chats"


def _chat(stem: str) -> Path:
    return next(
        p for p in CHATS.rglob("*") if p.is_file() and stem in p.name and p.suffix == ".jsonl"
    )


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return export(HOME, tmp_path_factory.mktemp("gemini") / "out")


def _of(rows: list[dict[str, Any]], prefix: str) -> list[dict[str, Any]]:
    return [r for r in rows if r["session_id"].startswith(prefix)]


# --------------------------------------------------------------------------- where chats are


def test_detection_of_a_home_tmp_a_project_chats_and_one_chat(tmp_path: Path) -> None:
    for path in (HOME, HOME / "tmp", PROJECT, CHATS, _chat("3f9a1c72"), REAL):
        assert detect_kind(path) == "gemini-cli", path
    [unit] = discover([HOME])
    assert len(unit.files) == 9 and unit.name == str(PROJECT)
    home = tmp_path / ".gemini"
    shutil.copytree(HOME, home)
    (PROJECT / "logs.json").exists() or (home / "tmp" / "recipe-box" / "logs.json").write_text("[]")
    (home / "tmp" / "recipe-box" / "checkpoint-x.json").write_text('{"history": []}')
    (home / "tmp" / "recipe-box" / "chats" / "session-x.jsonl.tmp-42").write_text("{}")
    [unit] = discover([home])
    assert len(unit.files) == 9  # logs, checkpoints and temporary files are no chats
    run = run_export([home], tmp_path / "out", ExportOptions(), RunOptions(workers=1))
    assert not run.errors and run.counts["sessions_read"] == 8


def test_the_synthetic_project_totals(synthetic: Path) -> None:
    rows = table(synthetic, "trajectories")
    assert len(rows) == 9 and len({r["session_id"] for r in rows}) == 8
    assert len(table(synthetic, "preferences")) == 2
    assert not pl.read_parquet(synthetic / "errors.parquet").height
    harbor = harbor_trajectory()
    for doc in (synthetic / "atif").glob("*.json"):
        harbor.model_validate_json(doc.read_text())


# --------------------------------------------------------------------------- real chats


@pytest.mark.parametrize(
    ("sid", "last", "responses"),
    [
        ("0b23371a", "My apologies, `resetTimer` was already correct.", 14),
        ("8a20078e", "已經幫你整理好囉！", 3),
        ("0ab84937", "我已經完成了 `GEMINI.md` 的撰寫", 6),
    ],
)
def test_real_chats(sid: str, last: str, responses: int, tmp_path: Path) -> None:
    out = export(REAL, tmp_path / "out")
    [row] = _of(table(out, "trajectories"), sid)
    assert answers(row)[-1].startswith(last)
    [session] = [s for s in read_store(REAL) if s.id.startswith(sid)]
    assert not session.forks() and session.counts["gemini/responses"] == responses
    steps = [s for s in table(out, "steps") if s["session_id"].startswith(sid)]
    called = [c["tool_call_id"] for s in steps for c in s["tool_calls"]]
    assert called and len(called) == len(set(called))
    for doc in (out / "atif").glob("*.json"):
        harbor_trajectory().model_validate_json(doc.read_text())


def test_usage_is_counted_once_per_gemini_id(tmp_path: Path) -> None:
    path = next(REAL.rglob("*.jsonl"))
    tokens: dict[str, dict[str, int]] = {}
    for line in path.read_text().splitlines()[1:]:
        rec = json.loads(line)
        if rec.get("type") == "gemini" and rec.get("tokens"):
            tokens[rec["id"]] = rec["tokens"]  # every copy repeats the same counts
    assert len(tokens) == 6
    [row] = _of(table(export(path, tmp_path / "out"), "trajectories"), "0ab84937")
    assert row["total_prompt_tokens"] == sum(t["input"] for t in tokens.values())
    assert row["total_cached_tokens"] == sum(t["cached"] for t in tokens.values())
    assert row["total_completion_tokens"] == sum(
        t["output"] + t["thoughts"] for t in tokens.values()
    )


def test_a_failed_call_and_unknown_usage_in_the_oldest_chat(tmp_path: Path) -> None:
    [session] = [s for s in read_store(REAL) if s.id.startswith("0b23371a")]
    failed = [e for e in session.entries if e.raw.get("trajset:failed")]
    assert len(failed) == 1 and failed[0].raw["gemini:status"] == "error"
    responses = [e for e in session.entries if e.type == "response"]
    assert "usage" not in responses[0].raw  # all-zero tokens: usage unknown
    assert session.counts["gemini/responses_with_unknown_usage"] == 1


def test_context_records_are_no_prompts() -> None:
    session = next(s for s in read_store(REAL) if s.id.startswith("0ab84937"))
    users = [e for e in session.entries if e.type == "item" and e.raw["item"].get("role") == "user"]
    typed = [e for e in users if e.raw.get("visible") is not False]
    assert len(typed) == 2 and typed[0].raw["gemini:displayContent"] == [{"text": "/init"}]
    hidden = [e.raw["item"]["content"][0]["text"] for e in users if e not in typed]
    assert hidden == ["System: Please continue."]
    assert [e.type for e in session.entries].count("gemini:info") == 2


# --------------------------------------------------------------------------- synthetic cases


def test_a_plain_session(synthetic: Path) -> None:
    [row] = _of(table(synthetic, "trajectories"), "3f9a1c72")
    assert answers(row)[-1].startswith("`POST /recipes` now validates its body")
    session = only_session(_chat("3f9a1c72"))
    assert (
        session.counts["gemini/responses"] == 6
        and session.name() == "Add zod validation to POST /recipes"
    )
    calls = [
        e.raw["item"]["call_id"]
        for e in session.entries
        if e.type == "item" and e.raw["item"]["type"] == "function_call"
    ]
    outputs = [
        e.raw["item"]["call_id"]
        for e in session.entries
        if e.type == "item" and e.raw["item"]["type"] == "function_call_output"
    ]
    assert len(calls) == len(set(calls)) == 5 and sorted(outputs) == sorted(calls)
    kept = [e for e in session.entries if e.type == "gemini:tool_response_record"]
    assert len(kept) == 4  # each batch's response record, its outputs already given


@pytest.mark.parametrize("prefer", ["latest", "current"])
def test_a_rewind_is_a_fork_with_prompt_pairs(prefer: str, tmp_path: Path) -> None:
    path = _chat("8d2e4b10")
    session = only_session(path)
    [fork] = session.forks()
    assert fork.startswith("3767e9c9") and fork.endswith(":response")  # under the first answer
    out = export(path, tmp_path / "out", prefer=(prefer,))
    rows = table(out, "trajectories")
    assert len(rows) == 2
    [kept] = [r for r in rows if r["is_preferred"]]
    [left] = [r for r in rows if not r["is_preferred"]]
    assert answers(kept)[-1].startswith("The API schema now uses `portions`")
    assert answers(left)[-1].startswith("`servings` appears 14 times in 6 files")
    pairs = table(out, "preferences")
    assert len(pairs) == 2 and {p["kind"] for p in pairs} == {"prompt"}
    assert {p["granularity"] for p in pairs} == {"turn", "trajectory"}
    [turn] = [p for p in pairs if p["granularity"] == "turn"]
    assert turn["chosen"][0]["content"].startswith(
        "Rename `servings` to `portions` in the API layer"
    )
    assert turn["rejected"][0]["content"] == "Rename the `servings` field to `yield` everywhere."


def test_same_id_updates_keep_the_first_result_and_count_usage_once() -> None:
    session = only_session(_chat("c51e7a09"))
    [out] = [
        e
        for e in session.entries
        if e.type == "item" and e.raw["item"]["type"] == "function_call_output"
    ]
    assert (
        "<tool_output_masked>" not in out.raw["item"]["output"] and "%" in out.raw["item"]["output"]
    )
    assert "<tool_output_masked>" in json.dumps(out.raw["gemini:rewrites"])
    assert session.counts["gemini/responses"] == 3
    ids = [e.id for e in session.entries]
    assert len(ids) == len(set(ids))


def test_a_compression_keeps_the_history_as_copied_context(synthetic: Path) -> None:
    session = only_session(_chat("6b0d3f92"))
    [k] = [e for e in session.entries if e.type == "compaction"]
    assert (
        k.raw["first_kept"] == "config"
        and "<state_snapshot>" in k.raw["summary"]["content"][0]["text"]
    )
    assert k.parent is not None and k.parent.startswith("ea183b53")  # the last answer before it
    assert session.counts["gemini/messages_copied"] == 5
    [row] = _of(table(synthetic, "trajectories"), "6b0d3f92")
    assert answers(row)[-1].startswith("Use a placeholder:")
    steps = [s for s in table(synthetic, "steps") if s["session_id"].startswith("6b0d3f92")]
    called = [c["tool_call_id"] for s in steps for c in s["tool_calls"]]
    assert called.count("grep_search__0l9fl7yf") == 1
    assert any(s["is_copied_context"] for s in steps) and not steps[-1]["is_copied_context"]


def test_a_subagent_is_its_own_session_linked_from_the_call(synthetic: Path) -> None:
    sessions = {s.id[:8]: s for s in read_store(PROJECT)}
    parent, child = sessions["91e4c7b3"], sessions["2a7d5e18"]
    [link] = [e for e in parent.entries if e.type == "link"]
    assert (
        link.raw["session"] == child.id and link.raw["call_id"] == "codebase_investigator__z5itfu5s"
    )
    assert child.header_raw["parent_session"] == parent.id
    assert child.header_raw["spawned_by"] == "codebase_investigator__z5itfu5s"
    [row] = _of(table(synthetic, "trajectories"), "2a7d5e18")
    assert answers(row)[-1].startswith("`src/routes/search.ts` interpolates")
    doc = json.loads((synthetic / "atif" / f"{parent.id}.json").read_text())
    refs = [
        r
        for s in doc["steps"]
        for r in (s.get("observation") or {}).get("results", [])
        if r.get("subagent_trajectory_ref")
    ]
    assert refs and refs[0]["source_call_id"] == "codebase_investigator__z5itfu5s"


def test_a_legacy_chat_and_its_migrated_twin_are_one_session(
    tmp_path: Path, synthetic: Path
) -> None:
    [row] = _of(table(synthetic, "trajectories"), "5b1c9e27")
    assert answers(row)[-1].startswith("Add `res.links(")
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copy(CHATS / "session-2026-03-12T08-15-5b1c9e27.json", alone)
    [row] = table(export(alone, tmp_path / "out"), "trajectories")
    assert answers(row)[-1].startswith(
        "`GET /recipes` now returns `{ data, total, page, pageSize }`"
    )


def test_a_failed_request_rolled_back_is_no_fork(synthetic: Path) -> None:
    session = only_session(_chat("f07a2c95"))
    assert not session.forks()
    [rolled] = [e for e in session.entries if e.type == "gemini:rolled_back"]
    assert (
        rolled.raw["record"]["content"][0]["text"]
        == "Summarise the last three releases in CHANGELOG.md."
    )
    [outcome] = [e for e in session.entries if e.type == "outcome"]
    assert outcome.raw["pass"] is False and outcome.raw["label"] == "gemini:error"
    [row] = _of(table(synthetic, "trajectories"), "f07a2c95")
    assert answers(row)[-1].startswith("1.4.0 added the search endpoint")
    assert row["n_user_turns"] == 1


# --------------------------------------------------------------------------- damage and round trip


@pytest.mark.parametrize("fraction", [0.05, 0.3, 0.5, 0.71, 0.9, 0.999])
def test_a_cut_chat_exports_its_complete_prefix_and_reports_the_tail(
    fraction: float, tmp_path: Path
) -> None:
    source = _chat("8d2e4b10")
    data = source.read_bytes()
    store = tmp_path / "chats"
    store.mkdir()
    cut = data[: int(len(data) * fraction)]
    (store / source.name).write_bytes(cut)
    run = run_export([store], tmp_path / "out", ExportOptions(), RunOptions(workers=1))
    if cut.endswith(b"\n"):
        assert not run.errors
    else:
        [error] = [e for e in run.errors if e.kind == "truncated"]  # (a chat cut to its
        assert error.line == cut.count(b"\n") + 1  # metadata line has no step: one more row)
    if cut.count(b"\n"):
        whole = {e.id for e in only_session(_chat("8d2e4b10")).entries}
        assert {e.id for e in only_session(store).entries if e.type != "label"} <= whole | {
            f"{i}:leaf" for i in whole
        }


def test_a_cut_legacy_chat_is_an_error_row(tmp_path: Path) -> None:
    store = tmp_path / "chats"
    store.mkdir()
    legacy = CHATS / "session-2026-03-12T08-15-5b1c9e27.json"
    (store / legacy.name).write_bytes(legacy.read_bytes()[:2000])
    run = run_export([store], tmp_path / "out", ExportOptions(), RunOptions(workers=1))
    [error] = run.errors
    assert error.source.endswith(legacy.name) and "does not parse" in error.message


def test_rewinds_and_checkpoints_of_unknown_shape_never_fail(tmp_path: Path) -> None:
    store = tmp_path / "chats"
    store.mkdir()
    lines = _chat("8d2e4b10").read_text().splitlines()
    odd = [json.dumps({"$rewindTo": "no-such-id"}), json.dumps({"$set": {"messages": [{"id": "x", "type": "user", "content": "hi"}, 3]}}),
           json.dumps({"what": "is this"}), json.dumps([1, 2])]  # fmt: skip
    (store / "session-2026-06-03T09-40-8d2e4b10.jsonl").write_text(
        "\n".join([*lines[:12], *odd, *lines[12:]]) + "\n"
    )
    session = only_session(store)
    assert (
        session.counts["gemini/records_unknown"] == 1
        and session.counts["gemini/rewinds_to_an_unknown_id"] >= 1
    )
    run = run_export([store], tmp_path / "out", ExportOptions(), RunOptions(workers=1))
    # the line that holds no object is a row of its own (it was dropped without one)
    assert [(e.kind, e.line) for e in run.errors] == [("bad_line", 16)]
    assert run.counts["trajectories"] >= 2


def test_convert_then_export_equals_exporting_the_store(tmp_path: Path, synthetic: Path) -> None:
    assert assert_round_trip(HOME, synthetic, tmp_path) == 9


def test_inspect_shows_rewinds_checkpoints_and_usage() -> None:
    shown = CliRunner().invoke(app, ["inspect", str(_chat("8d2e4b10"))]).output
    for line in (
        "gemini/rewinds",
        "gemini/checkpoints/normalisation",
        "gemini/usage/input_tokens",
        "fork ",
    ):
        assert line in shown, line


def test_every_unit_loads_without_an_error() -> None:
    for store in (HOME, REAL):
        for unit in discover([store]):
            assert all(isinstance(s, Session) for s in load_unit(unit)), store


def test_the_default_location_honours_gemini_cli_home() -> None:
    from trajset.pipeline.stores import reader_for

    [where] = reader_for("gemini-cli").locations
    assert where.resolve({"HOME": "/h"}) == Path("/h/.gemini")
    assert where.resolve({"HOME": "/h", "GEMINI_CLI_HOME": "/g"}) == Path("/g/.gemini")


def test_a_json_chat_is_gemini_s_even_when_a_line_reads_as_qwen_code_s(tmp_path: Path) -> None:
    """Qwen Code keeps its sessions as JSON Lines only, and its reader takes no ``.json``
    file: a ``.json`` chat is the Gemini reader's (read, or an error row), never left to a
    reader that will not take it."""
    chats = tmp_path / ".gemini" / "tmp" / ("a" * 64) / "chats"
    chats.mkdir(parents=True)
    qwen_like = {"uuid": "u1", "sessionId": "s1", "type": "user",
                 "message": {"role": "user", "parts": [{"text": "hi"}]}}  # fmt: skip
    (chats / "session-2026-01-01T00-00-aaaaaaaa.json").write_text(json.dumps(qwen_like) + "\n")
    units = discover([tmp_path / ".gemini"], "gemini-cli")
    assert [Path(f).name for u in units for f in u.files] == [
        "session-2026-01-01T00-00-aaaaaaaa.json"
    ]
