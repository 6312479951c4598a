"""A pair's sides are what each branch said after the fork, from the tree: a branch compacted
after its fork still starts with its own first answer, never with copied context."""

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


def _summary(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "system", "content": [{"type": "input_text", "text": text}]}


def _compacted_after_the_fork() -> SessionBuilder:
    """A question answered twice; each branch goes on two turns, then is compacted (keeping
    its last turn) and answers once more."""
    b = SessionBuilder("0199a1b2-0000-7000-8000-0000000000e1", hashes=False)
    ask = b.user("Which sort is stable?")
    for name in ("merge", "tim"):
        b.branch(ask).respond(text=f"{name} sort is stable.")
        b.user(f"Why is {name} sort stable?")
        b.respond(text=f"{name} sort never swaps equal keys.")
        kept = b.user(f"Show {name} sort in Python.")
        b.respond(text=f"def {name}(xs): ...")
        b.user("Thanks, and its complexity?")
        b.add("compaction", first_kept=kept, summary=_summary(f"Talked about {name} sort."),
              config={})  # fmt: skip
        b.respond(text=f"{name} sort is O(n log n).")
    return b


@pytest.mark.parametrize("workers", [1, 2])
def test_turn_sides_are_each_branchs_first_answer(tmp_path: Path, workers: int) -> None:
    store = tmp_path / "store"
    store.mkdir()
    (store / "s.jsonl").write_text(_compacted_after_the_fork().text())
    out = tmp_path / "out"
    run_export([store], out, ExportOptions(), RunOptions(workers=workers))
    pairs = {p["granularity"]: p for p in _rows(out, "preferences")}
    turn = pairs["turn"]
    assert turn["kind"] == "response"
    assert [m["content"] for m in turn["chosen"]] == ["tim sort is stable."]
    assert [m["content"] for m in turn["rejected"]] == ["merge sort is stable."]
    whole = pairs["trajectory"]  # the branch as said: every turn once, no summary, no copy
    assert [m["content"] for m in whole["rejected"] if m["role"] == "assistant"] == [
        "merge sort is stable.", "merge sort never swaps equal keys.", "def merge(xs): ...",
        "merge sort is O(n log n).",
    ]  # fmt: skip
    assert not any("Talked about" in m["content"] for m in whole["rejected"] + whole["chosen"])


@pytest.mark.parametrize(("seed", "every"), [(11, 3), (12, 4)])
def test_no_side_of_a_compacted_corpus_begins_with_copied_context(
    tmp_path: Path, seed: int, every: int
) -> None:
    """40 generated sessions whose main line is compacted after answers were regenerated
    (88 of 152 and 62 of 188 pairs began with a user message before this was fixed)."""
    store = tmp_path / "store"
    benchmark_corpus().build_corpus(store, 40, seed=seed, compact_every=every)
    out = tmp_path / "out"
    run_export([store], out, ExportOptions(), RunOptions(workers=2))
    pairs = _rows(out, "preferences")
    assert len(pairs) > 100
    for p in pairs:  # every fork of this corpus regenerates an answer
        assert p["kind"] == "response", p["pair_id"]
        for side in (p["chosen"], p["rejected"]):
            assert side[0]["role"] == "assistant" and side[0]["trainable"], p["pair_id"]
