"""``trajset tokenize`` and ``export --tokenizer``: masks against transformers' own, the
trainable flags, over-long rows, pair lengths, the card, and one TRL step.

Tokenizers are built here, offline (``offline_tokenizer.py``), with ChatML, Llama-3 and
Qwen-style templates that carry generation tags: transformers'
``return_assistant_tokens_mask`` then marks every assistant message's tokens, one run per
message, which is what trajset's mask is compared with.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from trajset.pipeline import ExportOptions, RunOptions, run_export, sample_store
from trajset.pipeline.cli import app
from trajset.pipeline.executors import make_executor
from trajset.pipeline.tokenize import tokenize_export
from trajset.pipeline.tokenize.render import hf_messages
from trajset.pipeline.tokenizing import Limits, TokenizeOptions

from .conftest import UPSTREAM
from .offline_tokenizer import TEMPLATES, build, conversation_texts, saved

pytest.importorskip("transformers", reason="tokenizing needs the tokenize extra")

STORES = {"sample": sample_store(), "claude-code": UPSTREAM / "claude-code"}


def _rows(out: Path, table: str) -> list[dict[str, Any]]:
    files = sorted((out / "data" / table).glob("*.parquet"))
    return [r for f in files for r in pq.read_table(f).to_pylist()]


@pytest.fixture(scope="module", params=list(STORES))
def exported(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("export") / "out"
    run_export([STORES[request.param]], out, ExportOptions(), RunOptions(workers=1))
    return out


def _tokenized(out: Path, template: str, tmp: Path, **limits: Any) -> tuple[Path, Any]:
    texts = conversation_texts(_rows(out, "sft"))
    tokenizer = build(texts, template)
    folder = saved(texts, tmp / f"tok-{template}", template)
    copy = tmp / f"copy-{template}"
    import shutil

    shutil.copytree(out, copy)
    with make_executor(RunOptions(workers=1)) as executor:
        tokenize_export(copy, TokenizeOptions(str(folder), limits=Limits(**limits)), executor)
    return copy, tokenizer


def _hf_runs(mask: list[int]) -> list[tuple[int, int]]:
    """The runs of 1s of transformers' assistant mask: one per assistant message."""
    runs, start = [], None
    for i, bit in enumerate([*mask, 0]):
        if bit and start is None:
            start = i
        elif not bit and start is not None:
            runs.append((start, i))
            start = None
    return runs


@pytest.mark.parametrize("template", TEMPLATES)
def test_masks_are_transformers_assistant_masks_on_trainable_messages_only(
    exported: Path, template: str, tmp_path: Path
) -> None:
    out, tokenizer = _tokenized(exported, template, tmp_path)
    sft = {(r["session_id"], r["leaf_id"], r["window"]): r for r in _rows(exported, "sft")}
    rows = _rows(out, "tokenized")
    assert rows and len(rows) <= len(sft)
    for row in rows:
        source = sft[(row["session_id"], row["leaf_id"], row["window"])]
        tools = json.loads(source["tools"]) if source["tools"] else None
        hf = tokenizer.apply_chat_template(
            hf_messages(source["messages"]), tools=tools, tokenize=True, return_dict=True,
            return_assistant_tokens_mask=True,
        )  # fmt: skip
        assert row["input_ids"] == hf["input_ids"]
        assistants = [m for m in source["messages"] if m["role"] == "assistant"]
        runs = _hf_runs(hf["assistant_masks"])
        assert len(runs) == len(assistants)
        expected = [0] * len(row["input_ids"])
        for (a, b), m in zip(runs, assistants, strict=True):
            if m["trainable"]:
                expected[a:b] = [1] * (b - a)
        assert row["assistant_masks"] == expected  # no untrainable message's token is in
        if all(m["trainable"] for m in assistants):
            assert row["assistant_masks"] == hf["assistant_masks"]
        assert row["n_trainable"] == sum(expected) > 0 and row["n_tokens"] == len(expected)


def _tojson(arguments: str) -> str:
    """A call's arguments as a template's ``| tojson`` writes the object they hold."""
    return json.dumps(json.loads(arguments), ensure_ascii=False)


