"""The einox reader (specs/einox.md) against the upstream golden streams and the synthetic store."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from typer.testing import CliRunner

from trajset.pipeline import (
    ExportOptions,
    Mode,
    RunOptions,
    RunSettings,
    discover,
    read_store,
    run_export,
)
from trajset.pipeline.cli import app
from trajset.pipeline.errors import SessionReadError
from trajset.pipeline.stores import detect_kind, load_unit
from trajset.pipeline.stores.einox.record import read_record
from trajset.schemas.session import Session

from .conftest import UPSTREAM, benchmark_module, shown
from .exports import data_files

build_einox_corpus = benchmark_module(
    "einox_corpus"
).build_einox_corpus  # the benchmark's einox stores

EINOX = UPSTREAM / "einox"
STORE = EINOX / "synthetic" / "data"
SOURCE, FORK, SIDE, CRASHED, PENDING = (
    "s1a2b3c4d",
    "s5e6f7a8b",
    "s9c0d1e2f",
    "s0f1e2d3c",
    "s7a8b9c0d",
)


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("einox") / "ds"
    run_export([STORE], out, ExportOptions(), RunOptions(workers=1))
    return out


def _rows(out: Path, table: str) -> list[dict[str, Any]]:
    return pl.read_parquet(out / "data" / table / "*.parquet").to_dicts()


def _loaded(store: Path = STORE, **options: str) -> list[Session | Exception]:
    """What every unit of the store's owners loads, in unit order."""
    units = [u for u in discover([store], "einox", tuple(options.items())) if u.files]
    return [x for u in units for x in load_unit(u)]


def _sessions(store: Path = STORE, **options: str) -> dict[str, Session]:
    return {s.id: s for s in _loaded(store, **options) if isinstance(s, Session)}


# --------------------------------------------------------------------------- discovery


def test_a_root_or_its_users_folder_is_detected_and_each_fork_group_is_a_unit() -> None:
    """A fork is read with its source; a side chat and unrelated sessions are units of their own."""
    assert detect_kind(STORE) == detect_kind(STORE / "users") == "einox"
    units = discover([STORE])
    assert [u.key for u in units] == [".channel-bindings", *["alice"] * 4]
    groups = [[Path(f).parent.name for f in u.files] for u in units[1:]]
    assert sorted(groups) == sorted([[SOURCE, FORK], [SIDE], [CRASHED], [PENDING]])
    assert all("users/alice#" in u.label for u in units[1:])


def test_channel_bindings_are_skipped_and_counted(exported: Path) -> None:
    manifest = json.loads((exported / "manifest.json").read_text())
    assert manifest["counts"]["units_skipped"] == 1
    assert manifest["stages"]["read"]["dropped"] == {"skipped_not_an_owner": 1}
    assert pl.read_parquet(exported / "errors.parquet").height == 0


# --------------------------------------------------------------------------- the synthetic store


def test_fork_at_merges_into_one_tree_with_one_fork_at_the_anchor() -> None:
    sessions = _sessions()
    assert set(sessions) == {SOURCE, SIDE, CRASHED, PENDING}  # the fork is a branch of its source
    tree = sessions[SOURCE]
    [fork] = tree.forks()
    anchor = tree.by_id[fork]
    assert anchor.type == "einox:event" and anchor.raw["event"] == "session_end"
    assert anchor.raw["event_id"] == 10  # the anchor named in the fork note (#10)
    children = tree.children(fork)
    assert [c.split("-")[0] for c in children] == [SOURCE, FORK]
    # The trunk is stored once: no entry of the fork repeats the shared turn.
    assert not [
        e
        for e in tree.entries
        if e.id.startswith(FORK) and e.raw.get("item", {}).get("call_id") == "call_ls1"
    ]
    assert sum(1 for s in sessions.values() for e in s.entries if e.type == "einox:session") == 5


