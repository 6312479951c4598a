"""Tokenizing one shard of ``sft`` or ``preferences`` into its ``tokenized`` or ``pair_tokens``
shard, as a job any executor runs (the tokenizer is loaded once per worker, where it runs).

An output shard is named as its input shard (``train-00000-of-00002.parquet``), so
the configs' files follow the same splits and the bytes do not depend on how many
workers ran them.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from ..errors import UsageError
from ..outputs.parquet import to_table, write_single
from ..tokenizing import TokenizeOptions
from .render import Renderer
from .rows import pair_rows, tokenized_rows

#: the config each input config's rows are tokenized into
INTO = {"sft": "tokenized", "preferences": "pair_tokens"}
ROW_GROUP_BYTES = 100 << 20


def load_tokenizer(options: TokenizeOptions) -> Any:
    """The fast tokenizer ``--tokenizer`` names, with ``--chat-template`` when given;
    ``UsageError`` saying how to fix a missing extra, tokenizer or template."""
    try:
        from transformers import AutoTokenizer
    except ImportError:
        raise UsageError(
            "tokenizing needs transformers and tokenizers: pip install 'trajset[tokenize]'"
        ) from None
    name = options.tokenizer
    try:
        tokenizer = AutoTokenizer.from_pretrained(name)
    except (OSError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise UsageError(
            f"--tokenizer {name}: cannot load it ({first}); give a folder holding "
            "tokenizer.json (save_pretrained) or a Hub id"
        ) from None
    if not tokenizer.is_fast:
        raise UsageError(f"--tokenizer {name}: a fast tokenizer (tokenizer.json) is needed")
    if options.chat_template:
        tokenizer.chat_template = options.chat_template
    if not tokenizer.chat_template:
        raise UsageError(f"--tokenizer {name} has no chat template; give --chat-template FILE")
    return tokenizer


@dataclass
class ShardResult:
    """What one shard gave: its file's facts, its rows' token counts, and what was dropped."""

    config: str
    path: str  # relative to the export folder
    rows: int
    nbytes: int
    num_bytes: int
    checksum: str
    split: str
    counts: Counter[str]
    n_tokens: list[int]


class ShardJob:
    """Tokenize the shard ``(export folder, input shard's relative path)``."""

    def __init__(self, options: TokenizeOptions) -> None:
        self.options = options
        self._renderer: Renderer | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {"options": self.options, "_renderer": None}  # each worker loads its own

    def __call__(self, task: tuple[str, str]) -> ShardResult:
        out, source = Path(task[0]), Path(task[1])
        if self._renderer is None:
            self._renderer = Renderer(load_tokenizer(self.options))
        rows, counts = pq.read_table(out / source).to_pylist(), Counter[str]()
        config = INTO[source.parent.name]
        made = (
            list(tokenized_rows(self._renderer, rows, self.options.limits, counts))
            if config == "tokenized"
            else list(pair_rows(self._renderer, rows, counts))
        )
        table = to_table(config, made)
        target = Path("data") / config / source.name
        write_single(out / target, table, ROW_GROUP_BYTES)
        data = (out / target).read_bytes()
        return ShardResult(
            config, target.as_posix(), table.num_rows, int(table.nbytes), len(data),
            hashlib.sha256(data).hexdigest(), source.name.rsplit("-", 3)[0], counts,
            [r["n_tokens"] for r in made] if config == "tokenized" else [],
        )  # fmt: skip
