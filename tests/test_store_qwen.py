"""The Qwen Code reader against its fixtures (specs/qwen-code.md).

Each case's expectations are the rows of ``tests/data/upstream/qwen-code/SOURCE.md``; the
store is hand-built from the upstream writer (no real session with content is public), so
the model-call boundaries are checked against what that writer records: one ``assistant``
record per model response, one ``tool_result`` per call, telemetry that repeats usage.
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
from trajset.pipeline.stores import detect_kind, discover, load_unit, reader_for
from trajset.pipeline.stores.jsonl import objects
from trajset.pipeline.stores.qwen.files import is_qwen
from trajset.schemas.session import Session

from .conftest import UPSTREAM
from .exports import answers, export, table
from .round_trip import assert_round_trip

QWEN = UPSTREAM / "qwen-code"
HOME = QWEN / "synthetic" / "home" / ".qwen"
PROJECT = HOME / "projects" / "-home-dev-kilnlog"
CHATS = PROJECT / "chats"
THIRD = QWEN / "third-party-synthetic" / "jazzyalex-agent-sessions"
REAL = QWEN / "real" / "jazzyalex-agent-sessions" / "system_telemetry.jsonl"
REWINDS = "d85f5adb-1b52-40f5-a53c-24d7b71d0f89"
AGENTS = "ad891c26-0e70-47fc-9ce0-f02f4c99243c"
CUT = "e8f12f16-70d0-4593-9292-aae0e6bd987f"
ARCHIVED = "d67deb37-2349-4ed0-8694-f747aecaea0c"


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return export(HOME, tmp_path_factory.mktemp("qwen") / "out")


def _rows(out: Path, name: str, sid: str) -> list[dict[str, Any]]:
    return [r for r in table(out, name) if r["session_id"] == sid]


def _session(sid: str) -> Session:
    return next(s for s in read_store(HOME) if s.id == sid)


def _trainable(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [m for r in rows for m in r["messages"] if m.get("trainable")]


# --------------------------------------------------------------------------- where sessions are


def test_detection_of_a_home_its_projects_a_project_chats_and_one_file() -> None:
    for path in (HOME, HOME / "projects", PROJECT, CHATS, CHATS / f"{REWINDS}.jsonl", THIRD, REAL):
        assert detect_kind(path) == "qwen-code", path
    [unit] = discover([HOME])
    assert unit.name == str(PROJECT) and len(unit.files) == 6  # 4 chats, 1 archived, 1 agent
    assert [Path(f).name for f in discover([CHATS])[0].files][-1].startswith("d67deb37")


def test_a_qwen_file_missing_its_first_session_id_is_not_read_as_claude_code(
    tmp_path: Path,
) -> None:
    """Claude Code's detection claimed it too (found by the damaged-stores benchmark)."""
    lines = (CHATS / f"{REWINDS}.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    del first["sessionId"]
    (tmp_path / "s.jsonl").write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    assert detect_kind(tmp_path / "s.jsonl") == "qwen-code"


def test_a_first_record_with_none_of_qwen_s_base_fields_decides_at_its_line(
    tmp_path: Path,
) -> None:
    """Another agent's header (the Agent Session Format's, Codex's, Pi's) says the file is
    not Qwen's: detection read up to 64 lines of every such file, most of a store."""
    qwen = (CHATS / f"{REWINDS}.jsonl").read_text().splitlines()[0]
    header = json.dumps({"type": "session", "format": "agentsession/0.2", "id": "s1"})
    (tmp_path / "other.jsonl").write_text(f"{header}\n{qwen}\n")
    (tmp_path / "qwen.jsonl").write_text(f"{qwen}\n{header}\n")
    assert (is_qwen(tmp_path / "other.jsonl"), is_qwen(tmp_path / "qwen.jsonl")) == (False, True)


def test_the_default_location_honours_qwen_runtime_dir() -> None:
    [where] = reader_for("qwen-code").locations
    assert where.resolve({"HOME": "/h"}) == Path("/h/.qwen/projects")
    assert where.resolve({"HOME": "/h", "QWEN_RUNTIME_DIR": "/q"}) == Path("/q/projects")


def test_the_project_exports_clean(out: Path) -> None:
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["counts"]["sessions_exported"] == 5  # 4 chats (a branch joined) + 1 agent
    errors = pl.read_parquet(out / "errors.parquet")
    assert errors["kind"].to_list() == ["truncated"]  # the cut file's last line, only
    assert CliRunner().invoke(app, ["validate", str(out)]).exit_code == 0


# --------------------------------------------------------------------------- rewinds


def test_rewinds_are_forks_and_the_latest_branch_is_preferred(out: Path) -> None:
    rows = _rows(out, "trajectories", REWINDS)
    assert len(rows) == 3
    [kept] = [r for r in rows if r["is_preferred"]]
    assert answers(kept)[-1].startswith("Three: lines without an RFC 3339 timestamp")
    abandoned = sorted(answers(r)[-1][:40] for r in rows if not r["is_preferred"])
    assert abandoned == [
        "Done: a line without a timestamp now fai",
        "I would add a `Skipped []int` field to `",
    ]
    assert _session(REWINDS).counts["forks"] == 2


def test_a_rewind_to_the_first_prompt_is_a_root_level_fork(out: Path) -> None:
    """The ``rewind`` with ``parentUuid: null`` is a second root: both roots hang under the
    config root, so the session is one tree and the new first prompt is its preferred branch."""
    s = _session(REWINDS)
    config = [e for e in s.entries if e.parent is None]
    assert [e.type for e in config] == ["config"]
    under = [e for e in s.entries if e.parent == config[0].id]
    assert len(under) == 2 and under[1].type == "qwen:rewind"


def test_every_pair_of_the_rewinds_is_of_kind_prompt(out: Path) -> None:
    """Two pairs (turn and trajectory) at the rewind to turn 2; the root-level fork has no
    context before its prompts, and a pair without a prompt is dropped (counted)."""
    pairs = _rows(out, "preferences", REWINDS)
    assert len(pairs) == 2 and {p["kind"] for p in pairs} == {"prompt"}
    assert {p["granularity"] for p in pairs} == {"turn", "trajectory"}
    for p in pairs:
        assert p["chosen"][0]["content"].startswith("Keep parsing, but collect")
        assert p["rejected"][0]["content"].startswith("Make it return an error")
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["counts"]["pairs_dropped_empty_prompt"] == 2


def test_a_rewind_the_user_left_without_a_new_prompt_is_the_kept_branch(tmp_path: Path) -> None:
    """The file ends with the ``rewind``: what the user kept is the conversation before the
    rewound prompt; the abandoned turn is no pair (the other side has no answer)."""
    lines = (CHATS / f"{REWINDS}.jsonl").read_text().splitlines()[:11]
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / f"{REWINDS}.jsonl").write_text("\n".join(lines) + "\n")
    got = export(tmp_path / "s", tmp_path / "out")
    rows = table(got, "trajectories")
    assert len(rows) == 2
    [kept] = [r for r in rows if r["is_preferred"]]
    assert answers(kept) == [answers(kept)[0]] and answers(kept)[0].startswith("It skips them")
    assert not table(got, "preferences")


