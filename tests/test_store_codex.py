"""The Codex CLI reader against real rollouts and the synthetic branch cases (specs/codex.md).

Each synthetic case's expectations are the rows of ``tests/data/upstream/codex/SOURCE.md``;
the real rollouts are checked against their own lines (every call id, every distinct usage).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from trajset.pipeline import ExportOptions, RunOptions, read_store, run_export
from trajset.pipeline.cli import app
from trajset.pipeline.stores import detect_kind, discover, load_unit
from trajset.schemas.session import Session

from .conftest import UPSTREAM, shown
from .exports import export, only_session, table
from .round_trip import assert_round_trip
from .test_export_conformance import harbor_trajectory

CODEX = UPSTREAM / "codex"
TEICH = CODEX / "real" / "teich" / "example_codex_session.jsonl"
CODEMIE = CODEX / "real" / "codemie-code"
REAL = [TEICH, CODEMIE]
SYN = CODEX / "synthetic"
ROLLBACK, FORK, SUBAGENT = SYN / "rollback", SYN / "fork", SYN / "subagent-paginated"
COMPACTED, REVERT = SYN / "compacted", SYN / "paginated-revert-fork"
LEGACY_CHILD = CODEX / "upstream-synthetic" / "claude-code-log"
SPAWN_SKILL = CODEX / "upstream-synthetic" / "codemie-code" / "turn-spawn-skill.jsonl"


def _lines(store: Path) -> list[dict[str, Any]]:
    files = [store] if store.is_file() else sorted(store.rglob("rollout-*.jsonl"))
    return [json.loads(x) for f in files for x in f.read_text().splitlines() if x.strip()]


def _last_answer(row: dict[str, Any]) -> str:
    return next(m["content"] for m in reversed(row["messages"]) if m["role"] == "assistant")


# --------------------------------------------------------------------------- where rollouts are


def test_detection_of_a_home_a_date_folder_and_one_rollout(tmp_path: Path) -> None:
    home = tmp_path / ".codex"
    shutil.copytree(ROLLBACK / "sessions", home / "sessions")
    shutil.copytree(FORK / "sessions", home / "archived_sessions")
    (home / "session_index.jsonl").write_text('{"id": "x", "thread_name": "n"}\n')
    (home / "history.jsonl").write_text('{"session_id": "x", "ts": 1, "text": "hi"}\n')
    (home / "config.toml").write_text('model = "gpt-5"\n')
    assert detect_kind(home) == "codex"
    assert detect_kind(home / "sessions" / "2026" / "06" / "02") == "codex"
    assert detect_kind(TEICH) == "codex"  # not named rollout-*, but its first line says so
    units = discover([home])
    assert [len(u.files) for u in units] == [2, 1]  # the fork with its source; the rollback
    run = run_export([home], tmp_path / "out", ExportOptions(), RunOptions(workers=1))
    assert run.counts["sessions_read"] == 2 and not run.errors
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    skipped = {Path(p["path"]).name for p in manifest["skipped"]}
    assert {"session_index.jsonl", "history.jsonl", "config.toml"} <= skipped


def test_an_archived_copy_of_a_rollout_is_read_once(tmp_path: Path) -> None:
    home = tmp_path / "home"
    shutil.copytree(ROLLBACK / "sessions", home / "sessions")
    archived = home / "archived_sessions"
    archived.mkdir()
    for f in (home / "sessions").rglob("rollout-*"):
        shutil.copy(f, archived / f.name)  # an older build archives into a flat folder
    [unit] = discover([home])
    assert "archived_sessions" not in unit.files[0]


def test_a_compressed_rollout_reads_as_its_text(tmp_path: Path) -> None:
    import zstandard

    plain = next(ROLLBACK.rglob("rollout-*.jsonl"))
    store = tmp_path / "home" / "sessions"
    store.mkdir(parents=True)
    packed = store / (plain.name + ".zst")
    packed.write_bytes(zstandard.ZstdCompressor().compress(plain.read_bytes()))
    assert detect_kind(packed) == "codex" and detect_kind(tmp_path / "home") == "codex"
    [got] = read_store(tmp_path / "home")
    want = only_session(ROLLBACK)
    assert [e.raw for e in got.entries] == [e.raw for e in want.entries]


def test_a_file_that_is_not_a_rollout_is_one_error_row(tmp_path: Path) -> None:
    store = tmp_path / "sessions"
    store.mkdir()
    shutil.copy(next(ROLLBACK.rglob("rollout-*.jsonl")), store)
    bad = store / "rollout-2026-06-02T10-40-09-019e88fe-0000-7000-8000-000000000000.jsonl"
    bad.write_text(
        '{"timestamp": "2026-06-02T15:40:09.120Z", "type": "event_msg", "payload": {}}\n'
    )
    run = run_export([store], tmp_path / "out", ExportOptions(), RunOptions(workers=1))
    [error] = run.errors
    assert error.source == shown(bad, store) and "not a Codex rollout" in error.message
    assert run.counts["trajectories"] == 3  # the good rollout is exported whole


# --------------------------------------------------------------------------- real rollouts


@pytest.mark.parametrize("store", REAL, ids=["teich", "codemie-code"])
def test_real_rollouts_have_no_fork_keep_every_call_and_validate(
    store: Path, tmp_path: Path
) -> None:
    harbor = harbor_trajectory()
    sessions = read_store(store)
    assert sessions and all(not s.forks() for s in sessions)
    out = export(store, tmp_path / "out")
    assert not table(out, "preferences")
    assert len(table(out, "trajectories")) == len(sessions)
    called = {c["tool_call_id"] for s in table(out, "steps") for c in s["tool_calls"]}
    recorded = {
        r["payload"]["call_id"]
        for r in _lines(store)
        if r["type"] == "response_item" and "call_id" in r["payload"]
        and r["payload"]["type"] in ("function_call", "custom_tool_call", "local_shell_call")
    }  # fmt: skip
    assert recorded and recorded <= called
    docs = sorted((out / "atif").glob("*.json"))
    assert len(docs) == len(sessions)
    for doc in docs:
        harbor.model_validate_json(doc.read_text())


def _distinct_usage(lines: list[dict[str, Any]]) -> dict[str, int]:
    """The sum of the ``last_token_usage`` of the token counts whose total moved."""
    sums = dict.fromkeys(("input_tokens", "cached_input_tokens", "output_tokens"), 0)
    previous = None
    for r in lines:
        p = r["payload"]
        if r["type"] != "event_msg" or p.get("type") != "token_count" or not p.get("info"):
            continue
        if p["info"]["total_token_usage"] == previous:
            continue
        previous = p["info"]["total_token_usage"]
        for k in sums:
            sums[k] += p["info"]["last_token_usage"].get(k, 0)
    return sums


@pytest.mark.parametrize("store", REAL, ids=["teich", "codemie-code"])
def test_usage_is_the_sum_of_the_distinct_token_counts(store: Path, tmp_path: Path) -> None:
    out = export(store, tmp_path / "out")
    rows = table(out, "trajectories")
    files = [store] if store.is_file() else sorted(store.rglob("rollout-*.jsonl"))
    for f in files:
        want = _distinct_usage(_lines(f))
        [row] = [r for r in rows if r["session_id"] in f.name or f == TEICH]
        assert row["total_prompt_tokens"] == want["input_tokens"]
        assert row["total_completion_tokens"] == want["output_tokens"]
        assert row["total_cached_tokens"] == want["cached_input_tokens"]


def test_the_teich_final_total_is_reproduced_exactly(tmp_path: Path) -> None:
    [row] = table(export(TEICH, tmp_path / "out"), "trajectories")
    final = [r for r in _lines(TEICH) if r["payload"].get("type") == "token_count"][-1]
    total = final["payload"]["info"]["total_token_usage"]
    assert (total["input_tokens"], total["cached_input_tokens"], total["output_tokens"]) == (
        294_183, 216_704, 10_573,
    )  # fmt: skip
    assert row["total_prompt_tokens"] == 294_183 and row["total_cached_tokens"] == 216_704
    assert row["total_completion_tokens"] == 10_573
    assert row["n_tool_calls"] == 18 and row["n_user_turns"] == 1
    items = [e.raw["item"] for e in only_session(TEICH).entries if e.type == "item"]
    calls = {i["call_id"] for i in items if i["type"] == "function_call"}
    outputs = {i["call_id"] for i in items if i["type"] == "function_call_output"}
    assert len(calls) == 18 and calls == outputs  # all paired


def test_context_is_hidden_and_prompts_are_what_the_user_typed(tmp_path: Path) -> None:
    session = only_session(TEICH)
    users = [
        e
        for e in session.entries
        if e.type == "item" and e.raw["item"].get("role") in ("user", "developer")
    ]
    typed = [e for e in users if e.raw.get("visible") is not False]
    assert len(typed) == 1 and len(users) == 3  # permissions, environment, the prompt
    assert all(e.raw.get("codex:context") for e in users if e not in typed)
    [row] = table(export(TEICH, tmp_path / "out"), "trajectories")
    users = [m["content"] for m in row["messages"] if m["role"] == "user"]
    assert users[0].startswith("<environment_context>")  # what the model saw, kept as context
    assert row["n_user_turns"] == 1 and users[-1] == typed[0].raw["item"]["content"][0]["text"]


def test_reasoning_keeps_its_summary_and_encrypted_content() -> None:
    reasoning = [
        e.raw["item"] for e in only_session(TEICH).entries
        if e.type == "item" and e.raw["item"]["type"] == "reasoning"
    ]  # fmt: skip
    assert len(reasoning) == 5 and all(r["encrypted_content"] for r in reasoning)
    assert any(r["summary"] for r in reasoning)


def test_prompts_written_only_as_events_are_read_from_the_events(tmp_path: Path) -> None:
    desktop = next(CODEMIE.rglob("*13-28-45*.jsonl"))
    store = tmp_path / "s"
    store.mkdir()
    shutil.copy(desktop, store)
    session = only_session(store)
    assert session.counts["codex/prompts_from_events"] == 3
    [row] = table(export(store, tmp_path / "out"), "trajectories")
    assert row["n_user_turns"] == 3 and row["total_prompt_tokens"] == 0  # no usage written


def test_end_events_become_members_of_the_call_output() -> None:
    [session] = [s for s in read_store(CODEMIE) if s.id.startswith("019e1625")]
    outputs = [
        e
        for e in session.entries
        if e.type == "item" and e.raw["item"]["type"] == "function_call_output"
    ]
    ended = [e for e in outputs if "codex:exec_command_end" in e.raw]
    assert len(ended) == 43 and all(isinstance(e.raw["trajset:exit_code"], int) for e in ended)
    assert not [e for e in session.entries if e.type == "codex:exec_command_end"]
    for e in ended:  # what repeats the output the model saw is not kept twice
        kept = e.raw["codex:exec_command_end"].get("aggregated_output", "")
        assert not kept.strip() or kept.strip() not in e.raw["item"]["output"]
    assert len([e for e in outputs if "codex:patch_apply_end" in e.raw]) == 3
    searches = [
        e
        for e in session.entries
        if e.type == "item" and e.raw["item"]["type"] == "codex:web_search_call"
    ]
    assert len(searches) == 3 and all(e.raw.get("response") for e in searches)


# --------------------------------------------------------------------------- the synthetic cases


@pytest.mark.parametrize("prefer", ["latest", "current"])
def test_rollbacks_are_abandoned_branches_and_prompt_pairs(prefer: str, tmp_path: Path) -> None:
    session = only_session(ROLLBACK)
    [fork] = session.forks()
    assert fork.endswith(":17") and len(session.children(fork)) == 3  # the end of turn 1
    out = export(ROLLBACK, tmp_path / "out", prefer=(prefer,))
    rows = table(out, "trajectories")
    assert len(rows) == 3
    [main] = [r for r in rows if r["is_preferred"]]
    assert _last_answer(main) == (
        "Added scripts/version.ts; `npx tsx scripts/version.ts` prints the version that "
        "`release.ts` would publish."
    )
    abandoned = {_last_answer(r)[:40] for r in rows if not r["is_preferred"]}
    assert abandoned == {
        "The release script now runs `npm run doc", "Added scripts/release.test.ts, which che",
    }  # fmt: skip
    pairs = table(out, "preferences")
    assert len(pairs) == 4 and {p["kind"] for p in pairs} == {"prompt"}
    assert {p["chosen_leaf_id"] for p in pairs} == {main["leaf_id"]}
    assert {p["policy"] for p in pairs} == {prefer}
    turn = [p for p in pairs if p["granularity"] == "turn"]
    assert {p["chosen"][0]["content"] for p in turn} == {
        "Put the version printing in a separate scripts/version.ts instead."
    }


def test_a_second_rollback_counts_only_live_turns() -> None:
    """``num_turns: 2`` after turns 3 and 4 drops those two, not turn 2 (already dropped)."""
    session = only_session(ROLLBACK)
    markers = [e for e in session.entries if e.type == "codex:thread_rolled_back"]
    assert [m.parent for m in markers] == [session.forks()[0]] * 2
    assert session.counts["codex/rollbacks"] == 2


def test_a_copy_fork_joins_its_source_without_counting_the_copy_twice(tmp_path: Path) -> None:
    session = only_session(FORK)
    [fork] = session.forks()
    assert fork.endswith(":17") and session.counts["codex/copied_lines"] == 17
    out = export(FORK, tmp_path / "out")
    rows = table(out, "trajectories")
    assert len(rows) == 2 and len(table(out, "preferences")) == 2
    [chosen] = [r for r in rows if r["is_preferred"]]
    assert _last_answer(chosen) == (
        "Added an `## API` section to README.md that lists `parse_request` and `write_response`."
    )
    for leaf in {r["leaf_id"] for r in rows}:  # each trajectory has each call once
        calls = [c["tool_call_id"] for s in table(out, "steps") if s["leaf_id"] == leaf
                 for c in s["tool_calls"]]  # fmt: skip
        assert len(calls) == len(set(calls)) == 2
    fork_file = sorted(FORK.rglob("rollout-*.jsonl"))[1]
    own = _distinct_usage(_lines(fork_file)[18:])  # the fork's own turn
    source = _distinct_usage(_lines(sorted(FORK.rglob("rollout-*.jsonl"))[0]))
    assert (
        session.counts["codex/usage/input_tokens"] == source["input_tokens"] + own["input_tokens"]
    )


def test_a_fork_without_its_source_stands_alone(tmp_path: Path) -> None:
    store = tmp_path / "sessions"
    store.mkdir()
    shutil.copy(sorted(FORK.rglob("rollout-*.jsonl"))[1], store)
    session = only_session(store)
    assert session.id.startswith("019e91a8") and not session.forks()
    assert session.counts["codex/forks_without_source"] == 1 and session.header_raw["codex:notes"]
    run = run_export([store], tmp_path / "out", ExportOptions(), RunOptions(workers=1))
    assert not run.errors and run.counts["trajectories"] == 1  # a note, not an error row


def test_a_revert_and_a_fork_by_reference_share_the_trunk(tmp_path: Path) -> None:
    session = only_session(REVERT)
    [fork] = session.forks()
    assert fork == "01a12164-bd9c-793a-8926-004e1e6c7e81:16"
    assert len(session.children(fork)) == 3
    assert session.current_leaf() == "01a12166-07a3-7634-b07f-c05f793b9681:31"  # the replacement
    out = export(REVERT, tmp_path / "out")
    rows = table(out, "trajectories")
    assert len(rows) == 3 and len(table(out, "preferences")) == 4
    [latest] = [r for r in rows if r["is_preferred"]]
    assert _last_answer(latest).startswith("CI now runs with `TZ=Europe/Berlin`")  # the fork
    current = table(export(REVERT, tmp_path / "current", prefer=("current",)), "trajectories")
    [kept] = [r for r in current if r["is_preferred"]]
    assert _last_answer(kept).startswith("`ParseDate` now parses in `time.UTC`")


def test_a_subagent_child_is_its_own_session_without_the_parent_replay(tmp_path: Path) -> None:
    parent, child = sorted(read_store(SUBAGENT), key=lambda s: s.header_raw["created_at"])
    [link] = [e for e in parent.entries if e.type == "link"]
    assert (
        link.raw["session"] == child.id and link.raw["call_id"] == "call_NWNpXnTEeQieMeRCMM0pJnXE"
    )
    assert child.header_raw["parent_session"] == parent.id
    assert child.counts["codex/usage/input_tokens"] == 19_790
    assert child.counts["codex/usage/output_tokens"] == 81 and child.counts["codex/responses"] == 2
    out = export(SUBAGENT, tmp_path / "out")
    rows = {r["session_id"]: r for r in table(out, "trajectories")}
    assert len(rows) == 2 and not table(out, "preferences")
    mine = rows[child.id]
    users = [m["content"] for m in mine["messages"] if m["role"] == "user"]
    assert users[0].startswith("List every file under src/")
    assert not set(users) & {
        m["content"] for m in rows[parent.id]["messages"] if m["role"] == "user"
    }
    assert _last_answer(mine).startswith("Two files still import the legacy Button:")
    assert mine["total_prompt_tokens"] == 19_790
    doc = json.loads((out / "atif" / f"{parent.id}.json").read_text())
    refs = [r for s in doc["steps"] for r in (s.get("observation") or {}).get("results", [])
            if r.get("subagent_trajectory_ref")]  # fmt: skip
    assert refs and refs[0]["source_call_id"] == "call_NWNpXnTEeQieMeRCMM0pJnXE"


def test_a_legacy_child_loses_the_prefix_it_replays() -> None:
    parent, child = sorted(read_store(LEGACY_CHILD), key=lambda s: s.id)
    assert child.counts["codex/replayed_lines_left_out"] == 2
    texts = [json.dumps(e.raw.get("item")) for e in child.entries if e.type == "item"]
    assert not any("Spawn a synthetic researcher" in t for t in texts)
    assert any("Inspect fixtures." in t for t in texts)
    [link] = [e for e in parent.entries if e.type == "link"]
    assert link.raw["session"] == child.id and link.raw["call_id"] == "call-spawn-001"


def test_unpaired_spawn_and_wait_calls_are_kept() -> None:
    session = only_session(SPAWN_SKILL)
    calls = [e.raw["item"]["call_id"] for e in session.entries
             if e.type == "item" and e.raw["item"]["type"] == "function_call"]  # fmt: skip
    assert calls == ["call_skill1", "call_spawn1", "call_wait1"]
    [end] = [e for e in session.entries if e.type == "run" and e.raw["phase"] == "end"]
    assert end.raw["pending"] == ["call_spawn1", "call_wait1"]


def test_local_and_remote_compactions(tmp_path: Path) -> None:
    session = only_session(COMPACTED)
    compactions = [e for e in session.entries if e.type == "compaction"]
    assert len(compactions) == 2
    local, remote = (e.raw for e in compactions)
    assert local["summary"]["type"] == "message" and "N+1" in local["summary"]["content"][0]["text"]
    assert remote["summary"]["type"] == "compaction" and remote["summary"]["encrypted_content"]
    assert local["usage"]["input_tokens"] > 0  # the summarising call's token count
    assert all(e.raw["config"]["instructions"] for e in compactions)
    out = export(COMPACTED, tmp_path / "out")
    [row] = table(out, "trajectories")
    assert not table(out, "preferences")
    assert (
        _last_answer(row)
        == "Yesterday's 48,213 orders now take 1 min 52 s instead of about 40 minutes."
    )
    doc = json.loads((out / "atif" / f"{session.id}.json").read_text())
    kinds = [s.get("extra", {}).get("context_management", {}).get("type") for s in doc["steps"]]
    assert kinds[0] == "compaction"  # the last compaction leads its window
    assert session.path(session.last_id())[-1].id == session.last_id()
    on_path = [e.type for e in session.path(session.last_id())]
    assert on_path.count("compaction") == 2


# --------------------------------------------------------------------------- turns, runs, outcomes


def _rollout(tmp_path: Path, lines: list[dict[str, Any]]) -> Path:
    store = tmp_path / "sessions"
    store.mkdir(exist_ok=True)
    path = store / "rollout-2026-06-02T10-40-09-019e88fe-0420-77a8-b1a6-000000000001.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return store


def _ev(ts: int, payload: dict[str, Any], kind: str = "event_msg") -> dict[str, Any]:
    return {"timestamp": f"2026-06-02T15:40:{ts:02d}.000Z", "type": kind, "payload": payload}


def _turn(
    ts: int, turn: str, prompt: str, answer: str, end: dict[str, Any]
) -> list[dict[str, Any]]:
    user = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": prompt}]}
    said = {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": answer}],
    }
    call = {"type": "function_call", "name": "exec_command", "call_id": f"c-{turn}",
            "arguments": json.dumps({"cmd": "false"})}  # fmt: skip
    out = {"type": "function_call_output", "call_id": f"c-{turn}",
           "output": "Chunk ID: 1\nWall time: 0.1 seconds\nProcess exited with code 1\nOutput:\n"}  # fmt: skip
    return [
        _ev(ts, {"type": "task_started", "turn_id": turn}),
        _ev(ts, {"turn_id": turn, "model": "gpt-5.5", "effort": "high"}, "turn_context"),
        _ev(ts, user, "response_item"),
        _ev(ts, {"type": "user_message", "message": prompt}),
        _ev(ts + 1, call, "response_item"),
        _ev(ts + 1, out, "response_item"),
        _ev(ts + 2, said, "response_item"),
        _ev(ts + 2, {**end, "turn_id": turn}),
    ]


META = _ev(0, {"id": "019e88fe-0420-77a8-b1a6-000000000001", "timestamp": "2026-06-02T15:40:00.000Z",
               "cwd": "/w", "cli_version": "0.136.0", "source": "cli",
               "base_instructions": {"text": "You are Codex."}}, "session_meta")  # fmt: skip


def test_an_aborted_turn_is_an_outcome_that_never_passes(tmp_path: Path) -> None:
    store = _rollout(tmp_path, [
        META,
        *_turn(1, "t1", "Run the tests.", "Stopped.", {"type": "turn_aborted", "reason": "interrupted"}),
        *_turn(10, "t2", "Now run them again.", "They fail.", {"type": "task_complete"}),
    ])  # fmt: skip
    session = only_session(store)
    runs = [
        (e.raw["run_id"], e.raw["phase"], e.raw.get("reason"))
        for e in session.entries
        if e.type == "run"
    ]
    assert runs == [("t1", "start", None), ("t1", "end", "interrupted"), ("t2", "start", None),
                    ("t2", "end", "done")]  # fmt: skip
    [outcome] = [e for e in session.entries if e.type == "outcome"]
    assert outcome.raw["pass"] is False and outcome.raw["label"] == "codex:turn_aborted"
    statuses = [e.raw["status"] for e in session.entries if e.type == "response"]
    assert statuses == ["completed", "incomplete", "completed", "completed"]
    assert not session.forks()  # an abort without a rollback marker stays in context
    configs = [e.raw for e in session.entries if e.type == "config"]
    assert configs[0]["instructions"] == "You are Codex." and configs[1]["model"] == "gpt-5.5"
    assert configs[1]["reasoning"] == {"effort": "high"}
    out = export(store, tmp_path / "out")
    [row] = table(out, "trajectories")
    assert row["outcome_pass"] is False and row["n_failed_tool_calls"] == 2
    assert row["n_user_turns"] == 2


def test_the_direct_form_of_old_builds_is_read(tmp_path: Path) -> None:
    store = tmp_path / "sessions"
    store.mkdir()
    lines = [
        {"id": "0197aaaa-0000-7000-8000-000000000001", "timestamp": "2025-06-01T10:00:00.000Z",
         "instructions": "Be brief.", "git": {"branch": "main"}},
        {"record_type": "state"},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Hello"}]},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Hi."}]},
    ]  # fmt: skip
    (store / "rollout-2025-06-01T10-00-00-0197aaaa-0000-7000-8000-000000000001.jsonl").write_text(
        "".join(json.dumps(x) + "\n" for x in lines)
    )
    session = only_session(store)
    assert session.entries[0].raw["instructions"] == "Be brief."
    items = [e.raw["item"]["content"][0]["text"] for e in session.entries if e.type == "item"]
    assert items == ["Hello", "Hi."]


@pytest.mark.parametrize("fraction", [0.05, 0.2, 0.37, 0.5, 0.63, 0.81, 0.95, 0.999])
def test_a_cut_rollout_exports_its_complete_prefix_and_reports_the_tail(
    fraction: float, tmp_path: Path
) -> None:
    source = next(ROLLBACK.rglob("rollout-*.jsonl"))
    data = source.read_bytes()
    whole = [e.id for e in only_session(ROLLBACK).entries]
    store = tmp_path / "sessions"
    store.mkdir()
    cut = data[: int(len(data) * fraction)]
    (store / source.name).write_bytes(cut)
    run = run_export([store], tmp_path / "out", ExportOptions(), RunOptions(workers=1))
    entries = only_session(store).entries
    ids = [e.id for e in entries]
    complete = cut.count(b"\n")
    same = next((i for i, (a, b) in enumerate(zip(ids, whole, strict=False)) if a != b), len(ids))
    # past the common prefix only the call the cut left open: an event standing in for its
    # cut item, and its response closed early
    assert [e.type for e in entries[same:]] in ([], ["response"], ["item", "response"])
    assert {int(i.split(":")[1]) for i in ids if i.count(":") == 1} <= set(range(1, complete + 1))
    if cut.endswith(b"\n"):
        assert not run.errors
    else:
        [error] = run.errors
        assert (
            error.kind == "truncated"
            and error.line == complete + 1
            and source.name in error.message
        )


@pytest.mark.parametrize("fraction", [0.01, 0.3, 0.6, 0.9])
def test_a_cut_base_leaves_its_segments_readable(fraction: float, tmp_path: Path) -> None:
    store = tmp_path / "home"
    shutil.copytree(REVERT, store)
    base = sorted(store.rglob("rollout-*.jsonl"))[0]
    data = base.read_bytes()
    base.write_bytes(data[: int(len(data) * fraction)])
    sessions = read_store(store, errors=[])  # the cut base, when nothing of it reads
    own = {e.id.split(":")[0] for s in sessions for e in s.entries}
    assert {"01a12166-07a3-7634-b07f-c05f793b9681", "01a1216f-4046-78df-b96d-180dfb344f5f"} <= own
    run = run_export([store], tmp_path / "out", ExportOptions(), RunOptions(workers=1))
    assert run.counts["trajectories"] >= 2 and any(
        base.name in e.message or e.source.endswith(base.name) for e in run.errors
    )


# --------------------------------------------------------------------------- the command line


def test_convert_then_export_equals_exporting_the_store(tmp_path: Path) -> None:
    home = tmp_path / "home"
    for case in (ROLLBACK, FORK, SUBAGENT, REVERT, COMPACTED):
        shutil.copytree(case / "sessions", home / "sessions", dirs_exist_ok=True)
    assert assert_round_trip(home, export(home, tmp_path / "direct"), tmp_path) == 11


def test_inspect_shows_turns_rollbacks_forks_children_compactions_and_usage() -> None:
    runner = CliRunner()
    shown = runner.invoke(app, ["inspect", str(ROLLBACK)]).output
    for line in ("codex/turns", "codex/rollbacks", "codex/usage/input_tokens", "fork "):
        assert line in shown, line
    assert "codex/children" in runner.invoke(app, ["inspect", str(SUBAGENT)]).output
    assert "codex/compactions" in runner.invoke(app, ["inspect", str(COMPACTED)]).output
    assert "codex/forks" in runner.invoke(app, ["inspect", str(FORK)]).output


def test_every_unit_loads_without_an_error() -> None:
    for store in (*REAL, ROLLBACK, FORK, SUBAGENT, COMPACTED, REVERT, LEGACY_CHILD, SPAWN_SKILL):
        for unit in discover([store]):
            assert all(isinstance(s, Session) for s in load_unit(unit)), store


def test_a_user_item_that_no_prompt_event_names_is_context(tmp_path: Path) -> None:
    """A contextual item of a kind this reader does not list is known by its missing event."""
    notice = {"type": "message", "role": "user",
              "content": [{"type": "input_text", "text": "<plugin_notice>two skills</plugin_notice>"}]}  # fmt: skip
    turn = _turn(1, "t1", "Run the tests.", "Done.", {"type": "task_complete"})
    store = _rollout(tmp_path, [META, turn[0], turn[1], _ev(1, notice, "response_item"), *turn[2:]])
    items = [
        e.raw
        for e in only_session(store).entries
        if e.type == "item" and e.raw["item"].get("role") == "user"
    ]
    assert [i.get("visible") for i in items] == [False, None]


def test_a_fork_of_a_fork_hangs_from_the_first_source(tmp_path: Path) -> None:
    """A copy of a copy: the lines the second fork copied from the first are the source's."""
    home = tmp_path / "home"
    shutil.copytree(FORK, home)
    first = sorted(home.rglob("rollout-*.jsonl"))[1]
    lines = first.read_text().splitlines()
    meta = json.loads(lines[0])
    meta["payload"] = {**meta["payload"], "id": "019e91b0-0000-7000-8000-000000000002",
                       "forked_from_id": meta["payload"]["id"], "timestamp": "2026-06-04T09:00:00.000Z"}  # fmt: skip
    meta["timestamp"] = "2026-06-04T09:00:00.000Z"
    own = [_ev(1, {"type": "task_started", "turn_id": "t9"}),
           _ev(2, {"type": "message", "role": "user",
                   "content": [{"type": "input_text", "text": "Add both."}]}, "response_item")]  # fmt: skip
    for x in own:
        x["timestamp"] = "2026-06-04T09:00:01.000Z"
    second = first.parent / "rollout-2026-06-04T04-00-00-019e91b0-0000-7000-8000-000000000002.jsonl"
    second.write_text("\n".join([json.dumps(meta), *lines[:18], *map(json.dumps, own)]) + "\n")
    session = only_session(home)
    [fork] = session.forks()
    assert len(session.children(fork)) == 3 and session.counts["codex/copied_lines"] == 17 + 18
    assert len(session.roots()) == 1