def test_the_retried_branch_is_preferred_and_yields_a_pair(exported: Path) -> None:
    pairs = [p for p in _rows(exported, "preferences") if p["session_id"] == SOURCE]
    assert {p["granularity"] for p in pairs} == {"turn", "trajectory"}
    for p in pairs:
        assert p["chosen_leaf_id"].startswith(FORK) and p["rejected_leaf_id"].startswith(SOURCE)
        assert p["kind"] == "prompt"  # the user retried from the answer with another request
        assert "Hi" in p["chosen"][0]["content"] and "Hello" in p["rejected"][0]["content"]
        assert [m["role"] for m in p["prompt"]][:2] == ["system", "user"]
    trajs = {r["leaf_id"]: r for r in _rows(exported, "trajectories") if r["session_id"] == SOURCE}
    [abandoned] = [r for r in trajs.values() if not r["is_preferred"]]
    assert abandoned["leaf_id"].startswith(SOURCE) and abandoned["abandoned_at"]


def test_a_side_chat_is_its_own_tree_linked_to_its_parent() -> None:
    side = _sessions()[SIDE]
    assert side.header.parent_session == SOURCE and side.roots() == [side.entries[0].id]
    link = next(e for e in side.entries if e.type == "link")
    assert link.raw["rel"] == "fork_of" and link.raw["session"] == SOURCE
    inherited = [e for e in side.entries if e.raw.get("einox:inherited")]
    own_user = [
        e
        for e in side.entries
        if e.type == "item"
        and not e.raw.get("einox:inherited")
        and e.raw["item"].get("role") == "user"
    ]
    assert len(inherited) >= 8 and len(own_user) == 1  # the parent's history, then its own question


def test_crashed_and_pending_sessions_keep_their_state_in_outcomes(exported: Path) -> None:
    outcomes = {(o["session_id"], o["label"]): o for o in _rows(exported, "outcomes")}
    crashed = outcomes[(CRASHED, "error")]
    assert crashed["pass"] is False and crashed["kind"] == "task" and crashed["leaf_ids"]
    assert outcomes[(CRASHED, "server")]["pass"] is False  # the recovery error event itself
    pending = outcomes[(PENDING, "pending_approval")]
    assert pending["pass"] is None and json.loads(pending["details"])["pending_kind"] == "approval"
    trajs = {r["session_id"]: r for r in _rows(exported, "trajectories")}
    assert (
        trajs[CRASHED]["outcome_pass"] is False
        and trajs[PENDING]["outcome_label"] == "pending_approval"
    )
    held = [e for e in _sessions()[PENDING].entries if e.type == "decision"]
    assert [e.raw["verdict"] for e in held] == ["hold"] and held[0].raw["call_id"] == "call_del1"


def test_a_truncated_tool_output_is_restored_unless_the_placeholder_is_kept() -> None:
    full = (STORE / "users/alice/sessions" / PENDING / "spill/trunc/call_rc1").read_text(
        encoding="utf-8"
    )

    def output(**options: str) -> str:
        session = _sessions(**options)[PENDING]
        return next(
            e.raw["item"]["output"]
            for e in session.entries
            if e.raw.get("item", {}).get("call_id") == "call_rc1"
            and e.raw["item"]["type"] == "function_call_output"
        )

    assert output() == full and len(full) > 10_000
    assert output(keep_truncated="true").startswith("<persisted-output>")


def test_approvals_become_decisions_and_usage_follows_model_calls() -> None:
    tree = _sessions()[SOURCE]
    decisions = [e.raw for e in tree.entries if e.type == "decision"]
    assert [(d["call_id"], d["verdict"]) for d in decisions] == [
        ("call_ed1", "hold"),
        ("call_ed1", "proceed"),
    ]
    call = tree.by_id[decisions[0]["target"]]
    assert call.raw["item"]["call_id"] == "call_ed1"
    responses = [e.raw for e in tree.entries if e.type == "response" and e.id.startswith(SOURCE)]
    assert [r["usage"]["input_tokens"] for r in responses] == [812, 905, 951, 1090]
    assert all(r["model"] == "deepseek/deepseek-chat" for r in responses)


