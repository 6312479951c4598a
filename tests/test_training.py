"""TRL trains on what trajset writes, as loaded with ``datasets``, with no conversion script.

A tiny model is built from a config and a tokenizer trained here (``tokenizers``) with a
ChatML template from ``tests/data/templates``: nothing is downloaded.  Needs the ``train``
extra (``pip install torch==2.13.0`` first, then ``pip install -e ".[train]"``), which
``.ci/run`` installs.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from trajset.pipeline import ExportOptions, RunOptions, run_export, sample_store

from .conftest import DATA, UPSTREAM

trl = pytest.importorskip("trl", reason="the training test needs the train extra (see above)")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::FutureWarning"),
    pytest.mark.filterwarnings("ignore::UserWarning"),
]

SPECIAL = ["<unk>", "<pad>", "<|im_start|>", "<|im_end|>"]


def _texts(rows: Any) -> list[str]:
    out = []
    for r in rows:
        out.append(r["tools"] or "")
        for m in r["messages"]:
            out.append(m["content"] or "")
            for c in m["tool_calls"] or []:
                out.append(c["function"]["name"] + " " + c["function"]["arguments"])
    return out


def _tokenizer(texts: list[str]) -> Any:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(texts, trainers.BpeTrainer(vocab_size=600, special_tokens=SPECIAL))
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, unk_token="<unk>", pad_token="<pad>", eos_token="<|im_end|>"
    )
    fast.chat_template = (DATA / "templates" / "chatml.jinja").read_text(encoding="utf-8")
    return fast


def _train_one_sft_step(dataset: Any, tmp_path: Path) -> float:
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM
    from trl import SFTConfig, SFTTrainer

    torch.manual_seed(0)
    tokenizer = _tokenizer(_texts(dataset))
    config = LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=1,
        num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=8192,
        pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id,
    )  # fmt: skip
    args = SFTConfig(
        output_dir=str(tmp_path / "run"), max_steps=1, per_device_train_batch_size=2,
        max_length=2048, assistant_only_loss=True, report_to=[], save_strategy="no",
        logging_steps=1, use_cpu=True, dataloader_num_workers=0, seed=0,
    )  # fmt: skip
    trainer = SFTTrainer(
        model=LlamaForCausalLM(config), args=args, train_dataset=dataset,
        processing_class=tokenizer,
    )  # fmt: skip
    return float(trainer.train().training_loss)


@pytest.mark.parametrize("store", ["sample", "claude-code"])
def test_trl_trains_one_sft_step_on_the_sft_config(
    store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from datasets import load_dataset

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "cache"))
    source = sample_store() if store == "sample" else UPSTREAM / "claude-code"
    out = tmp_path / "out"
    run_export([source], out, ExportOptions(), RunOptions(workers=1))
    sft = load_dataset(str(out), "sft", split="train", cache_dir=str(tmp_path / "cache"))
    loss = _train_one_sft_step(sft.select_columns(["messages", "tools"]), tmp_path)
    assert math.isfinite(loss) and loss > 0
