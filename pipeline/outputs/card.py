"""The dataset card ``DIR/README.md``: Hub YAML front matter, then what, how, columns and usage.

The YAML declares one config per table with ``data_files`` globs, so
``load_dataset(DIR, "<config>")`` works offline on the folder and on the Hub.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import yaml

from trajset.schemas.columns import meaning

from ..stores import own_preferences
from ..tables import DERIVED, SCHEMAS, TABLES, describe
from .files import atomic_write
from .manifest import write_manifest
from .recipes import usage
from .scores import TaskScores, card_section, task_scores

JSON = Any


#: Arrow types of the declared schemas by their ``datasets`` dtype names
DTYPES = {
    pa.string(): "string",
    pa.bool_(): "bool",
    pa.int8(): "int8",
    pa.int32(): "int32",
    pa.int64(): "int64",
    pa.float64(): "float64",
}


def _feature(t: pa.DataType, json_fields: frozenset[str]) -> dict[str, JSON]:
    """One Arrow type as ``datasets`` writes it in a card: a dtype, a list or a struct."""
    if isinstance(t, pa.StructType):
        return {"struct": features(pa.schema(list(t)), json_fields)}
    if isinstance(t, pa.ListType):
        inner = _feature(t.value_type, json_fields)
        return {"list": inner.get("dtype") or inner.get("struct") or inner}
    if t not in DTYPES:
        raise TypeError(f"no dataset card dtype for Arrow type {t}; add it to card.DTYPES")
    return {"dtype": DTYPES[t]}


def features(schema: pa.Schema, json_fields: frozenset[str] = frozenset()) -> list[JSON]:
    """The card's ``features`` of a table, as ``datasets.Features._to_yaml_list`` gives them
    (computed here, because importing ``datasets`` costs every run 0.4 s and 70 MB); a
    string field named in ``json_fields`` (``Table.json_fields``) is ``Json()``: loaded as
    the objects its text holds."""
    return [
        {"name": f.name, "dtype": "json"}
        if f.name in json_fields and f.type == pa.string()
        else {"name": f.name, **_feature(f.type, json_fields)}
        for f in schema
    ]


def _json_fields(name: str) -> frozenset[str]:
    table = TABLES.get(name)
    return table.json_fields if table is not None else frozenset()


def splits_with_rows(facts: JSON) -> dict[str, JSON]:
    """A table's splits that have rows (``datasets`` cannot load an empty one), train first."""
    splits = facts.get("splits") or {"train": {"rows": facts["rows"], "bytes": facts["bytes"]}}
    return {name: f for name, f in splits.items() if f["rows"] > 0}


def _dataset_info(name: str, facts: JSON) -> dict[str, JSON]:
    """``dataset_info`` of one config, as ``push_to_hub`` writes it, plus the shards' checksums."""
    return {
        "config_name": name,
        "features": features(SCHEMAS[name], _json_fields(name)),
        "splits": [
            {"name": split, "num_bytes": f["bytes"], "num_examples": f["rows"]}
            for split, f in splits_with_rows(facts).items()
        ],
        "download_size": sum(f["num_bytes"] for f in facts["files"].values()),
        "dataset_size": facts["bytes"],
        "download_checksums": facts["files"],
    }


def loadable(manifest: JSON) -> list[str]:
    """The configs with rows: ``datasets`` cannot load an empty split, so those are left out."""
    tables = manifest.get("tables") or {}
    derived = [n for n in DERIVED if n in tables and tables[n]["rows"] > 0]
    return [*(n for n in TABLES if n not in tables or tables[n]["rows"] > 0), *derived]


def front_matter(manifest: JSON, license_id: str, pretty_name: str) -> str:
    """Hub metadata: license, tags, one config per table with rows, and their dataset infos."""
    names = loadable(manifest)
    tables = manifest.get("tables") or {}
    meta: dict[str, JSON] = {
        "license": license_id,
        "pretty_name": pretty_name,
        "tags": ["agent-trajectories", "atif", "tool-calling", "trajset"],
        "task_categories": ["text-generation"],
        "configs": [
            {
                "config_name": n,
                **({"default": True} if i == 0 else {}),
                "data_files": [
                    {"split": split, "path": f"data/{n}/{split}-*.parquet"}
                    for split in (splits_with_rows(tables[n]) if n in tables else {"train": 0})
                ],
            }
            for i, n in enumerate(names)
        ],
    }
    if (manifest.get("counts") or {}).get("trace_files"):  # export --traces
        meta["tags"].append("agent-traces")
    infos = [_dataset_info(n, tables[n]) for n in names if n in tables]
    if infos:
        meta["dataset_info"] = infos
    return "---\n" + yaml.safe_dump(meta, sort_keys=False, allow_unicode=True) + "---\n"


