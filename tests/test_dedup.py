"""``--dedup``: rows and pairs a store holds twice (copied sessions, copies continued, near
copies) are written once, listed in the manifest, and not counted in the redaction audit."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from trajset.pipeline import ExportOptions, RunOptions, run_export, sample_store
from trajset.redactors import count_placeholders

from .builder import SessionBuilder


def _rows(out: Path, table: str) -> list[dict[str, Any]]:
    return pq.read_table(out / "data" / table).to_pylist()


def _conversation(session_id: str, turns: int) -> str:
    b = SessionBuilder(session_id, hashes=False)
    for i in range(turns):
        b.user(f"step {i}: what comes after {i}?")
        b.respond(text=f"{i + 1} comes after {i}.", usage=(5, 3, 0))
    return b.text()


def _dedup_store(root: Path) -> Path:
    """One conversation, the same copied under another id, and a copy continued two turns."""
    root.mkdir()
    (root / "a.jsonl").write_text(_conversation("0199a1b2-0000-7000-8000-0000000000a1", 3))
    (root / "b.jsonl").write_text(_conversation("0199a1b2-0000-7000-8000-0000000000b2", 3))
    (root / "c.jsonl").write_text(_conversation("0199a1b2-0000-7000-8000-0000000000c3", 5))
    (root / "d.jsonl").write_text(_conversation("0199a1b2-0000-7000-8000-0000000000d4", 2))
    return root


@pytest.mark.parametrize("workers", [1, 2])
def test_a_copied_history_appears_once_in_sft(tmp_path: Path, workers: int) -> None:
    """a and b are the same conversation, c continues it, d is its first two turns: only c's
    row remains, and every answer of the four is trainable in it exactly once."""
    store = _dedup_store(tmp_path / "store")
    out = tmp_path / "out"
    run = run_export([store], out, ExportOptions(), RunOptions(workers=workers))
    rows = _rows(out, "sft")
    assert [r["session_id"][-2:] for r in rows] == ["c3"]
    answers = Counter(
        m["content"] for m in rows[0]["messages"] if m["role"] == "assistant" and m["trainable"]
    )
    assert answers == Counter(f"{i + 1} comes after {i}." for i in range(5))
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["dedup"]["sft"]["dropped"] == 3 == run.counts["sft_rows_dropped_duplicate"]
    held = {
        (d["session_id"][-2:], d["duplicate_of"]["session_id"][-2:])
        for d in manifest["dedup"]["sft"]["rows"]
    }
    assert held == {("a1", "c3"), ("b2", "c3"), ("d4", "c3")}
    assert len(_rows(out, "trajectories")) == 4  # every path stays for analysis
    kept = run_export([store], tmp_path / "off", ExportOptions(dedup="off"), RunOptions(workers=1))
    assert (
        len(_rows(tmp_path / "off", "sft")) == 4 and kept.counts["sft_rows_dropped_duplicate"] == 0
    )


def test_an_unknown_dedup_mode_is_a_usage_error(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from trajset.pipeline.cli import app

    result = CliRunner().invoke(app, ["export", "--out", str(tmp_path / "o"), "--dedup", "fuzzy"])
    assert result.exit_code == 2 and "valid: exact, near, off" in result.output


def test_near_duplicates_differing_in_one_word_are_held_once(tmp_path: Path) -> None:
    text = (
        "Open the parser module, find the function that splits a header line into its fields, "
        "and make it accept a trailing comma after the last field without raising an error; "
        "then add a test that feeds it three such lines and checks every field it returns."
    )
    store = tmp_path / "store"
    store.mkdir()
    for sid, word in (("0199a1b2-0000-7000-8000-0000000000e1", "three"),
                      ("0199a1b2-0000-7000-8000-0000000000e2", "four")):  # fmt: skip
        b = SessionBuilder(sid, hashes=False)
        b.user(text.replace("three", word))
        b.respond(text="Done: the parser accepts the comma and the test passes.", usage=(5, 3, 0))
        (store / f"{sid[-2:]}.jsonl").write_text(b.text())
    exact = tmp_path / "exact"
    run_export([store], exact, ExportOptions(), RunOptions(workers=1))
    assert len(_rows(exact, "sft")) == 2  # not equal: exact keeps both
    near = tmp_path / "near"
    run_export([store], near, ExportOptions(dedup="near"), RunOptions(workers=2))
    assert [r["session_id"][-2:] for r in _rows(near, "sft")] == ["e1"]
    rows = json.loads((near / "manifest.json").read_text())["dedup"]["sft"]["rows"]
    assert [(r["session_id"][-2:], r["duplicate_of"]["session_id"][-2:]) for r in rows] == [
        ("e2", "e1")
    ]
    strict = tmp_path / "strict"
    run_export(
        [store], strict, ExportOptions(dedup="near", dedup_threshold=0.99), RunOptions(workers=1)
    )
    assert len(_rows(strict, "sft")) == 2  # one word in 50 is below 0.99


def test_near_without_rensa_says_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    from trajset.pipeline.errors import UsageError

    monkeypatch.setitem(sys.modules, "rensa", None)  # an import of it fails, as if not installed
    with pytest.raises(UsageError, match=r"pip install 'trajset\[near\]'"):
        run_export([sample_store()], tmp_path / "o", ExportOptions(dedup="near"), RunOptions())
    assert not (tmp_path / "o").exists()


def _forked(session_id: str) -> str:
    """A question with a secret in it, answered, regenerated and answered again."""
    b = SessionBuilder(session_id, hashes=False)
    ask = b.user("mail ada@example.com the build log, then summarise it")
    b.respond(text="Sent; the build failed in the linker.", usage=(5, 3, 0))
    b.branch(ask).respond(text="Sent. Summary: one linker error.", usage=(5, 3, 0))
    return b.text()


@pytest.mark.parametrize("workers", [1, 2])
def test_a_copied_fork_gives_its_pairs_once(tmp_path: Path, workers: int) -> None:
    """The same forked session under two ids: its pairs are written for the first only,
    each of the copy's listed with the pair it duplicates; every granularity stays."""
    store = tmp_path / "store"
    store.mkdir()
    for sid in ("0199a1b2-0000-7000-8000-0000000000a1", "0199a1b2-0000-7000-8000-0000000000b2"):
        (store / f"{sid[-2:]}.jsonl").write_text(_forked(sid))
    out = tmp_path / "out"
    run = run_export([store], out, ExportOptions(), RunOptions(workers=workers))
    pairs = _rows(out, "preferences")
    assert {p["session_id"][-2:] for p in pairs} == {"a1"}
    assert sorted(p["granularity"] for p in pairs) == ["trajectory", "turn"]
    manifest = json.loads((out / "manifest.json").read_text())
    listed = manifest["dedup"]["preferences"]["rows"]
    assert run.counts["pairs_dropped_duplicate"] == 2 == len(listed)
    kept = {p["pair_id"] for p in pairs}
    assert {d["duplicate_of"]["pair_id"] for d in listed} == kept
    assert all(d["session_id"][-2:] == "b2" for d in listed)
    # the audit counts the placeholders in the tables as written, not in the rows left out;
    # a fork's prompt once per row of it (a part holds it once)
    outputs = manifest["redaction"]["outputs"]
    for table in ("preferences", "kto", "sft", "steps"):
        written = sum(
            count_placeholders(json.dumps(r, ensure_ascii=False)).get("email", 0)
            for r in _rows(out, table)
        )
        assert written and outputs[table]["email"] == written, table
    off = tmp_path / "off"
    run_export([store], off, ExportOptions(dedup="off"), RunOptions(workers=1))
    assert len(_rows(off, "preferences")) == 4
