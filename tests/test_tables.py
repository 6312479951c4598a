"""The dataset folder: Parquet tables, dataset card, TRL format rules, pair counts, filters."""

from __future__ import annotations

import io
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from typer.testing import CliRunner

from trajset.pipeline import (
    ExportOptions,
    RunOptions,
    RunSettings,
    export_session,
    read_store,
    run_export,
    sample_store,
)
from trajset.pipeline.cli import app
from trajset.pipeline.outputs import parquet, part_files
from trajset.pipeline.run.results import InputLog, UnitResult
from trajset.pipeline.stores import Unit, discover, fingerprint
from trajset.pipeline.tables import CONFIGS, SCHEMAS, preferences
from trajset.pipeline.tables.messages import step_messages
from trajset.schemas.columns import COMMON, OWN

from .strategies import sessions

ROLES = {"system", "user", "assistant", "tool"}


@pytest.fixture(scope="module")
def exported(sample_export: Path) -> Path:
    return sample_export


def _rows(out: Path, table: str) -> list[dict[str, Any]]:
    return pl.read_parquet(out / "data" / table / "*.parquet").to_dicts()


def test_load_dataset_offline_gives_exactly_the_declared_columns(
    exported: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    from datasets import get_dataset_config_names, load_dataset

    assert sorted(get_dataset_config_names(str(exported))) == sorted(CONFIGS)
    for name in CONFIGS:
        ds = load_dataset(str(exported), name, split="train", cache_dir=str(tmp_path / "cache"))
        assert ds.column_names == SCHEMAS[name].names
        assert ds.num_rows == pl.read_parquet(exported / "data" / name / "*.parquet").height


def test_polars_reads_every_table_and_errors_has_its_schema(exported: Path) -> None:
    for name in CONFIGS:
        assert (
            pl.read_parquet(exported / "data" / name / "*.parquet").columns == SCHEMAS[name].names
        )
    errors = pl.read_parquet(exported / "errors.parquet")
    assert errors.columns == SCHEMAS["errors"].names
    assert errors["kind"].to_list() == ["truncated"] and errors["line"].to_list() == [7]


def test_parquet_is_written_as_datasets_writes_it(exported: Path) -> None:
    for f in (exported / "data").rglob("*.parquet"):
        md = pq.ParquetFile(f).metadata
        assert f.name.startswith("train-") and f.name.endswith("-of-00001.parquet")
        for i in range(md.num_row_groups):
            assert md.row_group(i).column(0).compression == "ZSTD"
            assert md.row_group(i).total_byte_size <= 100 * 1000 * 1000
        assert md.row_group(0).column(0).has_offset_index  # page index written


def _check_messages(messages: list[dict[str, Any]]) -> None:
    """TRL's conversational rules: dicts with a role, OpenAI tool-call shape, tool replies answer a call."""
    assert isinstance(messages, list) and messages and "role" in messages[0]
    calls: dict[str, str] = {}
    for m in messages:
        assert m["role"] in ROLES and isinstance(m["content"], str)
        for tc in m["tool_calls"] or []:
            assert m["role"] == "assistant"
            assert tc["type"] == "function" and tc["id"] and tc["function"]["name"]
            assert isinstance(json.loads(tc["function"]["arguments"]), dict)
            calls[tc["id"]] = tc["function"]["name"]
        if m["role"] == "tool":
            assert m["tool_call_id"] in calls and m["name"] == calls[m["tool_call_id"]]
        if m["role"] != "assistant":
            assert m["trainable"] is False and m["reasoning_content"] is None


def test_trajectory_messages_follow_trl_rules(exported: Path) -> None:
    rows = _rows(exported, "trajectories")
    assert len(rows) == 8
    for r in rows:
        _check_messages(r["messages"])
        assert any(m["role"] == "assistant" for m in r["messages"])
        tools = json.loads(r["tools"])
        assert all(t["type"] == "function" and "name" in t["function"] for t in tools)
    first = next(r for r in rows if r["session_id"].endswith("a001") and r["is_main"])
    assert first["messages"][0] == {
        "role": "system",
        "content": "You are a careful coding agent. Run tests before answering.",
        "tool_calls": None,
        "tool_call_id": None,
        "name": None,
        "reasoning_content": None,
        "trainable": False,
    }


def test_preference_rows_follow_trl_rules(exported: Path) -> None:
    pairs = _rows(exported, "preferences")
    assert {(p["kind"], p["granularity"]) for p in pairs} == {
        ("response", "turn"),
        ("response", "trajectory"),
        ("prompt", "turn"),
        ("prompt", "trajectory"),
    }
    for p in pairs:
        for side in ("prompt", "chosen", "rejected"):
            _check_messages(p[side])
        n = len(p["prompt"])
        # Explicit prompt: the prompt is not repeated inside chosen/rejected.
        assert p["chosen"][:n] != p["prompt"] and p["rejected"][:n] != p["prompt"]
        assert p["chosen"] != p["rejected"]
        if p["kind"] == "response":
            assert p["chosen"][0]["role"] == p["rejected"][0]["role"] == "assistant"
        assert p["margin"] == p["chosen_score"] - p["rejected_score"]


def test_pair_count_formula_and_references_on_the_sample_store(exported: Path) -> None:
    manifest = json.loads((exported / "manifest.json").read_text())
    sessions = read_store(sample_store())
    expected = sum((len(s.children(f)) - 1) * 2 for s in sessions for f in s.forks())
    c = manifest["counts"]
    pairs = _rows(exported, "preferences")
    assert (
        len(pairs)
        == c["pairs"]
        == expected
        - sum(c.get(f"pairs_dropped_{r}", 0) for r in ("identical", "empty_side", "unexported"))
    )
    leaves = {(r["session_id"], r["leaf_id"]) for r in _rows(exported, "trajectories")}
    for p in pairs:
        assert (p["session_id"], p["chosen_leaf_id"]) in leaves and (
            p["session_id"],
            p["rejected_leaf_id"],
        ) in leaves
    for o in _rows(exported, "outcomes"):
        assert o["leaf_ids"] and all((o["session_id"], leaf) in leaves for leaf in o["leaf_ids"])


def test_manifest_lists_every_input_and_its_spool_is_gone(exported: Path) -> None:
    inputs = json.loads((exported / "manifest.json").read_text())["inputs"]
    units = discover([sample_store()])
    # each from its store's name on, with the names of the people in it numbered
    shown = [re.sub(r"-dana-", "-user_N-", u.label.split("pipeline/", 1)[1]) for u in units]
    assert [re.sub(r"-user_\d+-", "-user_N-", i["source"]) for i in inputs] == shown
    assert [(i["sha256"], i["bytes"]) for i in inputs] == [fingerprint(u) for u in units]
    assert not list(exported.rglob("inputs.jsonl"))


@pytest.mark.parametrize("n", [0, 1, 3])
def test_spooled_inputs_dump_as_the_list_they_hold(tmp_path: Path, n: int) -> None:
    log = InputLog(tmp_path / "inputs.jsonl", str.upper)
    for i in range(n):
        ids = [f"s-{i}-{k}" for k in range(i)]
        log.add(
            UnitResult(Unit("agentsession", (f"/s/{i}.jsonl",)), ids, fingerprint="f", bytes_read=i)
        )
    doc = {"a": "ü", "inputs": log, "z": [1]}
    streamed = io.StringIO()
    json.dump(doc, streamed, indent=2, ensure_ascii=False)
    spool = tmp_path / "inputs.jsonl"
    plain = [json.loads(line) for line in spool.read_text().splitlines()] if n else []
    assert streamed.getvalue() == json.dumps(doc | {"inputs": plain}, indent=2, ensure_ascii=False)
    assert [e["source"] for e in plain] == [f"/S/{i}.JSONL" for i in range(n)]
    assert [("session_id" in e, len(e.get("session_ids", []))) for e in plain][2:] == [
        (False, 2)
    ] * (n == 3)


@settings(max_examples=40, deadline=None)
@given(sessions())
def test_pair_count_formula_on_generated_trees(b) -> None:  # type: ignore[no-untyped-def]
    s = b.session()
    export = export_session(s, ExportOptions(redact=False))
    stats: Counter[str] = Counter()
    rows = preferences.rows(export, stats)
    expected = sum((len(s.children(f)) - 1) * 2 for f in s.forks())
    reasons = ("identical", "empty_side", "unexported", "tied", "no_answer", "empty_prompt")
    dropped = sum(stats[f"pairs_dropped_{r}"] for r in reasons)
    assert len(rows) == stats["pairs"] == expected - dropped
    if len(export.kept) == len(export.source.trajectories):  # a leaf with no step has no document
        assert stats["pairs_dropped_unexported"] == 0
    leaves = {t.trajectory.leaf_id for t in export.kept}
    assert all(r["chosen_leaf_id"] in leaves and r["rejected_leaf_id"] in leaves for r in rows)
    assert len({r["pair_id"] for r in rows}) == len(rows)


def test_copied_context_is_context_but_not_trainable(exported: Path) -> None:
    rows = _rows(exported, "trajectories")
    compacted = next(r for r in rows if r["session_id"].endswith("a003"))
    steps = [s for s in _rows(exported, "steps") if s["session_id"].endswith("a003")]
    assert any(s["is_copied_context"] for s in steps)
    assistants = [m for m in compacted["messages"] if m["role"] == "assistant"]
    assert [m["trainable"] for m in assistants] == [False, True]


def test_where_keeps_matching_trajectories_and_their_documents(tmp_path: Path) -> None:
    out = tmp_path / "o"
    run = run_export(
        [sample_store()], out, ExportOptions(where="outcome_score >= 0.5"), RunOptions(workers=1)
    )
    rows = _rows(out, "trajectories")
    assert rows and all(r["outcome_score"] >= 0.5 for r in rows)
    assert run.counts["trajectories_filtered_out"] == 8 - len(rows)
    docs = {p.name for p in (out / "atif").glob("*.json")}
    assert docs == {Path(r["atif_path"]).name for r in rows}
    kept = {(r["session_id"], r["leaf_id"]) for r in rows}
    assert {(s["session_id"], s["leaf_id"]) for s in _rows(out, "steps")} == kept
    for p in _rows(out, "preferences"):
        assert (p["session_id"], p["rejected_leaf_id"]) in kept


def test_bad_where_is_a_usage_error(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(app, ["export", "--out", str(tmp_path / "o"), "--where", "reward > 1"])
    assert result.exit_code == 2 and "outcome_score" in result.output
    assert not (tmp_path / "o").exists()


def test_validate_checks_tables_and_card(exported: Path, tmp_path: Path, runner: CliRunner) -> None:
    import shutil

    assert runner.invoke(app, ["validate", str(exported)]).exit_code == 0
    broken = tmp_path / "broken"
    shutil.copytree(exported, broken)
    card = broken / "README.md"
    card.write_text(
        card.read_text().replace("path: data/steps/train-*.parquet", "path: data/stepz/*.parquet")
    )
    pl.DataFrame({"x": [1]}).write_parquet(
        broken / "data" / "outcomes" / "train-00000-of-00001.parquet"
    )
    result = runner.invoke(app, ["validate", str(broken)])
    assert result.exit_code == 1
    assert "config steps points at data/stepz" in result.output
    assert "schema differs from the declared outcomes schema" in result.output


@pytest.mark.parametrize("name", [*CONFIGS, "errors"])
def test_schema_command_prints_the_declared_schema(runner: CliRunner, name: str) -> None:
    result = runner.invoke(app, ["schema", name])
    assert result.exit_code == 0
    columns = json.loads(result.output)
    assert [c["name"] for c in columns] == SCHEMAS[name].names
    assert all(c["description"] for c in columns), [c["name"] for c in columns]


def test_every_column_meaning_names_a_declared_column() -> None:
    """``schemas.columns`` holds no meaning of a column that is gone or never was."""
    declared = {n: set(s.names) for n, s in SCHEMAS.items()}
    assert set(OWN) <= set(declared)
    stale = {(t, c) for t, own in OWN.items() for c in own if c not in declared[t]}
    stale |= {("*", c) for c in COMMON if not any(c in names for names in declared.values())}
    assert not stale


def test_deterministic_dispatch_steps_are_not_trainable() -> None:
    step = {
        "step_id": 1,
        "source": "agent",
        "message": "",
        "llm_call_count": 0,
        "tool_calls": [{"tool_call_id": "c1", "function_name": "ls", "arguments": {}}],
        "observation": {"results": [{"source_call_id": "c1", "content": "a.txt"}]},
        "extra": {"agentsession": {"entry_id": "x"}},
    }
    assistant, tool = step_messages(step)
    assert assistant["trainable"] is False and tool["role"] == "tool" and tool["name"] == "ls"
    assert step_messages({**step, "llm_call_count": 1})[0]["trainable"] is True
    assert (
        step_messages({**step, "llm_call_count": 1, "is_copied_context": True})[0]["trainable"]
        is False
    )


def test_shards_split_at_the_byte_cap_and_small_tables_stay_one_shard(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    per_unit = RunSettings(part_input_bytes=1)  # a part per unit
    run_export(
        [sample_store()], out, ExportOptions(),
        RunOptions(workers=1, keep_state=True, settings=per_unit),
    )  # fmt: skip
    parts = sorted((out / ".trajset" / "parts" / "steps").glob("*.arrow"))
    assert len(parts) > 2
    assert len(list((out / "data" / "steps").glob("*.parquet"))) == 1
    rows = pq.read_table(out / "data" / "steps").num_rows
    facts = [part_files.part_facts(p) for p in parts]
    small = RunSettings(shard_bytes=4000)  # below the parts' total: split
    assert sum(s for _, s in facts) > 4000
    plan = parquet.ShardPlan(tmp_path / "again", "steps", small)
    for part, (n, size) in zip(parts, facts, strict=True):
        plan.add(part, n, size)
    written = [task.path for task in plan.tasks()]
    for task in plan.tasks():  # each shard holds exactly its parts' rows, read back by value
        parquet.write_shard(task)
        expected_rows = pa.concat_tables([part_files.read_part(p) for p, _, _ in task.parts])
        expected = [{**r, "split": "train"} for r in expected_rows.to_pylist()]  # set when written
        assert pq.read_table(task.path).to_pylist() == expected
    split = pa.concat_tables([pq.read_table(p) for p in written])
    stamped = pq.read_table(out / "data" / "steps")  # the run stamps its rule set's version
    assert set(stamped.column("redaction_version").to_pylist()) == {
        ExportOptions().redaction_version()
    }
    unstamped = ["redaction_version"]
    assert (
        split.drop_columns(unstamped).to_pylist() == stamped.drop_columns(unstamped).to_pylist()
    )  # same rows, order
    assert [p.name for p in written] == [
        f"train-{i:05d}-of-{len(written):05d}.parquet" for i in range(len(written))
    ]
    assert sum(pq.read_metadata(p).num_rows for p in written) == rows
    # greedy, in order: each shard holds the parts that fit before the next would pass the cap
    expected, acc = [0], 0  # rows per shard
    for n, s in facts:
        if acc and acc + s > 4000:
            expected.append(0)
            acc = 0
        expected[-1] += n
        acc += s
    assert [pq.read_metadata(p).num_rows for p in written] == expected and len(expected) > 1
    assert not list((tmp_path / "again" / "data" / "steps").glob(".*"))  # no temporary left
