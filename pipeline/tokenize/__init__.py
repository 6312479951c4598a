"""``trajset tokenize DIR`` (and ``export --tokenizer``): the ``tokenized`` and ``pair_tokens``
configs of an export, rendered with a tokenizer's own chat template.

Every ``sft`` row becomes ``input_ids`` and ``assistant_masks`` (1 exactly on
the tokens of the assistant messages the tree marks trainable, ``render.py``);
every ``preferences`` row gets the token lengths of its prompt and sides.  The
shards are tokenized through the run's executor (local workers or Ray), each
into the shard of the same name, then the manifest (tables, counts, the
tokenizer) and the dataset card are written again.  Needs the ``tokenize``
extra (``transformers``, ``tokenizers``).
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..executors import Executor
from ..outputs.card import write_manifest_and_card
from ..tokenizing import Limits, TokenizeOptions
from .shards import INTO, Chunk, ChunkJob, ShardResult, load_tokenizer, tasks, write_shard

JSON = Any
Progress = Callable[[int, int, str], None]


def _facts(results: Iterable[ShardResult]) -> dict[str, JSON]:
    """A config's facts, as the manifest keeps every table's: rows, bytes, files, splits."""
    facts: dict[str, JSON] = {"rows": 0, "bytes": 0, "files": {}, "splits": {}}
    for r in results:
        facts["rows"] += r.rows
        facts["bytes"] += r.nbytes
        facts["files"][r.path] = {"num_bytes": r.num_bytes, "checksum": r.checksum}
        split = facts["splits"].setdefault(r.split, {"rows": 0, "bytes": 0})
        split["rows"] += r.rows
        split["bytes"] += r.nbytes
    return facts


def _described(options: TokenizeOptions, tokenizer: str, lengths: list[int]) -> dict[str, JSON]:
    """What the manifest says of the tokenizing: never a local path, only its folder's name."""
    template = options.chat_template or ""
    lengths = sorted(lengths)
    return {
        "tokenizer": tokenizer,
        "chat_template_sha256": hashlib.sha256(template.encode()).hexdigest() if template else None,
        "max_tokens": options.limits.max_tokens,
        "overlong": options.limits.overlong,
        "n_tokens": {
            "min": lengths[0] if lengths else 0,
            "median": lengths[len(lengths) // 2] if lengths else 0,
            "max": lengths[-1] if lengths else 0,
        },
    }


def tokenize_export(
    out: Path,
    options: TokenizeOptions,
    executor: Executor,
    progress: Progress | None = None,
) -> dict[str, int]:
    """Write the two configs into the export at ``out`` and update its manifest and card;
    returns the counts added.  ``UsageError`` when ``out`` is no export or the tokenizer
    cannot be loaded."""
    manifest_path = out / "manifest.json"
    if not manifest_path.is_file():
        raise UsageError(f"{out}: no manifest.json; give the folder `trajset export` wrote")
    load_tokenizer(options)  # fail before any file is touched
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    todo = tasks(out)
    for config in INTO.values():
        shutil.rmtree(out / "data" / config, ignore_errors=True)
    results: list[ShardResult] = []
    chunks: list[Chunk] = []
    for done, chunk in enumerate(executor.map(ChunkJob(options), todo), 1):
        if chunks and chunk.task.source != chunks[0].task.source:
            results.append(write_shard(chunks))
            chunks = []
        chunks.append(chunk)
        if progress:
            progress(done, len(todo), "chunks tokenized")
    if chunks:
        results.append(write_shard(chunks))
    counts: Counter[str] = Counter()
    for r in results:
        counts.update(r.counts)
    lengths = [n for r in results for n in r.n_tokens]
    counts.update(
        tokenized_rows=len(lengths), tokens=sum(lengths),
        pair_tokens_rows=sum(r.rows for r in results if r.config == "pair_tokens"),
    )  # fmt: skip
    for config in INTO.values():
        manifest["tables"][config] = _facts(r for r in results if r.config == config)
    manifest["counts"] = {**manifest["counts"], **counts}
    given = Path(options.tokenizer)
    manifest["tokenize"] = _described(
        options, given.name if given.exists() else options.tokenizer, lengths
    )
    write_manifest_and_card(out, manifest)
    return dict(counts)


__all__ = ["Limits", "TokenizeOptions", "tokenize_export"]