# --------------------------------------------------------------------------- model calls


def test_one_assistant_message_per_model_call_and_no_empty_one(out: Path) -> None:
    """7 trainable answers on the path, one per model call: the failed attempt (``parts: []``)
    is none of them, the compaction's copy of the kept tail is not trained again."""
    rows = _rows(out, "sft", AGENTS)
    assert [r["window"] for r in rows] == [0, 1]
    trained = _trainable(rows)
    assert len(trained) == 7
    assert all(m["content"] or m["tool_calls"] for m in trained)
    [traj] = _rows(out, "trajectories", AGENTS)
    assert answers(traj)[-1].startswith("Now 512 µs/op and 6 allocs/op")
    assert not _rows(out, "preferences", AGENTS)


def test_the_failed_attempt_keeps_its_usage_and_is_never_resent() -> None:
    s = _session(AGENTS)
    [failed] = [e for e in s.entries if e.type == "response" and e.raw.get("status") == "failed"]
    assert failed.id == "00016c37-b0b4-4f75-a8c6-fae8fe4d5b0a:response"
    assert failed.raw["trajset:not_resent"] == "failed_attempt"
    assert failed.raw["usage"]["input_tokens"] == 31000
    assert s.counts["responses"] == 7 and s.counts["failed_attempts"] == 1


