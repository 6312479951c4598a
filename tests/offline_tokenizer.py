"""A fast tokenizer built here, offline (``tokenizers``), with a chat template from
``tests/data/templates`` (ChatML, Llama-3 and Qwen styles, each with generation tags, so
transformers' ``return_assistant_tokens_mask`` can be compared with trajset's masks)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .conftest import DATA

TEMPLATES = ("chatml", "llama3", "qwen")
SPECIAL = ["<unk>", "<pad>", "<|im_start|>", "<|im_end|>", "<|begin_of_text|>",
           "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"]  # fmt: skip


def conversation_texts(rows: Iterable[dict[str, Any]], *columns: str) -> list[str]:
    """The texts of rows' message columns and tools, to train the tokenizer on."""
    out = []
    for r in rows:
        out.append(_text(r.get("tools")))
        for column in columns or ("messages",):
            for m in r[column] or []:
                out += [m["content"] or "", m.get("reasoning_content") or ""]
                for c in m["tool_calls"] or []:
                    out.append(c["function"]["name"] + " " + _text(c["function"]["arguments"]))
    return out


def _text(value: Any) -> str:
    """JSON as text: as the Parquet column holds it, or as ``load_dataset`` gives it (objects)."""
    if value is None or isinstance(value, str):
        return value or ""
    return json.dumps(value, ensure_ascii=False)


def build(texts: list[str], template: str = "chatml") -> Any:
    """A byte-level BPE tokenizer (any text encodes and decodes exactly)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    every_byte = pre_tokenizers.ByteLevel.alphabet()  # so any text encodes without <unk>
    trainer = trainers.BpeTrainer(
        vocab_size=800, special_tokens=SPECIAL, initial_alphabet=every_byte
    )
    tok.train_from_iterator(texts, trainer)
    eos = "<|eot_id|>" if template == "llama3" else "<|im_end|>"
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, unk_token="<unk>", pad_token="<pad>", eos_token=eos
    )
    fast.chat_template = (DATA / "templates" / f"{template}.jinja").read_text(encoding="utf-8")
    return fast


def saved(texts: list[str], folder: Path, template: str = "chatml") -> Path:
    """``build`` saved as a tokenizer folder (what ``--tokenizer`` takes)."""
    build(texts, template).save_pretrained(folder)
    return folder
