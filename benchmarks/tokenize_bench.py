"""What tokenizing costs: ``trajset export`` with and without ``--tokenizer``, and
``trajset tokenize`` with 1 and 2 workers (tokens per second per worker), in one run.

    python benchmarks/corpus.py corpus /tmp/corpus --sessions 200 --tool-output-kb 36 --seed 1
    python benchmarks/tokenize_bench.py /tmp/corpus --repeat 3

The tokenizer is built here, offline: a byte-level BPE of ``--vocab`` tokens trained on the
corpus's own ``sft`` texts, with the ChatML template of the tests (a stand-in for a model's
tokenizer; a real one's vocabulary is larger, which changes the token count more than the
time). Wall time of each command, from process start; the runs alternate ``--repeat`` times
and medians are reported, so machine load falls on all of them alike.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow.parquet as pq

TEMPLATE = Path(__file__).parents[1] / "tests" / "data" / "templates" / "chatml.jinja"
SPECIAL = ["<unk>", "<pad>", "<|im_start|>", "<|im_end|>"]


def _run(*args: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "trajset.pipeline", *args, "--quiet"], check=True)
    return time.perf_counter() - start


def _tokenizer(export: Path, folder: Path, vocab: int) -> Path:
    """A byte-level BPE trained on the export's ``sft`` texts, saved with a chat template."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    texts = [
        m["content"] or ""
        for f in sorted((export / "data" / "sft").glob("*.parquet"))
        for r in pq.read_table(f, columns=["messages"]).to_pylist()
        for m in r["messages"]
    ]
    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab, special_tokens=SPECIAL,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())  # fmt: skip
    tok.train_from_iterator(texts, trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", pad_token="<pad>",
                                   eos_token="<|im_end|>")  # fmt: skip
    fast.chat_template = TEMPLATE.read_text(encoding="utf-8")
    fast.save_pretrained(folder)
    return folder


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpus", type=Path)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--vocab", type=int, default=8000)
    a = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="tokenize-bench-"))
    base = work / "base"
    _run("export", str(a.corpus), "--out", str(base), "--workers", "1")
    tok = _tokenizer(base, work / "tokenizer", a.vocab)
    times: dict[str, list[float]] = {k: [] for k in ("export", "export+tok", "tok1", "tok2")}
    for _ in range(a.repeat):
        for name, args in (
            ("export", ["export", str(a.corpus), "--workers", "1"]),
            ("export+tok", ["export", str(a.corpus), "--workers", "1", "--tokenizer", str(tok)]),
        ):
            out = work / name
            shutil.rmtree(out, ignore_errors=True)
            times[name].append(_run(*args, "--out", str(out)))
        for workers in ("1", "2"):
            times[f"tok{workers}"].append(
                _run("tokenize", str(base), "--tokenizer", str(tok), "--workers", workers)
            )
    counts = json.loads((base / "manifest.json").read_text())["counts"]
    tokens, rows = counts["tokens"], counts["tokenized_rows"]
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"corpus {a.corpus}: {rows} tokenized rows, {tokens} tokens (vocab {a.vocab})")
    for k, v in times.items():
        print(f"  {k:<11} " + " / ".join(f"{x:.2f}" for x in v) + f" s (median {med[k]:.2f})")
    print(f"  tokenizing adds {med['export+tok'] - med['export']:.2f} s to the export "
          f"({med['export+tok'] / med['export']:.2f}x)")  # fmt: skip
    for w in (1, 2):
        rate = tokens / med[f"tok{w}"]
        print(
            f"  trajset tokenize, {w} worker(s): {rate:,.0f} tokens/s, {rate / w:,.0f} per worker"
        )
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
