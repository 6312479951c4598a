"""The Claude Code reader against real sessions and the synthetic rewinds (specs/claude-code.md)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from trajset.pipeline import ExportOptions, RunOptions, read_store, run_export
from trajset.pipeline.cli import app
from trajset.pipeline.stores import detect_kind, discover

from .conftest import UPSTREAM
from .test_export_conformance import harbor_trajectory

CC = UPSTREAM / "claude-code"
REAL = [
    "-experiments-worktrees",
    "-Users-dain-workspace-claude-code-log-sample",
    "teich",
    "codemie-code",
]
SYNTHETIC = ["synthetic-rewind", "synthetic-rewind-preserved"]


def _export(store: Path, out: Path) -> Path:
    run_export([store], out, ExportOptions(redact=False), RunOptions(workers=1))
    return out


def _rows(out: Path, table: str) -> list[dict[str, Any]]:
    return pl.read_parquet(out / "data" / table / "*.parquet").to_dicts()


def _records(folder: Path) -> list[dict[str, Any]]:
    return [
        json.loads(line)
        for f in sorted(folder.rglob("*.jsonl"))
        for line in f.read_text().splitlines()
        if line.strip()
    ]


def test_detection_of_projects_root_project_and_file() -> None:
    assert detect_kind(CC) == "claude-code"
    assert detect_kind(CC / "teich") == "claude-code"
    assert detect_kind(CC / "teich" / "example_claude_code.jsonl") == "claude-code"
    units = discover([CC])
    assert len(units) == 6 and all(u.kind == "claude-code" for u in units)
    [worktrees] = [u for u in units if u.label.endswith("-experiments-worktrees")]
    assert len(worktrees.files) == 7  # the session and its six agent files


def test_a_qwen_code_session_is_not_read_as_claude_code(tmp_path: Path) -> None:
    """Qwen Code writes the same uuid/parentUuid/sessionId records, with Gemini's ``parts``
    in its messages (specs/qwen-code.md §6): read as Claude Code, a session gave trajectories
    of empty messages.  It is Qwen Code's, and its messages have their text."""
    base = {
        "sessionId": "0b1c",
        "timestamp": "2026-06-01T10:00:00.000Z",
        "cwd": "/w",
        "version": "0.20.1",
    }
    records = [
        {"uuid": "u1", "parentUuid": None, **base, "type": "system", "subtype": "slash_command",
         "systemPayload": {"phase": "invocation", "rawCommand": "/about"}},
        {"uuid": "u2", "parentUuid": "u1", **base, "type": "user",
         "message": {"role": "user", "parts": [{"text": "hi"}]}},
        {"uuid": "u3", "parentUuid": "u2", **base, "type": "assistant", "model": "qwen3-coder",
         "message": {"role": "model", "parts": [{"text": "hello"}]}},
    ]  # fmt: skip
    f = tmp_path / "0b1c0000-0000-4000-8000-000000000000.jsonl"
    f.write_text("".join(json.dumps(r) + "\n" for r in records))
    assert detect_kind(f) == "qwen-code"
    out = tmp_path / "out"
    run = run_export([f], out, ExportOptions(), RunOptions(workers=1))
    assert run.counts["trajectories"] == 1 and not run.errors
    [row] = pq.read_table(out / "data" / "sft").to_pylist()
    assert [m["content"] for m in row["messages"]] == ["hi", "hello"]
    (tmp_path / "c.jsonl").write_text(
        json.dumps({**records[1], "message": {"role": "user", "content": "hi"}}) + "\n"
    )
    assert detect_kind(tmp_path / "c.jsonl") == "claude-code"  # Claude Code's own shape


def test_detection_survives_a_first_line_with_the_wrong_types(tmp_path: Path) -> None:
    """Found by the fuzz runner: a ``type`` that is an object crashed detection of the store."""
    (tmp_path / "projects" / "p").mkdir(parents=True)
    odd = tmp_path / "projects" / "p" / "s.jsonl"
    odd.write_text('{"type": {"user": 1}, "sessionId": "s", "uuid": "u"}\n')
    assert detect_kind(odd) == "claude-code"  # a sessionId is enough to say whose it is
    odd.write_text('{"type": ["user"], "sessionId": "s", "uuid": "u"}\n')
    store = tmp_path / "projects"
    run = run_export([store], tmp_path / "out", ExportOptions(), RunOptions(workers=1))
    assert run.counts["units"] == 1 and run.errors  # read by a reader, reported, no crash


