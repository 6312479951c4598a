"""Tokenizing the shards of ``sft`` and ``preferences`` into ``tokenized`` and ``pair_tokens``
shards, in chunks of rows any executor runs (the tokenizer is loaded once per worker).

An output shard is its input shard's chunks in order, named as the input shard
(``train-00000-of-00002.parquet``), so the configs' files follow the same splits and
the bytes do not depend on how many workers ran them.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from ..errors import UsageError
from ..outputs.parquet import write_single
from ..outputs.part_files import to_table
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


#: rows of an input shard tokenized by one task (the unit of parallelism: a shard is cut
#: into such chunks, so two workers share even a store of one shard)
TASK_ROWS = 64


@dataclass(frozen=True)
class Task:
    """Rows ``start`` to ``stop`` of row group ``group`` of the input shard ``source`` of the
    export ``out`` (a task decodes its own row group only, never the whole shard)."""

    out: str
    source: str  # relative to ``out``: data/sft/train-00000-of-00001.parquet
    group: int
    start: int
    stop: int


def tasks(out: Path) -> list[Task]:
    """Every input shard's chunks, in config, shard and row order (a shard without rows
    gives one empty chunk, so its output shard is written too)."""
    found = []
    for config in INTO:
        for path in sorted((out / "data" / config).glob("*.parquet")):
            meta = pq.ParquetFile(path).metadata
            source = path.relative_to(out).as_posix()
            sizes = [meta.row_group(g).num_rows for g in range(meta.num_row_groups)] or [0]
            found += [Task(str(out), source, g, a, min(a + TASK_ROWS, rows))
                      for g, rows in enumerate(sizes)
                      for a in range(0, max(rows, 1), TASK_ROWS)]  # fmt: skip
    return found


@dataclass
class Chunk:
    """What one task made: its rows as a table of the output config, and what it counted."""

    task: Task
    table: pa.Table
    counts: Counter[str]


class ChunkJob:
    """Tokenize one ``Task``; the tokenizer is loaded once per worker, where the job runs."""

    def __init__(self, options: TokenizeOptions) -> None:
        self.options = options
        self._renderer: Renderer | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {"options": self.options, "_renderer": None}  # each worker loads its own

    def __call__(self, task: Task) -> Chunk:
        if self._renderer is None:
            self._renderer = Renderer(load_tokenizer(self.options))
        path = Path(task.out) / task.source
        group = pq.ParquetFile(path, memory_map=True)
        table = group.read_row_group(task.group) if group.num_row_groups else group.read()
        rows = table.slice(task.start, task.stop - task.start).to_pylist()
        config, counts = INTO[Path(task.source).parent.name], Counter[str]()
        made = (
            list(tokenized_rows(self._renderer, rows, self.options.limits, counts))
            if config == "tokenized"
            else list(pair_rows(self._renderer, rows, counts))
        )
        return Chunk(task, to_table(config, made), counts)


@dataclass
class ShardResult:
    """An output shard written: its file's facts, its rows' token counts, what was dropped."""

    config: str
    path: str  # relative to the export folder
    rows: int
    nbytes: int
    num_bytes: int
    checksum: str
    split: str
    counts: Counter[str]
    n_tokens: list[int]


def write_shard(chunks: list[Chunk]) -> ShardResult:
    """The chunks of one input shard, in order, as the output shard of the same name."""
    task = chunks[0].task
    source = Path(task.source)
    config = INTO[source.parent.name]
    table = pa.concat_tables([c.table for c in chunks])
    target = Path("data") / config / source.name
    write_single(Path(task.out) / target, table, ROW_GROUP_BYTES)
    data = (Path(task.out) / target).read_bytes()
    counts = sum((c.counts for c in chunks), Counter[str]())
    n_tokens = table.column("n_tokens").to_pylist() if config == "tokenized" else []
    return ShardResult(
        config, target.as_posix(), table.num_rows, int(table.nbytes), len(data),
        hashlib.sha256(data).hexdigest(), source.name.rsplit("-", 3)[0], counts, n_tokens,
    )  # fmt: skip
