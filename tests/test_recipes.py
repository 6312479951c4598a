"""The dataset card's recipes run as written on an export of every store kind: each Python
block of its ``## Usage``, with ``REPO`` set to the folder and ``MODEL`` to a tiny chat model
saved here (built from a config, its tokenizer trained on the export: nothing is downloaded),
each trainer told to take one step on the CPU.
Needs the ``train`` extra, as ``tests/test_training.py`` does."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from trajset.pipeline import ExportOptions, RunOptions, run_export
from trajset.pipeline.stores import READERS, Fixture

from .fixture_stores import fixtures, lay_out
from .test_training import _model, _tokenizer

FIXTURES = fixtures()

pytest.importorskip("trl", reason="the recipes train with TRL (the train extra)")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::FutureWarning"),
    pytest.mark.filterwarnings("ignore::UserWarning"),
]

BLOCK = re.compile(r"```python\n(.*?)```", re.S)


def _texts(out: Path) -> list[str]:
    """Every string of the export's tables, for the tokenizer."""
    texts: list[str] = []

    def walk(v: Any) -> None:
        if isinstance(v, str):
            texts.append(v)
        elif isinstance(v, dict):
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)

    for table in (out / "data").iterdir():
        if any(table.glob("*.parquet")):
            walk(pq.read_table(table).to_pylist())
    return texts


def _tiny_model(out: Path, dest: Path) -> Path:
    tokenizer = _tokenizer(_texts(out))
    _model(tokenizer).save_pretrained(dest)
    tokenizer.save_pretrained(dest)
    return dest


#: each kind's first fixture, and the stores whose pairs once stopped DPO and KTO (an empty
#: prompt: Pi's edited first prompt, two Harbor trials given different instructions)
CASES = [*((kind, FIXTURES[kind][0]) for kind in READERS),
         ("pi", Fixture("upstream/pi/synthetic/sessions")), ("harbor", Fixture("upstream/harbor-jobs"))]  # fmt: skip


@pytest.mark.parametrize(("kind", "fixture"), CASES, ids=[f"{k}-{f.path}" for k, f in CASES])
def test_every_recipe_of_the_card_runs_as_written(
    kind: str, fixture: Fixture, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, offline: Path
) -> None:
    store = lay_out(fixture, tmp_path / "store")
    out = tmp_path / "out"
    run_export([store], out, ExportOptions(traces=True), RunOptions(workers=1))
    card = (out / "README.md").read_text(encoding="utf-8")
    usage = card[card.index("## Usage") :]
    blocks = BLOCK.findall(usage)
    assert len(blocks) >= 3  # the setup, the filters, sft: every store has trajectories
    model = _tiny_model(out, tmp_path / "model")
    script = "\n".join(blocks)
    script = script.replace('"PATH_OR_REPO"', repr(str(out)))
    script = re.sub(r'^MODEL = ".*?"', f"MODEL = {str(model)!r}", script, flags=re.M)
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, Any] = {}
    # as written, but for one step and nothing reported: the recipes choose the CPU
    # themselves where there is no GPU
    script = re.sub(
        r"(\w+Config)\(output_dir=", r"\1(max_steps=1, report_to=[], output_dir=", script
    )
    exec(compile(script, f"card of {kind}", "exec"), namespace)
    traced = sorted((out / "traces").glob("*/*.jsonl"))
    assert namespace["traces"].num_rows == len(traced) > 0  # one row per trace file
    trained = [k for k in ("sft", "pairs", "kto") if k in namespace]
    assert "trainer" in namespace and "sft" in trained
    if "pairs" in namespace:  # the pairs trained a DPO step and a reward model's step
        assert (tmp_path / "dpo-out").is_dir() and (tmp_path / "reward-out").is_dir()