# --------------------------------------------------------------------------- golden event streams

CALL = {"index": 0, "type": "function"}
#: the history each golden scenario leaves (the streams record events only)
HISTORY: dict[str, list[dict[str, Any]]] = {
    "approval": [
        {"role": "user", "content": "写文件"},
        {"role": "assistant", "content": "", "tool_calls": [{**CALL, "id": "cw", "function": {"name": "write_tool", "arguments": "{}"}}]},
        {"role": "tool", "content": '{"ok":true}', "tool_call_id": "cw"},
        {"role": "assistant", "content": "完成"},
    ],
    "gate": [
        {"role": "user", "content": "做"},
        {"role": "assistant", "content": "已处理。"},
        {"role": "user", "content": "（质量门未过）lint 未过：残留调试打印"},
        {"role": "assistant", "content": "已处理。"},
    ],
    "subagent": [
        {"role": "user", "content": "帮我勘察"},
        {"role": "assistant", "content": "", "tool_calls": [{**CALL, "id": "c1", "function": {"name": "spawn", "arguments": '{"task":"勘察并统计"}'}}]},
        {"role": "tool", "content": "子代理结论：仓库共 3 文件", "tool_call_id": "c1"},
        {"role": "assistant", "content": "完成"},
    ],
    "compaction": [
        *[m for i in range(6) for m in ({"role": "user", "content": f"第 {i} 步"}, {"role": "assistant", "content": f"完成 {i}"})],
        {"role": "user", "content": "继续推进"},
        {"role": "assistant", "content": "已处理。"},
    ],
}  # fmt: skip