def test_usage_is_counted_once_per_call_never_from_telemetry(out: Path) -> None:
    """Every assistant record's usage once (the failed attempt's too: the API spent it); the
    ``ui_telemetry api_response`` records repeat it and are not added."""
    records = [json.loads(x) for x in (CHATS / f"{AGENTS}.jsonl").read_text().splitlines()]
    calls = [r["usageMetadata"] for r in records if r["type"] == "assistant"]
    [traj] = _rows(out, "trajectories", AGENTS)
    assert traj["total_prompt_tokens"] == sum(u["promptTokenCount"] for u in calls) == 172600
    assert traj["total_completion_tokens"] == sum(u["candidatesTokenCount"] for u in calls)


def test_parallel_calls_share_one_message_and_their_results_follow(out: Path) -> None:
    [first] = [r for r in _rows(out, "sft", AGENTS) if r["window"] == 0]
    edits = [
        m
        for m in first["messages"]
        if [c["function"]["name"] for c in m["tool_calls"] or []] == ["edit", "edit"]
    ]
    assert [c["function"]["name"] for c in edits[0]["tool_calls"]] == ["edit", "edit"]
    assert all(
        isinstance(json.loads(c["function"]["arguments"]), dict) for c in edits[0]["tool_calls"]
    )
    at = first["messages"].index(edits[0])
    assert [m["role"] for m in first["messages"][at + 1 : at + 4]] == ["tool", "tool", "user"]


def test_the_compaction_keeps_the_tail_qwen_code_kept(out: Path) -> None:
    """The window after ``chat_compression`` is its summary, then the kept tail (the path's own
    records from "Do both fixes.", as copied context), then the new turn."""
    s = _session(AGENTS)
    [k] = [e for e in s.entries if e.type == "compaction"]
    assert k.raw["first_kept"] == "52ff3e22-db76-4035-9bcc-ec89348aed62"
    assert k.raw["qwen:compression"]["ack"]["parts"][0]["text"].startswith("Got it.")
    [after] = [r for r in _rows(out, "sft", AGENTS) if r["window"] == 1]
    roles = [(m["role"], bool(m.get("trainable"))) for m in after["messages"]]
    assert roles[0] == ("system", False) and after["messages"][1]["content"] == "Do both fixes."
    assert [t for _, t in roles].count(True) == 2


def test_an_off_chain_title_is_no_branch_and_names_the_session() -> None:
    s = _session(AGENTS)
    assert s.counts["artifact/metadata_leaf"] == 1 and s.counts["forks"] == 0
    assert {e.raw.get("name") for e in s.entries if e.type == "info"} == {
        "Profile kilnlog summarize"
    }


# --------------------------------------------------------------------------- subagents


def test_a_background_agent_is_its_own_session_linked_to_its_task_call(out: Path) -> None:
    child = f"{AGENTS}:explore-2b91"
    s = _session(child)
    assert s.header_raw["parent_session"] == AGENTS
    assert s.header_raw["spawned_by"] == "call_03b7147967359caa56b43fc6"
    assert s.header_raw["qwen:agent"]["agentName"] == "Explore"
    [row] = _rows(out, "trajectories", child)
    assert answers(row)[-1].startswith("stats.go:88 appends to a fresh slice per bucket")
    [link] = [e for e in _session(AGENTS).entries if e.type == "link"]
    assert link.raw["session"] == child and link.raw["call_id"] == "call_03b7147967359caa56b43fc6"
    assert link.parent == "72cbb3dd-34ae-4004-a32d-d66cebed8fa5"  # the task call's result


def test_the_notification_is_context_not_a_prompt(out: Path) -> None:
    [traj] = _rows(out, "trajectories", AGENTS)
    assert traj["n_user_turns"] == 4  # 3 typed prompts and the mid-turn message, no notification


# --------------------------------------------------------------------------- damage


def test_a_cut_last_line_is_one_truncated_row_and_the_prefix_exports(tmp_path: Path) -> None:
    run = run_export([PROJECT], tmp_path / "out", ExportOptions(), RunOptions(workers=1))
    assert [(e.kind, e.line, Path(e.source).name) for e in run.errors] == [
        ("truncated", 11, f"{CUT}.jsonl")
    ]
    [traj] = _rows(tmp_path / "out", "trajectories", CUT)
    assert answers(traj)[-1] == "go.mod requires Go 1.23."
    assert "call_5188d7a0d1cb607de77fa9eb" not in json.dumps(traj["messages"])
    assert traj["messages"][-1]["content"] == "Bump it to 1.24 and run go mod tidy."