def test_masked_in_tokens_decode_to_the_trainable_answers(exported: Path, tmp_path: Path) -> None:
    """ChatML: a trainable answer renders as its reasoning, content and tool calls, then
    ``<|im_end|>`` (tests/data/templates/chatml.jinja); nothing else is masked in."""
    out, tokenizer = _tokenized(exported, "chatml", tmp_path)
    sft = {(r["session_id"], r["leaf_id"], r["window"]): r for r in _rows(exported, "sft")}
    for row in _rows(out, "tokenized"):
        source = sft[(row["session_id"], row["leaf_id"], row["window"])]
        want = "".join(
            (f"<think>{m['reasoning_content']}</think>" if m["reasoning_content"] else "")
            + (m["content"] or "")
            + "".join(f"<tool_call>{c['function']['name']} {_tojson(c['function']['arguments'])}</tool_call>"
                      for c in m["tool_calls"] or [])
            + "<|im_end|>"
            for m in source["messages"]
            if m["role"] == "assistant" and m["trainable"]
        )  # fmt: skip
        kept = [t for t, bit in zip(row["input_ids"], row["assistant_masks"], strict=True) if bit]
        assert tokenizer.decode(kept) == want


def test_over_long_rows_are_dropped_or_cut_after_a_whole_answer(
    exported: Path, tmp_path: Path
) -> None:
    full, _ = _tokenized(exported, "chatml", tmp_path / "full")
    lengths = sorted(r["n_tokens"] for r in _rows(full, "tokenized"))
    # the end of the longest row's first trainable answer: that row can be cut there
    longest = max(_rows(full, "tokenized"), key=lambda r: r["n_tokens"])
    mask = longest["assistant_masks"]
    limit = next(i for i in range(1, len(mask)) if mask[i - 1] and not mask[i])
    dropped, _ = _tokenized(exported, "chatml", tmp_path / "drop", max_tokens=limit)
    assert all(r["n_tokens"] <= limit for r in _rows(dropped, "tokenized"))
    counts = json.loads((dropped / "manifest.json").read_text())["counts"]
    assert counts["tokenized_rows_dropped_overlong"] == sum(n > limit for n in lengths)
    cut, tokenizer = _tokenized(
        exported, "chatml", tmp_path / "cut", max_tokens=limit, overlong="truncate"
    )
    whole = {(r["session_id"], r["leaf_id"], r["window"]): r for r in _rows(full, "tokenized")}
    truncated = [r for r in _rows(cut, "tokenized") if r["truncated"]]
    assert truncated or counts["tokenized_rows_dropped_overlong"] == 0
    for r in truncated:
        assert r["n_tokens"] <= limit
        assert tokenizer.decode(r["input_ids"]).endswith("<|im_end|>")  # after a whole answer
        original = whole[(r["session_id"], r["leaf_id"], r["window"])]
        assert original["input_ids"][: r["n_tokens"]] == r["input_ids"]
        assert original["assistant_masks"][: r["n_tokens"]] == r["assistant_masks"]


def test_pair_token_lengths_and_the_card(exported: Path, tmp_path: Path) -> None:
    out, tokenizer = _tokenized(exported, "qwen", tmp_path)
    pairs = {r["pair_id"]: r for r in _rows(exported, "preferences")}
    lengths = _rows(out, "pair_tokens")
    assert len(lengths) == len(pairs)
    for r in lengths:
        p = pairs[r["pair_id"]]
        tools = json.loads(p["tools"]) if p["tools"] else None
        prompt = tokenizer.apply_chat_template(
            hf_messages(p["prompt"]), tools=tools, add_generation_prompt=True, return_dict=True
        )
        chosen = tokenizer.apply_chat_template(hf_messages(p["prompt"] + p["chosen"]),
                                               tools=tools, return_dict=True)  # fmt: skip
        prompt, chosen = prompt["input_ids"], chosen["input_ids"]
        assert r["prompt_tokens"] == len(prompt) and r["chosen_tokens"] == len(chosen) - len(prompt)
    card = (out / "README.md").read_text()
    assert "config_name: tokenized" in card and "### Tokenization" in card
    assert "config_name: pair_tokens" in card and "Pre-tokenized training" in card
    from trajset.pipeline.report import render, report_data

    assert "Tokens per tokenized row" in render(report_data(out))
    result = CliRunner().invoke(app, ["validate", str(out)])
    assert result.exit_code == 0, result.output