@pytest.mark.parametrize("project", REAL)
def test_real_samples_have_no_fork_and_keep_every_tool_call(project: str, tmp_path: Path) -> None:
    harbor = harbor_trajectory()
    sessions = read_store(CC / project)
    assert sessions and all(not s.forks() for s in sessions)
    out = _export(CC / project, tmp_path / "out")
    steps = _rows(out, "steps")
    called = {c["tool_call_id"] for s in steps for c in s["tool_calls"]}
    tool_uses = {
        b["id"]
        for r in _records(CC / project)
        if r.get("type") == "assistant"
        for b in (r.get("message") or {}).get("content") or []
        if isinstance(b, dict) and b.get("type") == "tool_use"
    }
    assert tool_uses and tool_uses <= called
    for doc in (out / "atif").glob("*.json"):
        harbor.model_validate_json(doc.read_text())


def _typed(value: Any) -> Any:
    """A JSON value with the type of every number in it (``38`` and ``38.0`` differ)."""
    if isinstance(value, dict):
        return {k: _typed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_typed(v) for v in value]
    return (type(value).__name__, value)


@pytest.mark.parametrize("project", REAL)
def test_tool_arguments_keep_their_values_and_types(project: str, tmp_path: Path) -> None:
    """An integer argument stays an integer (``"offset": 38``, never ``38.0``) in the steps,
    the trajectories' messages and the documents."""
    out = _export(CC / project, tmp_path / "out")
    inputs = {
        b["id"]: b["input"]
        for r in _records(CC / project)
        if r.get("type") == "assistant"
        for b in (r.get("message") or {}).get("content") or []
        if isinstance(b, dict) and b.get("type") == "tool_use"
    }
    steps = {
        c["tool_call_id"]: c["arguments"] for s in _rows(out, "steps") for c in s["tool_calls"]
    }
    messages = {
        c["id"]: c["function"]["arguments"]
        for t in _rows(out, "trajectories")
        for m in t["messages"]
        for c in m["tool_calls"] or []
    }
    documents = {
        c["tool_call_id"]: c["arguments"]
        for doc in (out / "atif").glob("*.json")
        for step in json.loads(doc.read_text())["steps"]
        for c in step.get("tool_calls") or []
    }
    assert inputs
    for call_id, given in inputs.items():
        assert _typed(json.loads(steps[call_id])) == _typed(given), call_id
        assert _typed(json.loads(messages[call_id])) == _typed(given), call_id
        assert _typed(documents[call_id]) == _typed(given), call_id


@pytest.mark.parametrize("project", REAL)
def test_every_tool_result_keeps_its_content(project: str, tmp_path: Path) -> None:
    """ToolSearch's ``tool_reference`` blocks and other non-text blocks are kept (they were
    dropped, leaving empty tool messages); text results read as before."""
    out = _export(CC / project, tmp_path / "out")
    results = {
        b["tool_use_id"]: b.get("content")
        for r in _records(CC / project)
        if r.get("type") == "user"
        for b in (r.get("message") or {}).get("content") or []
        if isinstance(b, dict) and b.get("type") == "tool_result"
    }
    tool_messages = {
        m["tool_call_id"]: m["content"]
        for t in _rows(out, "trajectories")
        for m in t["messages"]
        if m["role"] == "tool"
    }
    for call_id, content in results.items():
        if call_id not in tool_messages:
            continue  # a result on no exported path (a replayed or cut prefix)
        if content:  # what the harness returned is in the message, whatever its blocks
            assert tool_messages[call_id], call_id
        for block in content if isinstance(content, list) else []:
            if block.get("type") == "tool_reference":
                assert block["tool_name"] in tool_messages[call_id]
            elif block.get("type") == "text":
                assert block["text"] in tool_messages[call_id]


