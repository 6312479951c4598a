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

from .conftest import UPSTREAM
from .offline_tokenizer import build, conversation_texts

trl = pytest.importorskip("trl", reason="the training test needs the train extra (see above)")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::FutureWarning"),
    pytest.mark.filterwarnings("ignore::UserWarning"),
]


def _texts(rows: Any) -> list[str]:
    return conversation_texts(rows)


def _tokenizer(texts: list[str]) -> Any:
    return build(texts, "chatml")


def _model(tokenizer: Any) -> Any:
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=1,
        num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=8192,
        pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id,
    )  # fmt: skip
    return LlamaForCausalLM(config)


def _train_one_sft_step(dataset: Any, tmp_path: Path) -> float:
    from trl import SFTConfig, SFTTrainer

    tokenizer = _tokenizer(_texts(dataset))
    args = _args(SFTConfig, tmp_path, assistant_only_loss=True)
    trainer = SFTTrainer(
        model=_model(tokenizer), args=args, train_dataset=dataset, processing_class=tokenizer
    )
    return float(trainer.train().training_loss)


def _conversations(rows: Any, columns: tuple[str, ...]) -> list[dict[str, Any]]:
    """Rows as ``_texts`` reads them: each message column as one conversation."""
    return [{"tools": r["tools"], "messages": m} for r in rows for c in columns for m in [r[c]]]


def _args(config: Any, tmp_path: Path, **more: Any) -> Any:
    """One step on the CPU, nothing reported or saved."""
    return config(
        output_dir=str(tmp_path / "run"), max_steps=1, per_device_train_batch_size=2,
        max_length=2048, report_to=[], save_strategy="no", logging_steps=1, use_cpu=True,
        dataloader_num_workers=0, seed=0, **more,
    )  # fmt: skip


def _export(source: Path, tmp_path: Path, **options: Any) -> Path:
    out = tmp_path / "out"
    run_export([source], out, ExportOptions(**options), RunOptions(workers=1))
    return out


#: fixture stores the trainers are run on, beside the generated one
STORES = {
    "claude-code": UPSTREAM / "claude-code",  # real rewinds: pairs of kind ``prompt``
    "pi": UPSTREAM / "pi" / "synthetic" / "sessions",  # an edited first prompt, a summary
    "harbor": UPSTREAM / "harbor-jobs",  # trials of one task, judged by their rewards
    "qwen-code": UPSTREAM / "qwen-code" / "synthetic" / "home" / ".qwen",  # /rewind, /branch
    "copilot-cli": UPSTREAM / "copilot-cli" / "synthetic" / "home" / ".copilot",  # /fork
    "cursor": UPSTREAM / "cursor" / "synthetic" / "home",  # a CLI rewind, Best-of-N
}


def _store(store: str, tmp_path: Path) -> Path:
    """The generated store (regenerated answers, scored outcomes), or a fixture store
    (``STORES``: where an empty prompt or a side without an answer once stopped TRL)."""
    if store in STORES:
        return STORES[store]
    from .conftest import benchmark_corpus

    benchmark_corpus().build_corpus(tmp_path / "generated", 6, seed=5, turns=3)
    return tmp_path / "generated"


@pytest.mark.parametrize(
    "store", ["generated", "claude-code", "pi", "harbor", "qwen-code", "copilot-cli", "cursor"]
)
def test_trl_trains_one_dpo_step_on_the_preferences_config(
    store: str, tmp_path: Path, offline: Path
) -> None:
    """The card's DPO recipe as written: pairs of both kinds, three columns."""
    from datasets import load_dataset
    from trl import DPOConfig, DPOTrainer

    out = _export(_store(store, tmp_path), tmp_path)
    pairs = load_dataset(str(out), "preferences", split="train", cache_dir=str(offline))
    assert len(pairs) >= 2
    tokenizer = _tokenizer(_texts(_conversations(pairs, ("prompt", "chosen", "rejected"))))
    trainer = DPOTrainer(
        model=_model(tokenizer), ref_model=_model(tokenizer), args=_args(DPOConfig, tmp_path),
        train_dataset=pairs.select_columns(["prompt", "chosen", "rejected"]),
        processing_class=tokenizer,
    )  # fmt: skip
    loss = float(trainer.train().training_loss)
    assert math.isfinite(loss) and loss > 0


@pytest.mark.parametrize(("store", "kto_from"), [("generated", "pairs"),
                                                 ("claude-code", "pairs"),
                                                 ("pi", "pairs"), ("harbor", "pairs"),
                                                 ("generated", "outcomes")])  # fmt: skip