def _golden_store(tmp_path: Path, version: str, name: str) -> Path:
    """A store holding one session whose events are the golden stream (ts: one second apart)."""
    lines = (EINOX / f"golden-{version}" / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
    events = [
        {**json.loads(line), "ts": 1_788_746_400_000 + 1000 * i} for i, line in enumerate(lines)
    ]
    folder = tmp_path / "users" / "u" / "sessions" / "s00000001"
    folder.mkdir(parents=True)
    record = {
        "sid": "s00000001", "owner": "u", "task": "", "title": "", "state": "ended", "mode": "manual",
        "model": {"model": "fake/model", "effort": "off", "mode": "manual"},
        "started_at": "2026-09-07T09:59:59+08:00", "updated_at": "2026-09-07T10:05:00+08:00",
        "events": events, "summary": "", "file_changes": None, "messages": HISTORY[name],
        "pending_due": "0001-01-01T00:00:00Z",
    }  # fmt: skip
    (folder / "session.json").write_text(json.dumps(record, ensure_ascii=False), encoding="utf-8")
    if name == "compaction":
        (folder / "compact").mkdir()
        (folder / "compact" / "s00000001-state.json").write_text('{"n":1,"watermark":10}')
        (folder / "compact" / "s00000001-summary-1.md").write_text("前 10 条消息的摘要")
    return tmp_path


@pytest.mark.parametrize("version", ["latest", "v0.5"])
@pytest.mark.parametrize("name", sorted(HISTORY))
def test_golden_streams_convert_and_export(tmp_path: Path, version: str, name: str) -> None:
    store = _golden_store(tmp_path / "store", version, name)
    [session] = read_store(store)
    types = [e.type for e in session.entries]
    items = [e.raw["item"] for e in session.entries if e.type == "item"]
    assert [i.get("role") or i["type"] for i in items if i["type"] != "reasoning"][:2][0] == "user"
    assert types.count("response") == sum(1 for m in HISTORY[name] if m["role"] == "assistant")
    run = run_export([store], tmp_path / "out", ExportOptions(), RunOptions(workers=1))
    assert not run.errors and run.counts["trajectories"] == 1
    if name in ("approval", "subagent"):
        call = next(i for i in items if i["type"] == "function_call")
        output = next(i for i in items if i["type"] == "function_call_output")
        assert output["call_id"] == call["call_id"]
    if name == "approval":
        verdicts = [e.raw["verdict"] for e in session.entries if e.type == "decision"]
        assert verdicts == (["hold", "proceed"] if version == "latest" else ["hold"])
    if name == "gate":
        [gate] = [
            e for e in session.entries if e.type == "outcome" and e.raw["label"] == "quality_gate"
        ]
        assert gate.raw["kind"] == "test" and gate.raw["pass"] is False
        first_attempt = session.by_id[gate.raw["target"]]
        assert first_attempt.type == "response" and first_attempt.raw["response_id"].endswith(
            "resp1"
        )
        feedback = next(
            e for e in session.entries if e.raw.get("einox:injected") == "gate_feedback"
        )
        assert feedback.raw["visible"] is False
    if name == "compaction":
        [k] = [e for e in session.entries if e.type == "compaction"]
        kept = session.by_id[k.raw["first_kept"]]
        assert kept.raw["item"]["content"][0]["text"] == "第 5 步"
        assert (
            types.index("compaction") > types.index("item")
            and session.path(k.id)[-2].raw["item"]["content"][0]["text"] == "继续推进"
        )


# --------------------------------------------------------------------------- round trip and damage


def test_convert_then_export_equals_exporting_the_store(tmp_path: Path, exported: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["convert", str(STORE), "--out", str(tmp_path / "asf")])
    assert result.exit_code == 0, result.output
    files = sorted((tmp_path / "asf").rglob("*.jsonl"))
    assert len(files) == 4 and all(f.parent.name == "default" for f in files)
    assert runner.invoke(app, ["verify", str(tmp_path / "asf")]).exit_code == 0
    run_export([tmp_path / "asf"], tmp_path / "again", ExportOptions(), RunOptions(workers=1))
    docs = sorted(p.name for p in (exported / "atif").glob("*.json"))
    assert docs == sorted(p.name for p in (tmp_path / "again" / "atif").glob("*.json"))
    for name in docs:
        assert json.loads((exported / "atif" / name).read_text()) == json.loads(
            (tmp_path / "again" / "atif" / name).read_text()
        )
    for table in ("steps", "outcomes", "preferences"):
        assert _rows(exported, table) == _rows(tmp_path / "again", table)
    again = _rows(tmp_path / "again", "trajectories")
    assert {r["source_format"] for r in again} == {"agentsession"}
    strip = lambda rows: [{k: v for k, v in r.items() if k != "source_format"} for r in rows]  # noqa: E731
    assert strip(_rows(exported, "trajectories")) == strip(again)


@pytest.mark.parametrize("fraction", [0.0, 0.01, 0.2, 0.5, 0.77, 0.999])
@pytest.mark.parametrize("sid", [SOURCE, PENDING])
def test_a_session_cut_at_any_offset_is_an_error_and_the_rest_exports(
    tmp_path: Path, sid: str, fraction: float
) -> None:
    store = tmp_path / "data"
    shutil.copytree(STORE, store)
    path = store / "users" / "alice" / "sessions" / sid / "session.json"
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * fraction)])
    loaded = _loaded(store)
    [error] = [x for x in loaded if not isinstance(x, Session)]
    assert isinstance(error, SessionReadError) and error.source == str(path)
    exported_ids = {s.id for s in loaded if isinstance(s, Session)}
    assert exported_ids >= {SIDE, CRASHED} and sid not in exported_ids
    if sid == SOURCE:
        assert FORK in exported_ids  # the fork keeps its own copy of the trunk
        fork = next(s for s in loaded if isinstance(s, Session) and s.id == FORK)
        assert any(
            e.type == "link" and e.raw["einox:fork"]["reason"] == "source_missing"
            for e in fork.entries
        )
    run = run_export([store], tmp_path / "out", ExportOptions(), RunOptions(workers=1))
    # the owner's folder is named by its pseudonym (identity_v1), also in an error row's path
    assert [e.source for e in run.errors] == [shown(path, store).replace("/alice/", "/user_1/")]
    assert run.counts["sessions_exported"] == (4 if sid == SOURCE else 3)


