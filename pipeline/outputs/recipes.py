"""The dataset card's ``## Usage``: recipes for the configs an export holds, runnable as written.

Each recipe is a Python block that stands alone once ``REPO`` (this folder or its Hub id) and
``MODEL`` (any chat model) are set; a recipe is shown only when its config has rows, so every
recipe of a card runs on that card's dataset (``tests/test_recipes.py`` runs them on every
store kind with a tiny model).
"""

from __future__ import annotations

HEADER = """## Usage

Set `REPO` to this folder or its Hub id and `MODEL` to a chat model; each block then runs as
written. `tools` and each tool call's `arguments` load as objects (the card declares them
`Json()`), as chat templates that write `arguments | tojson` expect.

```python
import torch
from datasets import load_dataset

REPO = "PATH_OR_REPO"
MODEL = "Qwen/Qwen2.5-0.5B-Instruct"  # any chat model
GPU = torch.cuda.is_available()  # each trainer below runs on a GPU, or on the CPU without one
DEVICE = dict(use_cpu=not GPU, bf16=GPU and torch.cuda.is_bf16_supported())
MAX_LENGTH = {max_length}  # tokens a row may take (see below)
```

{lengths}
"""

EVALUATE = """### Filter trajectories (evaluation)

```python
paths = load_dataset(REPO, "trajectories", split="train")  # every root-to-leaf path
passed = paths.filter(lambda r: r["outcome_pass"] is True)  # judged on their own part
clean = paths.filter(lambda r: r["n_failed_tool_calls"] == 0 or r["recovered"])
kept = paths.filter(lambda r: r["is_preferred"])  # the preferred path of each tree
```

`outcome_score`, `outcome_pass` and `outcome_label` judge a trajectory's own part (below its
last fork): an outcome on a shared prefix is no branch's own, so an abandoned branch never
inherits it. The same columns filter at export: `--where "outcome_pass and n_failed_tool_calls
= 0"`. Quality columns: `n_user_turns`, `n_tool_calls`, `n_failed_tool_calls` (outputs the
store marks failed: an error result, a non-zero exit code), `recovered` (a failed call later
followed by a successful call of the same tool), `duration_sec` (first to last message or
response); an `sft` row's cover the entries its window adds.
"""

SFT = """### Supervised fine-tuning (`sft`)

```python
from trl import SFTConfig, SFTTrainer

sft = load_dataset(REPO, "sft", split="train")
trainer = SFTTrainer(model=MODEL, train_dataset=sft.select_columns(["messages", "tools"]),
                     args=SFTConfig(output_dir="sft-out", **DEVICE, max_length=MAX_LENGTH,
                                     assistant_only_loss=True))
trainer.train()
```

`sft` holds the preferred paths only, one row per context window (a compaction starts a new
window, so no row is longer than what the model saw). In each row `trainable` is true exactly
on the model's own answers in that window; the copied context (a summary and the kept tail)
and harness-injected turns are there as context with `trainable: false`. Every answer is
trainable in exactly one row. `trajectories` keeps every path whole, abandoned branches
included: training on it trains shared prefixes once per branch.

TRL's `assistant_only_loss` needs a chat template with generation tags (drop it for one
without) and masks every assistant turn: it does not read `trainable`, so it also trains on
copied answers. To honour the flags, mask from `trainable` yourself, or tokenize the export
(`trajset tokenize DIR --tokenizer MODEL`) and train on `tokenized`.

`tools` are the definitions the session recorded (`tools_source: recorded`) or, where the
store records none (Claude Code), JSON Schemas inferred from every call the store holds of that
agent name and version (`tools_source: inferred`): each argument's observed JSON types, and
`required` for the arguments present in every call; descriptions are empty.
"""

DPO = """### Preference tuning (`preferences`, DPO)

```python
from trl import DPOConfig, DPOTrainer

pairs = load_dataset(REPO, "preferences", split="train")
pairs = pairs.filter(lambda r: r["granularity"] == "turn")  # or "trajectory": whole branches
trainer = DPOTrainer(model=MODEL, train_dataset=pairs.select_columns(["prompt", "chosen", "rejected", "tools"]),
                     args=DPOConfig(output_dir="dpo-out", **DEVICE, max_length=MAX_LENGTH))
trainer.train()
```

A pair is an abandoned branch against the preferred branch of the same fork, after their
shared context (`prompt`). `kind: response` pairs are two answers to the same context (a
regenerated answer): the classic DPO pair. `kind: prompt` pairs start with two different user
inputs (an edited prompt, a rewind) and the answers each led to: both sides hold the user's
turn, so the loss also covers what the user wrote; keep them to learn which continuation the
user kept, or filter `r["kind"] == "response"` where the store has such pairs. `turn` sides end
at the next user input; `trajectory` sides run to each branch's preferred leaf.
`chosen_score` and `rejected_score` are each branch's best score (what `--prefer score`
compares); under `score` (Harbor jobs' own signal) the chosen side scores above the rejected
one, and two branches scored alike make no pair.
"""

REWARD = """### Reward modelling (`preferences`)

```python
from trl import RewardConfig, RewardTrainer

pairs = load_dataset(REPO, "preferences", split="train")
trainer = RewardTrainer(model=MODEL, train_dataset=pairs.select_columns(["prompt", "chosen", "rejected", "tools"]),
                        args=RewardConfig(output_dir="reward-out", **DEVICE, max_length=MAX_LENGTH))
trainer.train()
```

The same pairs train a reward model: a sequence classifier on `MODEL` that scores the chosen
side above the rejected one after the same prompt. Where the store scores its branches
(Harbor's verifier rewards), `margin` is their difference.
"""

