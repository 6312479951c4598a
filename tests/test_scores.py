"""One meaning of a score: a trajectory's judges its own part (below its last fork), a pair's
sides are judged by their own branches, and ``--prefer score`` never prefers a lower one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from trajset.pipeline import ExportOptions, RunOptions, run_export

from .builder import SessionBuilder
from .conftest import benchmark_corpus


def _rows(out: Path, table: str) -> list[dict[str, Any]]:
    return pq.read_table(out / "data" / table).to_pylist()


def _export(tmp_path: Path, b: SessionBuilder, *prefer: str) -> Path:
    store = tmp_path / "store"
    store.mkdir()
    (store / "s.jsonl").write_text(b.text())
    out = tmp_path / "out"
    run_export([store], out, ExportOptions(prefer=list(prefer) or ["latest"]), RunOptions())
    return out


def test_each_trajectory_is_scored_by_its_own_branch(tmp_path: Path) -> None:
    """A trunk answer scored 0.9, then a fork: one branch scored 0.2, one not scored, and a
    third with a session outcome appended at its end (located at itself).  No branch takes
    the trunk's 0.9; the unscored one has no score."""
    b = SessionBuilder("0199a1b2-0000-7000-8000-0000000000d1", hashes=False)
    b.user("write the parser")
    trunk = b.respond(text="Here is the parser.")
    b.add("outcome", kind="eval", target=trunk, score=0.9, **{"pass": True})
    fork = b.user("now add tests")
    low = b.respond(text="Tests: none needed.")
    b.add("outcome", kind="eval", target=low, score=0.2, **{"pass": False}, label="judge")
    b.branch(fork).respond(text="Added three tests.")
    b.branch(fork).respond(text="Added a property test.")
    b.add("outcome", kind="test", score=1.0, **{"pass": True})
    out = _export(tmp_path, b)
    got = {
        next(m["content"] for m in t["messages"][::-1] if m["role"] == "assistant"): (
            t["outcome_score"],
            t["outcome_pass"],
            t["outcome_label"],
        )
        for t in _rows(out, "trajectories")
    }
    assert got == {
        "Tests: none needed.": (0.2, False, "judge"),
        "Added three tests.": (None, None, None),
        "Added a property test.": (1.0, True, None),
    }


def test_a_session_without_forks_takes_every_outcome_on_its_path(tmp_path: Path) -> None:
    b = SessionBuilder("0199a1b2-0000-7000-8000-0000000000d2", hashes=False)
    b.user("hi")
    r = b.respond(text="hello")
    b.add("outcome", kind="feedback", target=r, score=1.0, label="thumbs_up")
    b.user("bye")
    b.respond(text="bye")
    (t,) = _rows(_export(tmp_path, b), "trajectories")
    assert (t["outcome_score"], t["outcome_label"]) == (1.0, "thumbs_up")


def test_a_tie_at_the_top_is_decided_among_the_tied_branches(tmp_path: Path) -> None:
    """Three answers: 1.0, 1.0 and 0.0, the 0.0 one appended last.  ``latest`` would take
    it; ``score`` ties the two 1.0 ones, and ``latest`` decides between those only."""
    b = SessionBuilder("0199a1b2-0000-7000-8000-0000000000d3", hashes=False)
    ask = b.user("pick a name")
    for text, score in (("first", 1.0), ("second", 1.0), ("third", 0.0)):
        r = b.branch(ask).respond(text=text)
        b.add("outcome", kind="eval", target=r, score=score)
    out = _export(tmp_path, b, "score")
    (preferred,) = [t for t in _rows(out, "trajectories") if t["is_preferred"]]
    assert preferred["messages"][-1]["content"] == "second"
    pairs = _rows(out, "preferences")
    assert pairs and all(p["policy"] == "latest" for p in pairs)
    assert all(p["chosen_score"] == 1.0 for p in pairs)


def test_under_score_no_chosen_side_scores_below_its_rejected_side(tmp_path: Path) -> None:
    """The generated store of 400 scored outcomes (50 sessions of 8 scored turns, answers
    regenerated): by the pairs' scores and by their trajectories' own scores."""
    store = tmp_path / "store"
    benchmark_corpus().build_corpus(store, 50, seed=7)
    out = tmp_path / "out"
    run_export([store], out, ExportOptions(prefer=["score"]), RunOptions(workers=2))
    pairs = _rows(out, "preferences")
    assert len(pairs) > 100
    for p in pairs:
        if p["rejected_score"] is not None:
            assert p["chosen_score"] is not None and p["chosen_score"] >= p["rejected_score"]
            assert p["margin"] >= 0
    score = {
        (t["session_id"], t["leaf_id"]): t["outcome_score"] for t in _rows(out, "trajectories")
    }
    inverted = [
        p for p in pairs
        if (rs := score[(p["session_id"], p["rejected_leaf_id"])]) is not None
        and (cs := score[(p["session_id"], p["chosen_leaf_id"])]) is not None and cs < rs
    ]  # fmt: skip
    assert inverted == []
    # the regenerated answers carry no score of their own; none inherits the trunk's
    rejected = {(p["session_id"], p["rejected_leaf_id"]) for p in pairs}
    assert all(score[k] is None for k in rejected)


@pytest.mark.parametrize("policy", ["label:kept"])
def test_a_label_tie_is_decided_among_the_labelled_branches(tmp_path: Path, policy: str) -> None:
    b = SessionBuilder("0199a1b2-0000-7000-8000-0000000000d4", hashes=False)
    ask = b.user("pick a name")
    first = b.branch(ask).respond(text="first")
    second = b.branch(ask).respond(text="second")
    b.branch(ask).respond(text="third")
    b.add("label", target=first, label="kept")
    b.add("label", target=second, label="kept")
    out = _export(tmp_path, b, policy)
    (preferred,) = [t for t in _rows(out, "trajectories") if t["is_preferred"]]
    assert preferred["messages"][-1]["content"] == "second"