def test_records_glued_on_one_line_are_both_read(tmp_path: Path) -> None:
    """Upstream's loader splits ``}{``; a string holding ``{"glued": …}`` is not a boundary."""
    run = run_export([THIRD], tmp_path / "out", ExportOptions(redact=False), RunOptions(workers=1))
    assert not run.errors
    [row] = _rows(tmp_path / "out", "trajectories", "019f0000-0000-7000-8000-000000000005")
    assert [m["content"] for m in row["messages"]] == [
        'Inspect {"glued": "objects"} safely.',
        "Recovered both synthetic objects.",
    ]
    # the cut file's glued tool result and telemetry: the tool output is there
    s = _session(CUT)
    assert any(e.raw.get("item", {}).get("type") == "function_call_output" for e in s.entries)


def test_a_glued_line_cut_after_its_first_record_keeps_that_record() -> None:
    found, issues = objects(b'{"type":"a"}{"type":"b"}\n{"type":"c"}{"ty', "f", glued=True)
    assert [v["type"] for _, v in found] == ["a", "b", "c"]
    assert [(i.kind, i.line) for i in issues] == [("truncated", 2)]
    found, issues = objects(b'{"type":"a"}{"type":"b"}\n{"type":"c"}\n', "f")  # other stores
    assert [v["type"] for _, v in found] == ["c"] and [i.kind for i in issues] == ["bad_line"]


def test_an_orphan_hangs_under_the_start_with_a_row(tmp_path: Path) -> None:
    lines = (CHATS / f"{REWINDS}.jsonl").read_text().splitlines()
    orphan = json.loads(lines[3])
    orphan["parentUuid"] = "00000000-0000-4000-8000-000000000000"
    lines[3] = json.dumps(orphan)
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / f"{REWINDS}.jsonl").write_text("\n".join(lines) + "\n")
    run = run_export([tmp_path / "s"], tmp_path / "out", ExportOptions(), RunOptions(workers=1))
    assert [(e.kind, e.line) for e in run.errors] == [("broken_link", 4)]
    assert run.counts["sessions_exported"] == 1


# --------------------------------------------------------------------------- /branch, archive


def test_a_branch_copy_joins_its_archived_source_by_uuid(out: Path) -> None:
    rows = _rows(out, "trajectories", ARCHIVED)
    finals = sorted(answers(r)[-1][:30] for r in rows)
    assert finals == ["README.md now documents `--sin", "`--since` now accepts either a"]
    assert len(_rows(out, "preferences", ARCHIVED)) == 2
    s = _session(ARCHIVED)
    assert s.header_raw["qwen:branches"] == ["9e070b01-ec04-4875-82a8-92a799d22391"]
    # the copied prefix is the source's records: its two model calls are counted once
    assert s.counts["responses"] == 4 and s.counts["forks"] == 1
    assert not any(x.id == "9e070b01-ec04-4875-82a8-92a799d22391" for x in read_store(HOME))


def test_a_branch_copy_alone_is_a_session_of_its_own(tmp_path: Path) -> None:
    shutil.copy(CHATS / "9e070b01-ec04-4875-82a8-92a799d22391.jsonl", tmp_path)
    [s] = read_store(tmp_path)
    assert s.id == "9e070b01-ec04-4875-82a8-92a799d22391" and s.counts["responses"] == 3


# --------------------------------------------------------------------------- third-party, real


def test_hook_context_is_sent_and_the_notification_is_hidden_context(tmp_path: Path) -> None:
    got = export(THIRD, tmp_path / "out")
    [row] = _rows(got, "trajectories", "019f0000-0000-7000-8000-000000000001")
    first = row["messages"][0]
    assert first["role"] == "user" and first["content"].startswith("Inspect the synthetic fixture.")
    assert "<qwen:user-prompt-submit-context>" in first["content"]  # what the model was sent
    assert row["n_user_turns"] == 1
    assert row["messages"][-1]["content"] == "Synthetic background notification."