STAT_KEYS = (
    "units",
    "sessions_read",
    "sessions_exported",
    "sessions_failed",
    "trees",
    "forks",
    "trajectories",
    "trajectories_filtered_out",
    "sft_rows",
    "sft_rows_dropped_duplicate",
    "sft_rows_dropped_untrainable",
    "steps",
    "outcomes",
    "pairs",
    "pairs_dropped_identical",
    "pairs_dropped_empty_side",
    "pairs_dropped_no_answer",
    "pairs_dropped_empty_prompt",
    "pairs_dropped_tied",
    "pairs_dropped_unexported",
    "pairs_dropped_duplicate",
    "kto_rows",
    "kto_rows_dropped_not_preferred",
    "kto_rows_dropped_duplicate",
)
#: the configs whose rows a trainer takes, as the stats name them (after deduplication)
TRAINING_CONFIGS = ("sft", "preferences", "kto")


def _stats_section(manifest: JSON) -> list[str]:
    counts, tables = manifest["counts"], manifest.get("tables") or {}
    lines = ["## Stats", "", "| | count |", "|---|---:|"]
    lines += [f"| {key} | {counts.get(key, 0)} |" for key in STAT_KEYS]
    lines += [
        f"| rows of the `{name}` config (after deduplication) | {tables.get(name, {}).get('rows', 0)} |"
        for name in TRAINING_CONFIGS
    ]
    lines.append(f"| errors (see `errors.parquet`) | {manifest['errors']} |")
    return [*lines, ""]


def _configs_section(manifest: JSON) -> list[str]:
    lines = ["## Configs", ""]
    names = loadable(manifest)
    written = [*TABLES, *(n for n in DERIVED if n in (manifest.get("tables") or {}))]
    empty = [n for n in written if n not in names]
    if empty:
        lines += [
            "Tables without rows are written (`data/<table>/`, with the declared schema) but are "
            "not configs, since `datasets` cannot load an empty split: "
            + ", ".join(f"`{n}`" for n in empty)
            + ".",
            "",
        ]
    for name in written:
        lines += [f"### `{name}`", "", describe(name), "", "| column | type | meaning |"]
        lines += ["|---|---|---|"]
        lines += [f"| `{f.name}` | `{f.type}` | {meaning(name, f.name)} |" for f in SCHEMAS[name]]
        lines.append("")
    return [*lines, *_tokenized_section(manifest)]


def _tokenized_section(manifest: JSON) -> list[str]:
    """How the ``tokenized`` config was made, and its token lengths."""
    how = manifest.get("tokenize")
    if not how:
        return []
    c, n = manifest["counts"], how["n_tokens"]
    limit = f"{how['max_tokens']} ({how['overlong']} past it)" if how["max_tokens"] else "none"
    return [
        "### Tokenization", "",
        f"* tokenizer: `{how['tokenizer']}`"
        + (f"; chat template sha256 `{how['chat_template_sha256']}`" if how["chat_template_sha256"] else "; its own chat template"),
        f"* rows: {c.get('tokenized_rows', 0)}; tokens: {c.get('tokens', 0)}, trainable "
        f"{c.get('trainable_tokens', 0)}; per row min {n['min']}, median {n['median']}, max {n['max']}",
        f"* --max-tokens: {limit}; truncated {c.get('tokenized_rows_truncated', 0)}, dropped "
        f"over-long {c.get('tokenized_rows_dropped_overlong', 0)}, without a trainable token "
        f"{c.get('tokenized_rows_dropped_untrainable', 0)}, not renderable "
        f"{c.get('tokenized_rows_dropped_unaligned', 0) + c.get('tokenized_rows_dropped_unrenderable', 0)}"
        + (f"; dropped by a fault of trajset's {internal} (please report it)"
           if (internal := c.get("tokenized_rows_dropped_internal", 0)) else ""),
        "",
    ]  # fmt: skip


def _policies_line(opts: JSON) -> str:
    """``--prefer`` as given, else each store kind's own signal (``Reader.prefer``)."""
    if opts["prefer"]:
        return f"{', '.join(opts['prefer'])} (first decisive wins, `latest` is the fallback)"
    return f"each store's own: {own_preferences()}"