def test_every_cut_of_a_record_is_a_read_error_naming_the_file(tmp_path: Path) -> None:
    data = (STORE / "users/alice/sessions" / SOURCE / "session.json").read_bytes()
    path = tmp_path / "session.json"
    for end in range(0, len(data) - 1, 16):
        path.write_bytes(data[:end])
        with pytest.raises(SessionReadError) as info:
            read_record(path)
        assert info.value.source == str(path) and info.value.rule == "bad_record"


def test_store_kind_einox_is_forced_and_other_kinds_refuse(tmp_path: Path) -> None:
    assert len(_sessions(STORE)) == 4
    runner = CliRunner()
    result = runner.invoke(app, ["inspect", str(STORE), "--store-kind", "einox"])
    assert result.exit_code == 0 and "4 sessions, 0 unreadable" in result.output


# --------------------------------------------------------------------------- the benchmark's stores


def test_the_benchmark_generator_writes_stores_the_reader_merges(tmp_path: Path) -> None:
    """``einox_corpus.py`` (the benchmark's einox stores): each regenerated turn a ForkAt
    session that merges into its source's tree as a preferred branch, spilled outputs
    restored, every document valid."""
    store, out = tmp_path / "store", tmp_path / "out"
    build_einox_corpus(store, 10, seed=2, turns=4, fork_rate=0.5, tool_output_bytes=12_000)
    files = list(store.rglob("session.json"))
    assert len(files) > 10 and list(store.rglob("spill/trunc/*"))  # forks, spilled outputs
    run = run_export([store], out, ExportOptions(), RunOptions(workers=1))
    assert run.counts["trees"] == 10 and not run.errors
    trajectories = _rows(out, "trajectories")
    assert len(trajectories) == len(files)  # one leaf per session: a fork adds one branch
    assert sum(bool(r["abandoned_at"]) for r in trajectories) == len(files) - 10
    assert _rows(out, "preferences")
    for doc in (out / "atif").glob("*.json"):
        assert "<persisted-output>" not in doc.read_text(encoding="utf-8")


def test_resume_after_adding_changing_and_removing_sessions_equals_a_fresh_export(
    tmp_path: Path,
) -> None:
    """Units are fork groups: removing a fork or changing a session re-exports its group
    alone, an added conversation is a group of its own, untouched groups are reused."""
    per_unit = RunSettings(batch_mean_units=1)  # a batch per unit: resume reuses units
    store, other, out = tmp_path / "store", tmp_path / "other", tmp_path / "out"
    build_einox_corpus(store, 6, seed=4, turns=3, fork_rate=0.5)
    build_einox_corpus(other, 1, seed=5, turns=2, fork_rate=0.0)
    keep = RunOptions(workers=1, keep_state=True, settings=per_unit)
    run_export([store], out, ExportOptions(), keep)
    groups = [u.files for u in discover([store]) if len(u.files) > 1]
    assert len(groups) >= 2  # conversations with forks
    started = lambda f: json.loads(Path(f).read_text(encoding="utf-8"))["started_at"]  # noqa: E731
    fork = Path(max(groups[0], key=started)).parent  # a fork starts after its source
    changed = Path(groups[1][0])
    shutil.rmtree(fork)
    changed.write_text(changed.read_text(encoding="utf-8").replace(" ", "  ", 1), "utf-8")
    [added] = (other / "users" / "user0" / "sessions").iterdir()
    shutil.copytree(added, store / "users" / "user0" / "sessions" / added.name)
    resume = RunOptions(workers=1, mode=Mode.resume, keep_state=True, settings=per_unit)
    run = run_export([store], out, ExportOptions(), resume)
    assert run.counts["units_reused"] == len(discover([store])) - 3  # all but these three
    run_export([store], tmp_path / "fresh", ExportOptions(), RunOptions(workers=1))
    assert data_files(out) == data_files(tmp_path / "fresh")