def test_the_real_0_14_3_key_sweep_reads_and_keeps_what_it_does_not_know() -> None:
    """Every line of the real shape sample parses; its repeated placeholder uuids collapse
    (each repeat a row), and the kept record is a ``qwen:ui_telemetry`` entry."""
    [unit] = discover([REAL])
    [s] = load_unit(unit)
    assert isinstance(s, Session)
    kept = [e for e in s.entries if e.type == "qwen:ui_telemetry"]
    assert kept and kept[0].raw["record"]["systemPayload"]["uiEvent"]["model"] == "coder-model"
    assert sum(i.kind == "bad_field" and "again" in i.message for i in s.issues) == 7


# --------------------------------------------------------------------------- the commands


def test_convert_then_export_equals_exporting_the_store(tmp_path: Path, out: Path) -> None:
    assert assert_round_trip(HOME, out, tmp_path) == 8


def test_inspect_shows_forks_failed_attempts_and_compactions() -> None:
    shown = CliRunner().invoke(app, ["inspect", str(CHATS / f"{AGENTS}.jsonl")]).output
    for line in ("failed_attempts", "compactions", "artifact/metadata_leaf"):
        assert line in shown, line
    shown = CliRunner().invoke(app, ["inspect", str(CHATS / f"{REWINDS}.jsonl")]).output
    assert "fork " in shown


def test_a_session_in_chats_and_in_the_archive_is_read_once_with_a_row(tmp_path: Path) -> None:
    """Upstream does not merge the two copies; an export holds the session once."""
    project = shutil.copytree(PROJECT, tmp_path / "p")
    shutil.copy(CHATS / f"{REWINDS}.jsonl", project / "chats" / "archive")
    run = run_export([project], tmp_path / "out", ExportOptions(), RunOptions(workers=1))
    assert ("conflict", f"{REWINDS}.jsonl") in {(e.kind, Path(e.source).name) for e in run.errors}
    assert len(_rows(tmp_path / "out", "trajectories", REWINDS)) == 3


def _call(uid: str, parent: str | None, usage: dict[str, int]) -> str:
    return json.dumps({
        "uuid": uid, "parentUuid": parent, "sessionId": "5e55f0a1-0000-4000-8000-000000000001",
        "timestamp": "2026-04-23T00:39:51.130Z", "type": "assistant", "cwd": "/w", "version": "0.15.0",
        "model": "qwen3.5-plus", "contextWindowSize": 1000000, "usageMetadata": usage,
        "message": {"role": "model", "parts": [{"text": "why", "thought": True}, {"text": "ok"}]},
    })  # fmt: skip


def test_thoughts_are_counted_inside_or_beside_the_candidates_as_the_total_says(
    tmp_path: Path,
) -> None:
    """A real 0.15.0 call (OpenAI-compatible): 16928 + 40 = 16968 with 21 thought tokens, so
    the thoughts are inside the 40.  On Gemini's API they are beside them (the total adds
    them), and the output is candidates + thoughts."""
    inside = {"promptTokenCount": 16928, "candidatesTokenCount": 40, "thoughtsTokenCount": 21,
              "totalTokenCount": 16968, "cachedContentTokenCount": 0}  # fmt: skip
    beside = {"promptTokenCount": 1000, "candidatesTokenCount": 20, "thoughtsTokenCount": 80,
              "totalTokenCount": 1100, "cachedContentTokenCount": 900}  # fmt: skip
    prompt = json.dumps({"uuid": "u0", "parentUuid": None, "sessionId": "5e55f0a1-0000-4000-8000-000000000001",
                         "timestamp": "2026-04-23T00:39:48.359Z", "type": "user", "cwd": "/w",
                         "message": {"role": "user", "parts": [{"text": "hi"}]}})  # fmt: skip
    lines = [prompt, _call("a1", "u0", inside), _call("a2", "a1", beside)]
    (tmp_path / "5e55f0a1-0000-4000-8000-000000000001.jsonl").write_text("\n".join(lines) + "\n")
    [s] = read_store(tmp_path)
    usage = {e.id: e.raw["usage"] for e in s.entries if e.type == "response"}
    assert usage["a1:response"]["output_tokens"] == 40
    assert usage["a1:response"]["output_tokens_details"]["reasoning_tokens"] == 21
    assert usage["a2:response"]["output_tokens"] == 100
    assert usage["a2:response"]["input_tokens_details"]["cached_tokens"] == 900
    # a1 is retried by a2 (an assistant record below an assistant record): a failed attempt
    assert [e.raw["status"] for e in s.entries if e.type == "response"] == ["failed", "completed"]