def _made_section(manifest: JSON) -> list[str]:
    opts, redaction = manifest["options"], manifest.get("redaction") or {}
    rules = ", ".join(redaction.get("rules", []))
    return [
        "## How it was made",
        "",
        f"* trajset {manifest['trajset_version']}, dataset format "
        f"{manifest.get('format_version', 1)}; preference policies: {_policies_line(opts)}",
        f"* store kind: {opts['store_kind']}; filter: {opts.get('where') or 'none'}",
        f"* splits: {_splits_line(opts)}{_missing_splits(manifest)}",
        f"* redaction: {'rules ' + rules if opts['redact'] else 'none (exported unredacted)'}",
        "* `manifest.json` holds the input fingerprints, every option and per-stage counts.",
        "",
        "Copied-context steps (kept across a compaction) and `llm_call_count: 0` steps stay in "
        "`messages` as context, with `trainable: false`; only other assistant turns are `trainable`.",
        "",
    ]


def _splits_line(opts: JSON) -> str:
    splits = opts.get("split") or {}
    if not splits:
        return "train only"
    listed = ", ".join(f"`{n}` {f:g}" for n, f in splits.items())
    by = f", stratified by `{opts['split_by']}`" if opts.get("split_by") else ""
    return (
        f"{listed}, the rest `train`{by}; by session, so a tree's branches and pairs are "
        'never in two splits (`load_dataset(REPO, "sft", split="test")`)'
    )


def _missing_splits(manifest: JSON) -> str:
    """The configs that hold no row of a declared split (their sessions all fell in other
    splits): ``load_dataset(..., split=...)`` names the splits a config has."""
    declared = ["train", *(manifest["options"].get("split") or {})]
    tables = manifest.get("tables") or {}
    gaps = []
    for name in (n for n in loadable(manifest) if n in tables):
        missing = [f"`{x}`" for x in declared if x not in splits_with_rows(tables[name])]
        if missing:
            gaps.append(f"`{name}` none of {', '.join(missing)}")
    return f". Not every config holds rows of every split: {'; '.join(gaps)}" if gaps else ""


def card(manifest: JSON, license_id: str, tasks: list[TaskScores] | None = None) -> str:
    """The whole card: front matter, what it is, stats, outcome scores per task (``tasks``),
    configs, redaction, provenance, usage."""
    intro = [
        front_matter(manifest, license_id, "Agent session trajectories"),
        "# Agent session trajectories",
        "",
        "Trajectories of agent sessions exported by trajset "
        f"{manifest['trajset_version']}: every root-to-leaf path of every session tree as an ATIF v1.8 "
        "document (`atif/`), and the tables below as Parquet (`data/`).",
        "",
    ]
    redaction = _redaction_section(manifest["options"], manifest.get("redaction") or {})
    scores = card_section(tasks or [])
    body = [*intro, *_stats_section(manifest), *scores, *_configs_section(manifest), *redaction]
    return "\n".join(
        [*body, *_made_section(manifest), usage(loadable(manifest), manifest["counts"])]
    )


def _redaction_section(opts: JSON, redaction: JSON) -> list[str]:
    """Per rule: findings in the sessions and placeholders in each output (counts, never text)."""
    if not opts["redact"]:
        return ["## Redaction", "", "None: this dataset was exported with `--no-redact`.", ""]
    outputs = redaction.get("outputs", {})
    tables = sorted(outputs)
    lines = [
        "## Redaction",
        "",
        "Findings per rule in the sessions, and placeholders per rule in each output:",
        "",
        "| rule | found | " + " | ".join(tables) + " |",
        "|---|---:|" + "---:|" * len(tables),
    ]
    for rule, n in sorted(redaction.get("findings", {}).items()):
        base = rule.rsplit("_v", 1)[0]
        lines.append(
            f"| `{rule}` | {n} | " + " | ".join(str(outputs[t].get(base, 0)) for t in tables) + " |"
        )
    lines += [
        "",
        "Rules in force: " + ", ".join(f"`{r}`" for r in redaction.get("rules", [])) + ".",
        "Context entries changed in sessions with recorded request hashes: "
        f"{redaction.get('hashed_context_entries_changed', 0)} (their request hashes no longer verify).",
        "",
    ]
    return lines


def write_manifest_and_card(out: Path, manifest: JSON) -> None:
    """``manifest.json``, then the card from it (with each task's outcome scores): what an
    export, and ``trajset tokenize`` after it, write last.  The files the manifest names are
    on the disk first (one ``sync``: a crash after it cannot leave a manifest naming files
    still in the page cache)."""
    os.sync()
    written = write_manifest(out, manifest)
    license_id = written["options"].get("license") or "other"
    atomic_write(out / "README.md", card(written, license_id, task_scores(out)).encode())