def test_trl_trains_one_kto_step_on_the_kto_config(
    store: str, kto_from: str, tmp_path: Path, offline: Path
) -> None:
    from datasets import load_dataset
    from trl import KTOConfig, KTOTrainer

    out = _export(_store(store, tmp_path), tmp_path, kto_from=kto_from)
    rows = load_dataset(str(out), "kto", split="train", cache_dir=str(offline))
    assert {True, False} <= set(rows["label"]) and set(rows["source"]) == {kto_from[:-1]}
    tokenizer = _tokenizer(_texts(_conversations(rows, ("prompt", "completion"))))
    trainer = KTOTrainer(
        model=_model(tokenizer), ref_model=_model(tokenizer), args=_args(KTOConfig, tmp_path),
        train_dataset=rows.select_columns(["prompt", "completion", "label"]),
        processing_class=tokenizer,
    )  # fmt: skip
    loss = float(trainer.train().training_loss)
    assert math.isfinite(loss)


@pytest.mark.parametrize("store", ["sample", "claude-code"])
def test_trl_trains_one_sft_step_on_the_sft_config(
    store: str, tmp_path: Path, offline: Path
) -> None:
    from datasets import load_dataset

    source = sample_store() if store == "sample" else UPSTREAM / "claude-code"
    out = _export(source, tmp_path)
    sft = load_dataset(str(out), "sft", split="train", cache_dir=str(offline))
    loss = _train_one_sft_step(sft.select_columns(["messages", "tools"]), tmp_path)
    assert math.isfinite(loss) and loss > 0


#: fixture stores with tool calls, one per kind that has them
TOOL_STORES = {
    "claude-code": UPSTREAM / "claude-code",
    "codex": UPSTREAM / "codex" / "real" / "ai-sessions",
    "gemini-cli": UPSTREAM / "gemini-cli" / "real" / "codemie-5b959dae",
    "pi": UPSTREAM / "pi" / "real" / "teich",
    "opencode": UPSTREAM / "opencode" / "sqlite",
    "harbor": UPSTREAM / "harbor-jobs",
    "agentsession": UPSTREAM / "agentsession" / "testdata" / "sessions",
    "qwen-code": UPSTREAM / "qwen-code" / "synthetic" / "home" / ".qwen",
    "copilot-cli": UPSTREAM / "copilot-cli" / "synthetic" / "home" / ".copilot",
    "cursor": UPSTREAM / "cursor" / "synthetic" / "home",
}


@pytest.mark.parametrize("kind", list(TOOL_STORES))
def test_trls_own_templates_render_tool_calls_with_object_arguments(
    kind: str, tmp_path: Path, offline: Path
) -> None:
    """``sft`` and ``preferences`` as ``load_dataset`` gives them, rendered with TRL's shipped
    Qwen2.5 and Llama 3.1 templates: every call's arguments are an object in the text, never
    a JSON string inside the call (``arguments | tojson`` of text)."""
    from datasets import load_dataset
    from transformers.utils.chat_template_utils import _compile_jinja_template

    out = _export(TOOL_STORES[kind], tmp_path)
    folder = Path(trl.__file__).parent / "chat_templates"
    templates = {n: _compile_jinja_template((folder / f"{n}.jinja").read_text())
                 for n in ("qwen2_5_training", "llama3_1")}  # fmt: skip
    calls = 0
    for config, columns in (
        ("sft", ("messages",)),
        ("preferences", ("prompt", "chosen", "rejected")),
    ):
        if not (out / "data" / config).is_dir() or not any((out / "data" / config).glob("*")):
            continue
        try:
            rows = load_dataset(str(out), config, split="train", cache_dir=str(offline))
        except ValueError:  # a config without rows is none of the card's
            continue
        for row in rows:
            assert row["tools"] is None or isinstance(row["tools"], list)
            for column in columns:
                said = [c for m in row[column] for c in m["tool_calls"] or []]
                assert all(isinstance(c["function"]["arguments"], dict) for c in said)
                calls += len(said)
                messages = [{k: v for k, v in m.items() if v is not None} for m in row[column]]
                single = all(len(m.get("tool_calls") or []) <= 1 for m in messages)
                for name, template in templates.items():
                    if name == "llama3_1" and not single:
                        continue  # Llama 3.1 takes one call per message
                    text = template.render(messages=messages, tools=row["tools"] or None,
                                           bos_token="", add_generation_prompt=False)  # fmt: skip
                    assert '"arguments": "' not in text and '"parameters": "' not in text, name
    assert calls > 0
