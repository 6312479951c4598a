"""``--split``/``--split-by``: splits by session, the same in every config, loadable per split."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from trajset.pipeline import ExportOptions, RunOptions, run_export
from trajset.pipeline.splits import assign, parse_splits, place
from trajset.pipeline.tables import TABLES

from .conftest import benchmark_corpus

SPLITS = (("validation", 0.2), ("test", 0.2))


def _rows(out: Path, table: str) -> list[dict[str, Any]]:
    return pq.read_table(out / "data" / table).to_pylist()


@pytest.fixture(scope="module")
def forked(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """40 generated sessions, a third of their answers regenerated."""
    store = tmp_path_factory.mktemp("splits") / "store"
    benchmark_corpus().build_corpus(store, 40, seed=9, turns=4, fork_rate=0.4)
    return store


def test_no_session_falls_in_two_splits_and_every_config_loads_per_split(
    forked: Path, tmp_path: Path, offline: Path
) -> None:
    from datasets import load_dataset

    runs = {}
    for workers in (1, 2):
        out = tmp_path / f"w{workers}"
        run_export([forked], out, ExportOptions(split=SPLITS), RunOptions(workers=workers))
        runs[workers] = out
    out = runs[1]
    where: dict[str, str] = {}
    for table in TABLES:
        for r in _rows(out, table):
            assert where.setdefault(r["session_id"], r["split"]) == r["split"], table
    assert set(Counter(where.values())) == {"train", "validation", "test"}
    for f in (out / "data").rglob("*.parquet"):  # the same bytes whatever the workers
        assert f.read_bytes() == (runs[2] / f.relative_to(out)).read_bytes(), f
    for config in TABLES:
        for split in ("train", "validation", "test"):
            rows = load_dataset(str(out), config, split=split, cache_dir=str(offline))
            want = [r for r in _rows(out, config) if r["split"] == split]
            assert len(rows) == len(want) > 0 and set(rows["split"]) == {split}, (config, split)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["options"]["split"] == dict(SPLITS)
    assert manifest["tables"]["sft"]["splits"]["test"]["rows"] == len(
        [r for r in _rows(out, "sft") if r["split"] == "test"]
    )


def test_a_session_keeps_its_split_when_the_store_grows() -> None:
    splits = parse_splits(["test=0.3"])
    small = assign(dict.fromkeys(f"s{i}" for i in range(50)), splits, stratified=False)
    large = assign(dict.fromkeys(f"s{i}" for i in range(500)), splits, stratified=False)
    assert small and all(large[s] == n for s, n in small.items())
    assert all((s in large) == (place(s) < 0.3) for s in (f"s{i}" for i in range(500)))


def test_split_by_gives_each_value_its_share(forked: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    options = ExportOptions(split=(("test", 0.25),), split_by="outcome_pass")
    run_export([forked], out, options, RunOptions(workers=2))
    preferred = {
        t["session_id"]: (t["outcome_pass"], t["split"])
        for t in _rows(out, "trajectories")[::-1]
        if t["is_preferred"]
    }
    by_value = Counter(v for v, _ in preferred.values())
    tested = Counter(v for v, s in preferred.values() if s == "test")
    assert len(by_value) >= 2
    for value, n in by_value.items():  # each value's share, rounded
        assert tested[value] == round(0.25 * n), value


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--split", "test"], "NAME=FRACTION"),
        (["--split", "train=0.1"], "other than train"),
        (["--split", "a=0.6", "--split", "b=0.5"], "add up to 1 or more"),
        (["--split", "a=0.1", "--split", "a=0.2"], "given twice"),
        (["--split", "a=0.1", "--split-by", "nope"], "valid: session_id"),
        (["--split-by", "outcome_pass"], "needs --split"),
    ],
)
def test_bad_splits_are_usage_errors(tmp_path: Path, args: list[str], message: str) -> None:
    from typer.testing import CliRunner

    from trajset.pipeline.cli import app

    result = CliRunner().invoke(app, ["export", "--out", str(tmp_path / "o"), *args])
    assert result.exit_code == 2 and message in result.output, result.output


def test_without_splits_every_row_is_train(tmp_path: Path) -> None:
    from trajset.pipeline import sample_store

    out = tmp_path / "out"
    run_export([sample_store()], out, ExportOptions(), RunOptions(workers=1))
    for table in TABLES:
        assert {r["split"] for r in _rows(out, table)} <= {"train"}
        assert all(f.name.startswith("train-") for f in (out / "data" / table).iterdir())


def test_no_split_has_an_empty_file_however_the_parts_fall(
    forked: Path, tmp_path: Path, offline: Path
) -> None:
    """A part per unit and small shards: a shard of a split is made of parts that hold its
    rows only (``datasets`` cannot read a split with an empty file in it)."""
    from datasets import load_dataset

    from trajset.pipeline import RunSettings

    out = tmp_path / "out"
    settings = RunSettings(part_input_bytes=1, batch_mean_units=1, shard_bytes=20_000)
    run_export([forked], out, ExportOptions(split=SPLITS), RunOptions(workers=2, settings=settings))
    files = list((out / "data").rglob("*.parquet"))
    assert len([f for f in files if f.name.startswith("test-")]) > len(TABLES)  # several each
    assert all(pq.ParquetFile(f).metadata.num_rows > 0 for f in files)
    for config in TABLES:
        for split in ("train", "validation", "test"):
            load_dataset(str(out), config, split=split, cache_dir=str(offline))


def test_the_card_names_the_splits_a_config_holds_no_rows_of(tmp_path: Path, offline: Path) -> None:
    """A small store: its few forked sessions all fall in `train`, so `preferences` has no
    `test` rows. The card says so, and `load_dataset` names the splits there are."""
    from datasets import load_dataset

    from .conftest import UPSTREAM

    out = tmp_path / "out"
    options = ExportOptions(split=(("validation", 0.1), ("test", 0.1)))
    run_export([UPSTREAM / "pi" / "synthetic" / "sessions"], out, options, RunOptions(workers=1))
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "`preferences` none of `validation`, `test`" in card
    with pytest.raises(ValueError, match="train"):
        load_dataset(str(out), "preferences", split="test", cache_dir=str(offline))
