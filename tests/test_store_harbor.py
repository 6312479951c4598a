"""The Harbor reader against its fixtures (specs/harbor-jobs.md).

The expectations are those of ``tests/data/upstream/harbor-jobs/SOURCE.md``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from trajset.pipeline import ExportOptions, RunOptions, read_store, run_export
from trajset.pipeline.outputs.scores import pass_at_k
from trajset.pipeline.report import render, report_data
from trajset.pipeline.stores import detect_kind, discover
from trajset.pipeline.stores.harbor.units import Group

from .conftest import UPSTREAM

HARBOR = UPSTREAM / "harbor-jobs"
TERMINUS = HARBOR / "golden-terminus-2" / "jobs" / "2025-12-30__10-00-00"
CLAUDE = HARBOR / "synthetic-claude-code" / "jobs" / "2026-01-20__08-00-00"


def _export(store: Path, out: Path) -> tuple[list[dict], list[dict], list[dict], object]:
    run = run_export([store], out, ExportOptions(prefer=("score",)), RunOptions(workers=1))
    read = lambda name: pq.read_table(out / "data" / name).to_pylist()  # noqa: E731
    return read("trajectories"), read("preferences"), read("outcomes"), run


def test_detection_and_units() -> None:
    for path in (HARBOR, TERMINUS.parent, TERMINUS, TERMINUS / "hello-world__GcS7m2Q"):
        assert detect_kind(path) == "harbor", path
    assert [Path(u.name).parent.name for u in discover([HARBOR])] == [
        "2025-12-30__11-30-00",
        "2025-12-30__10-00-00",
        "2026-01-20__08-00-00",
    ]  # by path: golden-openhands, golden-terminus-2, synthetic-claude-code


def test_the_fixture_folder_gives_the_trees_outcomes_and_pairs_its_notes_state(
    tmp_path: Path,
) -> None:
    trajs, pairs, outcomes, run = _export(HARBOR, tmp_path / "out")
    assert run.errors == []
    assert len(trajs) == 12  # 9 trials with a trajectory, 3 subagent sessions
    agents = sorted(t["agent_name"] for t in trajs if not t["agent_name"].startswith("terminus-2-"))
    assert agents == ["claude-code"] * 3 + ["openhands"] * 2 + ["terminus-2"] * 4
    assert len(outcomes) == 8
    preferred = {
        t["leaf_id"].split("/")[0] for t in trajs if t["is_preferred"] and t["outcome_label"]
    }
    assert preferred == {"hello-world__GcS7m2Q", "hello-world__Nf8kQ4z", "word-freq__J8kd2Lm"}
    by_fork: dict[str, list[dict]] = {}
    for p in pairs:
        by_fork.setdefault(p["fork_entry_id"], []).append(p)
    kinds = {
        f: ({p["kind"] for p in ps}, {p["policy"] for p in ps}, len(ps))
        for f, ps in by_fork.items()
    }
    assert kinds == {
        # the prompt; three trials tied at 1.0 (the latest preferred, no pair between them)
        # and the 0.0 one
        "hello-world__Tm6wP5d/s1": ({"response"}, {"latest"}, 2),
        "word-freq__e9WmK4p/s1": ({"response"}, {"score"}, 4),
    }  # the two OpenHands trials were given other instructions: no prompt both answer
    counts = json.loads((tmp_path / "out" / "manifest.json").read_text())["counts"]
    assert (counts["pairs_dropped_tied"], counts["pairs_dropped_empty_prompt"]) == (4, 2)
    scores = {o["entry_id"].split("/")[0]: (o["score"], o["pass"]) for o in outcomes}
    assert scores["word-freq__J8kd2Lm"] == (1.0, True)  # the single key, not named reward
    assert scores["word-freq__r5TnV3c"] == (0.25, False)
    assert scores["hello-world__Fc2hN7w"] == (0.5, False)
    assert "word-freq__e9WmK4p" not in scores  # still running: no outcome
    assert "word-freq__Y2bq7Hs" not in {t["leaf_id"].split("/")[0] for t in trajs}
    details = json.loads(next(o["details"] for o in outcomes if "Fc2hN7w" in o["entry_id"]))
    assert details["rewards"] == {"reward": 0.5, "file_exists": 1.0, "exact_content": 0.0}
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert "pass@1" in (tmp_path / "out" / "README.md").read_text()
    counts = manifest["counts"]
    assert counts["forks"] == 3  # one per task tree; the subagent sessions are linear
    assert counts["reader/harbor/trials"] == 10
    assert counts["reader/harbor/trials_without_trajectory"] == 1  # the sandbox failure
    assert counts["reader/harbor/trials_incomplete"] == 1
    assert counts["reader/harbor/subagent_refs_dangling"] == 3  # Lh4nR8x's, kept as links
    running = [
        e.raw["harbor:trial"]
        for s in read_store(CLAUDE)
        for e in s.entries
        if e.raw.get("ns") == "harbor:trial"
    ]
    assert [(t["name"], t["incomplete"]) for t in running] == [("word-freq__e9WmK4p", True)]


def test_under_score_no_pair_prefers_a_lower_reward(tmp_path: Path) -> None:
    _, pairs, _, _ = _export(HARBOR, tmp_path / "out")
    for p in pairs:
        c, r = p["chosen_score"], p["rejected_score"]
        assert c is not None
        assert r is None or c > r, p["pair_id"]  # equal scores make no pair


def _trial(job: Path, src: str, name: str, reward: object, started: str) -> None:
    dest = shutil.copytree(CLAUDE / src, job / name)
    res = json.loads((dest / "result.json").read_text())
    res |= {"trial_name": name, "id": name, "started_at": started}
    res["verifier_result"] = {"rewards": {"reward": reward}}
    (dest / "result.json").write_text(json.dumps(res))
    lock = json.loads((dest / "lock.json").read_text())
    (dest / "lock.json").write_text(json.dumps(lock))


def test_a_tie_at_the_top_prefers_a_tied_trial_never_the_lower_one(tmp_path: Path) -> None:
    job = tmp_path / "jobs" / "tie"
    job.mkdir(parents=True)
    _trial(job, "word-freq__J8kd2Lm", "word-freq__a", 1.0, "2026-01-20T08:00:00Z")
    _trial(job, "word-freq__r5TnV3c", "word-freq__b", 1.0, "2026-01-20T08:00:01Z")
    _trial(job, "word-freq__J8kd2Lm", "word-freq__c", 0.0, "2026-01-20T08:00:02Z")  # latest
    trajs, pairs, _, _ = _export(job, tmp_path / "out")
    [best] = [t for t in trajs if t["is_preferred"]]
    assert best["outcome_score"] == 1.0
    # the two at 1.0 make no pair; the 0.0 trial said what the preferred one said (the same
    # trajectory, another reward): no pair either
    counts = json.loads((tmp_path / "out" / "manifest.json").read_text())["counts"]
    assert not pairs and counts["pairs_dropped_tied"] == counts["pairs_dropped_identical"] == 2


@pytest.mark.parametrize("reward", [float("nan"), float("inf"), "high"])
def test_a_reward_that_is_no_finite_number_is_a_field_problem(
    reward: object, tmp_path: Path
) -> None:
    """A reward Harbor would not have written (``NaN``, ``Infinity``, a string) was left out
    silently; now it is an ``out_of_range`` row, and the trial exports ungraded."""
    job = tmp_path / "jobs" / "odd"
    job.mkdir(parents=True)
    _trial(job, "word-freq__J8kd2Lm", "word-freq__a", reward, "2026-01-20T08:00:00Z")
    trajs, _, _, run = _export(job, tmp_path / "out")
    [row] = [e for e in run.errors if e.kind == "out_of_range"]
    assert row.source.endswith("word-freq__a/result.json")
    assert f"verifier_result.rewards.reward: {reward!r} is not a finite score" in row.message
    assert trajs and all(t["outcome_score"] is None for t in trajs)


def test_a_truncated_trajectory_is_one_error_row_and_the_others_export(tmp_path: Path) -> None:
    job = shutil.copytree(TERMINUS, tmp_path / "job")
    cut = job / "hello-world__Ij9vT3k" / "agent" / "trajectory.json"
    cut.write_bytes(cut.read_bytes()[:3000])
    trajs, _, _, run = _export(job, tmp_path / "out")
    assert [(Path(e.source).name, e.kind) for e in run.errors] == [("trajectory.json", "truncated")]
    assert "Ij9vT3k" in run.errors[0].source
    assert len([t for t in trajs if t["outcome_label"]]) == 3


def test_usage_is_per_step_never_the_documents_totals(tmp_path: Path) -> None:
    trajs, _, _, _ = _export(TERMINUS, tmp_path / "out")
    tokens = {t["leaf_id"].split("/")[0]: t["total_prompt_tokens"] for t in trajs}
    assert tokens["hello-world__Lh4nR8x"] == 2252 + 4250  # the cont-1 snapshot says 7802
    assert tokens["hello-world__GcS7m2Q"] == 6502  # its subagents count in their own sessions


def _harbors(n: int, c: int, k: int) -> float:
    """``harbor@0.25.0:utils/pass_at_k.py`` ``_pass_at_k_for_task``, as written there (its
    module imports models that need Python 3.12, so it is not imported here)."""
    if n - c < k:
        return 1.0
    product = 1.0
    for i in range(k):
        product *= (n - c - i) / (n - i)
    return 1.0 - product


@pytest.mark.parametrize("n,c", [(4, 0), (4, 1), (4, 3), (5, 2), (8, 8), (10, 1)])
def test_pass_at_k_is_harbors(n: int, c: int) -> None:
    for k in range(1, n + 1):
        assert pass_at_k(n, c, k) == pytest.approx(_harbors(n, c, k))


def test_a_unit_is_one_group_and_the_jobs_own_files_are_reported_once(tmp_path: Path) -> None:
    job = shutil.copytree(TERMINUS, tmp_path / "job")
    for trial in ("word-freq__J8kd2Lm", "word-freq__r5TnV3c"):
        shutil.copytree(CLAUDE / trial, job / trial)
    shutil.copytree(CLAUDE / "word-freq__J8kd2Lm", job / "broken__Aa1")
    (job / "broken__Aa1" / "lock.json").write_text('{"task": ')
    (job / "result.json").write_text('{"id": "cut short')
    units = discover([job])
    assert [len(Group.of(u.key).trials) for u in units] == [4 + 1, 2]  # by task; the broken first
    assert [Group.of(u.key).first for u in units] == [True, False]
    trajs, _, _, run = _export(job, tmp_path / "out")
    assert sorted((Path(e.source).name, e.kind) for e in run.errors) == [
        ("lock.json", "truncated"),
        ("result.json", "truncated"),
    ]
    assert len([t for t in trajs if t["outcome_label"]]) == 6
    counts = json.loads((tmp_path / "out" / "manifest.json").read_text())["counts"]
    assert counts["reader/harbor/trials"] == 6 and counts["reader/harbor/trials_unreadable"] == 1


def test_the_report_shows_each_tasks_score_distribution_and_pass_at_k(tmp_path: Path) -> None:
    _export(HARBOR, tmp_path / "out")
    data = report_data(tmp_path / "out")
    tasks = {(t["name"], t["agent"]): t for t in data["tasks"]}
    terminus = tasks[("hello-world", "terminus-2 (openai/gpt-4o)")]
    assert terminus["distribution"] == [[0.0, 1], [1.0, 3]]
    assert terminus["pass_at_k"] == pytest.approx({str(k): _harbors(4, 3, k) for k in (1, 2, 4)})
    assert tasks[("hello-world", "openhands (openai/gpt-4o)")]["pass_at_k"] == {}  # 0.5: no pass@k
    claude = tasks[("word-freq", "claude-code (claude-sonnet-4-5)")]
    assert (claude["attempts"], claude["distribution"]) == (2, [[0.25, 1], [1.0, 1]])
    page = render(data)
    assert "0 ×1 · 1 ×3" in page and "Mean outcome score per task" in page


def test_by_default_a_task_prefers_its_best_rewarded_trial(tmp_path: Path) -> None:
    """Harbor's own preference signal is the verifier's reward (``HarborReader.prefer``):
    without ``--prefer`` each task's ``sft`` row is its best trial, no pair prefers a lower
    or equal reward, and KTO labels no reward-0 trial true; each trial, one label."""
    run_export([HARBOR], tmp_path / "out", ExportOptions(), RunOptions(workers=1))
    read = lambda name: pq.read_table(tmp_path / "out" / "data" / name).to_pylist()  # noqa: E731
    trajs, pairs, kto = read("trajectories"), read("preferences"), read("kto")
    score = {t["leaf_id"]: t["outcome_score"] for t in trajs}
    for task in {t["session_id"] for t in trajs if t["outcome_score"] is not None}:
        mine = [t for t in trajs if t["session_id"] == task]
        [best] = [t for t in mine if t["is_preferred"]]
        assert best["outcome_score"] == max(t["outcome_score"] or 0 for t in mine), task
    assert pairs and all(p["chosen_score"] > (p["rejected_score"] or 0) for p in pairs)
    labels: dict[tuple[str, str], set[bool]] = {}
    for k in kto:
        labels.setdefault((k["leaf_id"], k["granularity"]), set()).add(k["label"])
    assert all(len(v) == 1 for v in labels.values())
    assert not [k for k in kto if k["label"] and score[k["leaf_id"]] == 0.0]