def test_export_with_a_tokenizer_writes_the_same_config(tmp_path: Path) -> None:
    base = tmp_path / "base"
    run_export([sample_store()], base, ExportOptions(), RunOptions(workers=1))
    folder = saved(conversation_texts(_rows(base, "sft")), tmp_path / "tok")
    runner = CliRunner()
    for workers in ("1", "2"):
        result = runner.invoke(app, ["export", "--out", str(tmp_path / workers), "-q",
                                     "--workers", workers, "--tokenizer", str(folder)])  # fmt: skip
        assert result.exit_code == 0, result.output
    files = sorted((tmp_path / "1" / "data" / "tokenized").glob("*.parquet"))
    assert files and all(
        f.read_bytes() == (tmp_path / "2" / "data" / "tokenized" / f.name).read_bytes()
        for f in files
    )
    again = runner.invoke(app, ["tokenize", str(base), "--tokenizer", str(folder), "-q"])
    assert again.exit_code == 0, again.output
    assert [f.read_bytes() for f in sorted((base / "data" / "tokenized").glob("*"))] == [
        f.read_bytes() for f in files
    ]


def test_a_tokenizer_that_does_not_load_is_a_usage_error(tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["export", "--out", str(tmp_path / "o"), "-q",
                                 "--tokenizer", str(tmp_path / "missing")])  # fmt: skip
    assert result.exit_code == 2 and "--tokenizer" in result.output
    assert not (tmp_path / "o").exists()
    result = runner.invoke(app, ["export", "--out", str(tmp_path / "o"), "--max-tokens", "9"])
    assert result.exit_code == 2 and "need --tokenizer" in result.output


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::FutureWarning")
@pytest.mark.filterwarnings("ignore::UserWarning")
def test_trl_trains_one_sft_step_on_the_tokenized_config(tmp_path: Path, offline: Path) -> None:
    pytest.importorskip("trl")
    from datasets import load_dataset
    from trl import SFTConfig, SFTTrainer

    from .test_training import _args, _model

    base = tmp_path / "base"
    run_export([sample_store()], base, ExportOptions(), RunOptions(workers=1))
    texts = conversation_texts(_rows(base, "sft"))
    out, tokenizer = _tokenized(base, "chatml", tmp_path)
    tokens = load_dataset(str(out), "tokenized", split="train", cache_dir=str(offline))
    trainer = SFTTrainer(
        model=_model(build(texts)), args=_args(SFTConfig, tmp_path), processing_class=tokenizer,
        train_dataset=tokens.select_columns(["input_ids", "assistant_masks"]),
    )  # fmt: skip
    assert math.isfinite(float(trainer.train().training_loss))


def test_a_shard_of_many_row_groups_gives_the_same_rows(exported: Path, tmp_path: Path) -> None:
    """Each task reads its own row group only; the rows come out whole and in order."""
    import shutil

    whole, _ = _tokenized(exported, "chatml", tmp_path / "whole")
    groups = tmp_path / "groups"
    shutil.copytree(exported, groups)
    for f in (groups / "data" / "sft").glob("*.parquet"):
        pq.write_table(pq.read_table(f), f, row_group_size=2)
    assert pq.ParquetFile(next((groups / "data" / "sft").glob("*.parquet"))).num_row_groups > 1
    split, _ = _tokenized(groups, "chatml", tmp_path / "split")
    assert _rows(split, "tokenized") == _rows(whole, "tokenized")


@pytest.mark.parametrize(("raised", "counted"), [
    ("template", "tokenized_rows_dropped_unrenderable"),
    ("ours", "tokenized_rows_dropped_internal"),
])  # fmt: skip
def test_a_fault_of_ours_is_not_counted_as_the_templates(raised: str, counted: str) -> None:
    """Any error while rendering was counted as a row the chat template refused."""
    from collections import Counter

    import jinja2

    from trajset.pipeline.tokenize.rows import tokenized_rows

    class Refusing:
        def render(self, messages: Any, tools: Any) -> Any:
            if raised == "template":
                raise jinja2.exceptions.TemplateError("Conversation roles must alternate")
            raise KeyError("role")

    counts: Counter[str] = Counter()
    rows = [{"messages": [{"role": "user", "content": "hi"}], "tools": None}]
    assert list(tokenized_rows(Refusing(), rows, Limits(), counts)) == []  # type: ignore[arg-type]
    assert counts == {counted: 1}