KTO = """### Unpaired preferences (`kto`, KTO)

```python
from trl import KTOConfig, KTOTrainer

kto = load_dataset(REPO, "kto", split="train")
trainer = KTOTrainer(model=MODEL, train_dataset=kto.select_columns(["prompt", "completion", "label", "tools"]),
                     args=KTOConfig(output_dir="kto-out", **DEVICE, max_length=MAX_LENGTH))
trainer.train()
```

By default each pair gives its chosen side labelled true and its rejected side false (`source:
pair`; a side several pairs share is one row); with `--kto-from outcomes`, each trajectory with
a pass verdict of its own gives its own part, labelled by the verdict (`source: outcome`).
"""

TOKENIZED = """### Pre-tokenized training (`tokenized`)

```python
from transformers import AutoTokenizer
from trl import SFTConfig, SFTTrainer

# MODEL must be a model of the tokenizer named under "Tokenization" above
tokens = load_dataset(REPO, "tokenized", split="train")
trainer = SFTTrainer(model=MODEL, processing_class=AutoTokenizer.from_pretrained(MODEL),
                     train_dataset=tokens.select_columns(["input_ids", "assistant_masks"]),
                     args=SFTConfig(output_dir="tokenized-out", **DEVICE))
trainer.train()
```

`assistant_masks` is 1 exactly on the tokens of the assistant messages that are `trainable` in
`sft` (their tool calls and reasoning included where the template renders them, and their
end-of-turn token); TRL turns it into labels. axolotl, torchtune and verl take `input_ids`
with the mask as their loss mask. `pair_tokens` gives each pair's token lengths, to filter
over-long pairs: `short = {r["pair_id"] for r in load_dataset(REPO, "pair_tokens",
split="train") if r["prompt_tokens"] + max(r["chosen_tokens"], r["rejected_tokens"]) <= 4096}`.
"""

TRACES = """### Traces (`traces/`)

```python
import json
import os
from huggingface_hub import snapshot_download

# one file per session, as the Hub's trace viewer shows it; one row per file here
here = REPO if os.path.isdir(REPO) else snapshot_download(
    REPO, repo_type="dataset", allow_patterns="traces/*")
traces = load_dataset("text", data_files=f"{here}/traces/*/*.jsonl", sample_by="document",
                      split="train")
lines = [json.loads(line) for line in traces[0]["text"].splitlines()]
print(lines[0]["trajset"])  # the session, its store kind, the shape, the redaction rule set
```

Claude Code, Codex and Pi sessions are their agent's own files (every branch kept), every
value redacted as the tables are; other stores' sessions are their main trajectory in the Hub's
Session Trace Simple Format. The traces are no config of this card: `datasets` reads a
repository with one builder, Parquet here.
"""

#: config -> the recipe shown when the config has rows
RECIPES = {"trajectories": EVALUATE, "sft": SFT, "preferences": DPO + "\n" + REWARD,
           "kto": KTO, "tokenized": TOKENIZED}  # fmt: skip


def _lengths(counts: dict[str, int]) -> tuple[int, str]:
    """``MAX_LENGTH``: the step of ``sft.LENGTHS`` above the shortest that holds nine in ten
    ``sft`` rows by their estimated length (a step of room for a template's markup and a
    tokenizer that takes more tokens); and the sentence that gives the estimates."""
    from ..tables.sft import ESTIMATED, LENGTHS

    per = {str(x): counts.get(f"{ESTIMATED}{x}", 0) for x in (*LENGTHS, "more")}
    total = sum(per.values())
    if not total:
        return 4096, ""
    held, pick = 0, LENGTHS[-1]
    for i, x in enumerate(LENGTHS):
        held += per[str(x)]
        if held >= 0.9 * total:
            pick = LENGTHS[min(i + 1, len(LENGTHS) - 1)]
            break
    kept = sum(n for x, n in per.items() if x != "more" and int(x) <= pick)
    shown = ", ".join(
        f"{n} up to {x}" if x != "more" else f"{n} longer" for x, n in per.items() if n
    )
    return pick, (
        f"The `sft` rows' lengths in tokens, estimated as characters / 3 (`trajset tokenize` "
        f"counts them with your tokenizer): {shown}. `MAX_LENGTH = {pick}` holds {kept} of {total}; TRL "
        'truncates or drops a longer row ("Dropping fully masked examples"), and its own '
        "default, 1024, would hold fewer. Set it to what your model and memory take."
    )


def usage(configs: list[str], counts: dict[str, int] | None = None) -> str:
    """The usage section for an export whose loadable configs are ``configs`` (``counts``:
    the run's, for the rows' estimated lengths)."""
    if not configs:
        return (
            "## Usage\n\nThis export holds no rows in any config (see Stats and `manifest.json`: "
            "a `--where` that matched nothing, or inputs that did not read), so there is "
            "nothing for `load_dataset` to load.\n"
        )
    max_length, lengths = _lengths(counts or {})
    header = HEADER.format(max_length=max_length, lengths=lengths)
    traces = [TRACES] if (counts or {}).get("trace_files") else []
    return "\n".join([header, *(RECIPES[c] for c in RECIPES if c in configs), *traces])