def test_an_image_in_a_tool_result_becomes_an_image_of_the_observation(tmp_path: Path) -> None:
    png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
    sid = "7f0c1a2b-0000-4000-8000-000000000001"
    lines = [
        {"type": "user", "uuid": "u1", "parentUuid": None, "sessionId": sid,
         "timestamp": "2026-11-01T10:00:00Z", "message": {"role": "user", "content": "show me the logo"}},
        {"type": "assistant", "uuid": "a1", "parentUuid": "u1", "sessionId": sid,
         "timestamp": "2026-11-01T10:00:01Z", "message": {"role": "assistant", "model": "m", "id": "msg_1",
         "content": [{"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "logo.png"}}]}},
        {"type": "user", "uuid": "u2", "parentUuid": "a1", "sessionId": sid,
         "timestamp": "2026-11-01T10:00:02Z", "message": {"role": "user", "content": [
             {"type": "tool_result", "tool_use_id": "toolu_1", "content": [
                 {"type": "text", "text": "logo.png, 1x1"},
                 {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": png}}]}]}},
        {"type": "assistant", "uuid": "a2", "parentUuid": "u2", "sessionId": sid,
         "timestamp": "2026-11-01T10:00:03Z", "message": {"role": "assistant", "model": "m", "id": "msg_2",
         "content": [{"type": "text", "text": "A single pixel."}]}},
    ]  # fmt: skip
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / f"{sid}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    out = _export(tmp_path / "p", tmp_path / "out")
    [image] = (out / "atif" / "images").iterdir()
    [doc] = (out / "atif").glob("*.json")
    text = doc.read_text()
    assert image.name in text and "logo.png, 1x1" in text
    [observed] = [
        o
        for s in _rows(out, "steps")
        for o in s["observations"] or []
        if o["source_call_id"] == "toolu_1"
    ]
    assert "logo.png, 1x1" in observed["content"]


def test_subagents_are_linked_from_the_calls_that_spawned_them(tmp_path: Path) -> None:
    out = _export(CC / "-experiments-worktrees", tmp_path / "out")
    main = json.loads((out / "atif" / "ef958aa1-0e93-49f0-bb71-150f63befcd1.json").read_text())
    calls = {
        c["tool_call_id"]: c["function_name"]
        for s in main["steps"]
        for c in s.get("tool_calls") or []
    }
    refs = {
        r["source_call_id"]: ref["session_id"]
        for s in main["steps"]
        for r in (s.get("observation") or {}).get("results", [])
        for ref in r.get("subagent_trajectory_ref") or []
    }
    agents = {p.stem for p in (CC / "-experiments-worktrees").rglob("agent-*.jsonl")}
    assert set(refs.values()) == agents and len(agents) == 6
    assert all(calls[call] == "Agent" for call in refs)
    assert {e["session_id"] for e in main["subagent_trajectories"]} == agents


@pytest.mark.parametrize("sample", SYNTHETIC)
def test_a_rewind_is_one_fork_two_trajectories_and_a_prompt_pair(
    sample: str, tmp_path: Path
) -> None:
    [session] = read_store(CC / sample)
    assert len(session.forks()) == 1 and len(session.leaves()) == 2
    out = _export(CC / sample, tmp_path / "out")
    trajs = _rows(out, "trajectories")
    assert len(trajs) == 2
    pairs = _rows(out, "preferences")
    assert sorted(p["granularity"] for p in pairs) == ["trajectory", "turn"]
    assert {p["kind"] for p in pairs} == {"prompt"}
    chosen = next(p for p in pairs if p["granularity"] == "turn")
    assert (
        chosen["chosen"][0]["content"] == "Second attempt"
        and chosen["rejected"][0]["content"] == "First attempt"
    )
    docs = {
        json.loads(p.read_text())["trajectory_id"]: json.loads(p.read_text())
        for p in (out / "atif").glob("*.json")
    }
    compacted = [
        tid
        for tid, d in docs.items()
        if any(s["extra"].get("context_management") for s in d["steps"])
    ]
    assert compacted == [
        next(t["leaf_id"] for t in trajs if t["is_preferred"])
    ]  # on the branch that holds it


def test_preserved_messages_are_the_kept_window(tmp_path: Path) -> None:
    [session] = read_store(CC / "synthetic-rewind-preserved")
    [k] = [e for e in session.entries if e.type == "compaction"]
    assert k.parent == "b2a2:response" and k.raw["first_kept"] == "config"
    assert k.raw["claude:boundary"]["claude:preserved_from"] == "b2a"


def test_usage_is_counted_once_per_response(tmp_path: Path) -> None:
    folder = CC / "teich"
    out = _export(folder, tmp_path / "out")
    seen: dict[tuple[str, str], int] = {}
    for r in _records(folder):
        m = r.get("message") or {}
        if r.get("type") == "assistant" and isinstance(m.get("usage"), dict):
            u = m["usage"]
            total = sum(
                int(u.get(k) or 0)
                for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
            )
            seen[(str(m.get("id")), str(r.get("requestId") or ""))] = total
    [traj] = _rows(out, "trajectories")
    assert traj["total_prompt_tokens"] == sum(seen.values())


@pytest.mark.parametrize("fraction", [0.1, 0.37, 0.5, 0.93, 0.999])
def test_a_cut_session_exports_its_prefix_and_reports_the_tail(
    fraction: float, tmp_path: Path
) -> None:
    source = CC / "teich" / "example_claude_code.jsonl"
    data = source.read_bytes()
    store = tmp_path / "proj"
    store.mkdir()
    (store / source.name).write_bytes(data[: int(len(data) * fraction)])
    run = run_export([store], tmp_path / "out", ExportOptions(redact=False), RunOptions(workers=1))
    complete = data[: int(len(data) * fraction)].count(b"\n")
    [session] = read_store(store)
    assert len([e for e in session.entries if e.type != "config"]) > 0
    if data[: int(len(data) * fraction)].endswith(b"\n"):
        assert not run.errors
    else:
        [error] = run.errors
        assert error.kind == "truncated" and error.line == complete + 1


def test_convert_writes_files_that_verify(tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(
        app, ["convert", str(CC / "synthetic-rewind"), "--out", str(tmp_path / "asf")]
    )
    assert result.exit_code == 0, result.output
    assert runner.invoke(app, ["verify", str(tmp_path / "asf")]).exit_code == 0
    [session] = read_store(tmp_path / "asf")
    assert len(session.forks()) == 1


def test_current_follows_the_last_prompt_leaf(tmp_path: Path) -> None:
    store = tmp_path / "proj"
    shutil.copytree(CC / "synthetic-rewind", store)
    f = next(store.glob("*.jsonl"))
    f.write_text(
        f.read_text()
        + json.dumps(
            {
                "type": "last-prompt",
                "lastPrompt": "First attempt",
                "leafUuid": "b1a",
                "sessionId": "s1",
            }
        )
        + "\n"
    )
    [session] = read_store(store)
    assert session.current_leaf() == "b1a:response"
    out = tmp_path / "out"
    run_export(
        [store], out, ExportOptions(prefer=("current",), redact=False), RunOptions(workers=1)
    )
    [pair] = [p for p in _rows(out, "preferences") if p["granularity"] == "turn"]
    assert pair["chosen"][0]["content"] == "First attempt" and pair["policy"] == "current"


def test_the_cycle_check_of_a_long_session_is_linear() -> None:
    """The parent-cycle check walked every record's ancestors to its root: 14 s for one
    20,000-record session, minutes for a long one.  A walk now stops at a record known to
    reach a root: 200,000 records in well under a second (bound: 5 s)."""
    import time

    from trajset.pipeline.stores.uuid_tree import Record, acyclic

    ids = [f"u{i}" for i in range(200_000)]
    chain = {u: Record({}, "f", i + 1, i) for i, u in enumerate(ids)}
    parent: dict[str, str | None] = {u: ids[i - 1] if i else None for i, u in enumerate(ids)}
    parent[ids[0]] = ids[-1]  # and one cycle through all of them
    issues: list = []  # type: ignore[type-arg]
    start = time.perf_counter()
    acyclic(chain, parent, issues)
    assert time.perf_counter() - start < 5
    assert [i.line for i in issues] == [1] and parent[ids[0]] is None
