"""The ``kto`` config: unpaired rows from the pairs' sides, or from the trajectories' own pass
verdicts (``--kto-from outcomes``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from trajset.pipeline import ExportOptions, RunOptions, run_export

from .builder import SessionBuilder


def _rows(out: Path, table: str) -> list[dict[str, Any]]:
    return pq.read_table(out / "data" / table).to_pylist()


def _store(root: Path) -> Path:
    """One question answered three times (the last kept), each answer judged."""
    b = SessionBuilder("0199a1b2-0000-7000-8000-0000000000f7", hashes=False)
    ask = b.user("name a stable sort")
    for text, passed in (("bubble sort", False), ("quick sort", False), ("merge sort", True)):
        r = b.branch(ask).respond(text=text)
        b.add("outcome", kind="eval", target=r, **{"pass": passed})
    root.mkdir()
    (root / "s.jsonl").write_text(b.text())
    return root


def _completion(r: dict[str, Any]) -> tuple[str, bool]:
    return r["completion"][0]["content"], r["label"]


def test_each_side_once_chosen_true_rejected_false(tmp_path: Path) -> None:
    out = tmp_path / "out"
    run = run_export([_store(tmp_path / "s")], out, ExportOptions(), RunOptions(workers=1))
    rows = _rows(out, "kto")
    assert sorted(map(_completion, rows)) == [
        ("bubble sort", False),
        ("merge sort", True),
        ("quick sort", False),
    ]  # fmt: skip  (two pairs, two granularities: the kept answer appears in all four)
    pairs = _rows(out, "preferences")
    assert len(pairs) == 4 and run.counts["kto_rows"] == 3 and run.counts["kto_rows_shared"] == 5
    assert all(r["source"] == "pair" and r["prompt"] == pairs[0]["prompt"] for r in rows)


def test_from_outcomes_each_trajectory_labelled_by_its_own_verdict(tmp_path: Path) -> None:
    out = tmp_path / "out"
    run_export(
        [_store(tmp_path / "s")], out, ExportOptions(kto_from="outcomes"), RunOptions(workers=1)
    )
    rows = _rows(out, "kto")
    verdicts = {t["leaf_id"]: t["outcome_pass"] for t in _rows(out, "trajectories")}
    assert sorted(map(_completion, rows)) == [
        ("bubble sort", False), ("merge sort", True), ("quick sort", False)
    ]  # fmt: skip
    assert all(r["source"] == "outcome" and r["label"] == verdicts[r["leaf_id"]] for r in rows)
    assert [m["role"] for m in rows[0]["prompt"]] == ["user"]  # the context at the fork
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["options"]["kto_from"] == "outcomes"


def test_an_unknown_kto_source_is_a_usage_error(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from trajset.pipeline.cli import app

    result = CliRunner().invoke(app, ["export", "--out", str(tmp_path / "o"), "--kto-from", "x"])
    assert result.exit_code == 2 and "valid: pairs, outcomes" in result.output


def test_a_side_chosen_below_a_lost_fork_is_never_labelled_true(tmp_path: Path) -> None:
    """Answer A is regenerated (A2 kept over A1), then the question is asked again and that
    answer B kept over the whole A branch: A2 is chosen at the lower fork and rejected at
    the upper one. It gets one label, false; only the session's preferred leaf is true."""
    b = SessionBuilder("0199a1b2-0000-7000-8000-0000000000f8", hashes=False)
    root = b.user("name a stable sort")
    first = b.branch(root).respond(text="bubble sort")
    for text in ("insertion sort", "merge sort"):
        b.branch(first).user(f"and one more than {text}?")
        b.respond(text=text)
    b.branch(root).respond(text="timsort")
    store = tmp_path / "s"
    store.mkdir()
    (store / "s.jsonl").write_text(b.text())
    out = tmp_path / "out"
    run = run_export([store], out, ExportOptions(), RunOptions(workers=1))
    labels: dict[tuple[str, str], set[bool]] = {}
    for r in _rows(out, "kto"):
        labels.setdefault((r["leaf_id"], r["granularity"]), set()).add(r["label"])
    assert labels and all(len(v) == 1 for v in labels.values())
    [preferred] = [t["leaf_id"] for t in _rows(out, "trajectories") if t["is_preferred"]]
    assert {leaf for (leaf, _), v in labels.items() if True in v} == {preferred}
    assert run.counts["kto_rows_dropped_not_preferred"] >= 1