def test_an_item_that_does_not_decode_is_reported_and_kept(tmp_path: Path) -> None:
    turn = _turn(1, "t1", "Run the tests.", "Done.", {"type": "task_complete"})
    broken = {"type": "function_call_output", "call_id": "c-t1", "output": [1, 2]}
    store = _rollout(tmp_path, [META, *turn[:5], _ev(2, broken, "response_item"), *turn[6:]])
    session = only_session(store)
    [kept] = [e for e in session.entries if e.type == "codex:undecodable"]
    assert kept.raw["entry"]["item"]["output"] == [1, 2]
    run = run_export([store], tmp_path / "out", ExportOptions(), RunOptions(workers=1))
    [error] = run.errors
    assert (
        error.line == 7
        and "function_call_output" not in error.kind
        and "item entry" in error.message
    )
    assert run.counts["trajectories"] == 1


def test_a_repeated_ordinal_keeps_every_line(tmp_path: Path) -> None:
    """A paginated file that names an ordinal twice (a hostile or broken writer): both lines
    are read, the second under its line number, and the ids stay unique."""
    turn = _turn(1, "t1", "Run the tests.", "Done.", {"type": "task_complete"})
    lines = [{**x, "ordinal": i} for i, x in enumerate([META, *turn])]
    lines[5]["ordinal"] = 4
    session = only_session(_rollout(tmp_path, lines))
    ids = [e.id for e in session.entries]
    assert len(ids) == len(set(ids)) and any(i.endswith(":line6") for i in ids)


def test_a_failed_mcp_call_is_a_failed_tool_call() -> None:
    from trajset.pipeline.stores.codex.items import output_item

    end = {"type": "mcp_tool_call_end", "call_id": "c", "result": {"Err": "no such tool"}}
    _, extra = output_item({"type": "function_call_output", "call_id": "c", "output": "x"}, [end])
    assert extra["trajset:failed"] is True and extra["codex:mcp_tool_call_end"] == end


def test_a_copy_of_a_rollout_under_another_name_keeps_unique_ids(tmp_path: Path) -> None:
    store = tmp_path / "sessions"
    store.mkdir()
    source = next(ROLLBACK.rglob("rollout-*.jsonl"))
    shutil.copy(source, store / source.name)
    shutil.copy(source, store / source.name.replace("10-40-09", "10-40-10"))
    sessions = read_store(store)
    ids = [e.id for s in sessions for e in s.entries]
    assert len(ids) == len(set(ids)) and len(sessions) == 1
