"""``trajset validate DIR``: every ATIF document, every table, the card's configs, the rows.

Documents are checked with the ATIF v1.8 models; each Parquet file must have
exactly the declared schema; every config of the card's YAML must point at
files that exist, and every table folder must be a config; ``sft`` and ``steps``
rows must pass the row checks every training row must (``row_checks``); every trace
must read back as the viewer's format (``traces.check``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import yaml

from trajset.schemas.atif import validate_document

from ..tables import CONFIGS, DERIVED, SCHEMAS
from .row_checks import sft_violations, steps_violations
from .traces import FOLDER
from .traces.check import trace_problems


def card_metadata(readme: Path) -> dict[str, Any]:
    """The card's YAML front matter ({} when there is none); ``ValueError`` when it does not parse."""
    text = readme.read_text(encoding="utf-8")
    if not text.startswith("---\n") or "\n---" not in text[3:]:
        return {}
    meta = yaml.safe_load(text[4 : text.index("\n---", 3)])
    if not isinstance(meta, dict):
        raise ValueError("the front matter is not a mapping")
    return meta


def card_configs(readme: Path) -> dict[str, str]:
    """``config_name -> data_files path`` from the card's YAML front matter."""
    configs: dict[str, str] = {}
    for c in card_metadata(readme).get("configs") or []:
        files = c.get("data_files") if isinstance(c, dict) else None
        if isinstance(files, list) and files and isinstance(files[0], dict):
            configs[str(c.get("config_name"))] = str(files[0].get("path"))
    return configs


def _table_problems(directory: Path) -> tuple[list[str], int, dict[str, int]]:
    """Schema problems of every table, how many files were checked, and each table's rows."""
    problems: list[str] = []
    checked, rows = 0, {}
    derived = [n for n in DERIVED if (directory / "data" / n).is_dir()]
    for name in (*CONFIGS, *derived, "errors"):
        files = (
            [directory / "errors.parquet"]
            if name == "errors"
            else sorted((directory / "data" / name).glob("*.parquet"))
        )
        if not files or not files[0].exists():
            problems.append(f"{directory}: table {name} is missing")
            continue
        rows[name] = 0
        for f in files:
            checked += 1
            try:
                pf = pq.ParquetFile(f)
            except Exception as exc:  # pyarrow raises several error types for a broken file
                problems.append(f"{f}: not a readable Parquet file ({exc})")
                continue
            rows[name] += pf.metadata.num_rows
            if not pf.schema_arrow.remove_metadata().equals(SCHEMAS[name].remove_metadata()):
                problems.append(
                    f"{f}: schema differs from the declared {name} schema (see `trajset schema {name}`)"
                )
    return problems, checked, rows


def _card_problems(directory: Path, rows: dict[str, int]) -> list[str]:
    readme = directory / "README.md"
    if not readme.exists():
        return [f"{directory}: no dataset card README.md"]
    try:
        meta = card_metadata(readme)
    except (ValueError, yaml.YAMLError) as exc:
        return [f"{readme}: the metadata does not parse ({str(exc).splitlines()[0]})"]
    configs = card_configs(readme)
    problems = []
    for name in (*CONFIGS, *(n for n in DERIVED if n in rows)):
        if name not in configs and rows.get(name, 0) > 0:
            problems.append(f"{readme}: no config for table {name}")
        elif name in configs and not list(directory.glob(configs[name])):
            problems.append(
                f"{readme}: config {name} points at {configs[name]}, which matches no file"
            )
    for extra in sorted(set(configs) - set(CONFIGS) - set(DERIVED)):
        problems.append(f"{readme}: config {extra} is not a trajset table")
    for info in meta.get("dataset_info") or []:
        name = info.get("config_name")
        declared = sum(s.get("num_examples", 0) for s in info.get("splits") or [])
        if name in rows and declared != rows[name]:
            problems.append(
                f"{readme}: dataset_info of {name} says {declared} rows, the files hold {rows[name]}"
            )
    return problems


def _rows(directory: Path, table: str, columns: list[str]) -> list[dict[str, Any]]:
    files = sorted((directory / "data" / table).glob("*.parquet"))
    return [r for f in files for r in pq.read_table(f, columns=columns).to_pylist()]


def _row_problems(directory: Path) -> list[str]:
    """The row checks (``row_checks``) over ``sft`` and ``steps``, in file order."""
    try:
        sft = _rows(directory, "sft", ["session_id", "leaf_id", "window", "messages"])
        steps = _rows(
            directory,
            "steps",
            ["session_id", "leaf_id", "step_id", "prompt_tokens", "is_copied_context", "extra"],
        )
    except Exception:  # a broken or mis-shaped file is the schema check's report
        return []
    return [str(v) for v in (*sft_violations(sft), *steps_violations(steps))]


def validate_folder(directory: Path) -> tuple[list[str], str]:
    """Problems of the folder (documents, tables, card, row checks) and a one-line summary."""
    problems: list[str] = []
    docs = sorted((directory / "atif").glob("*.json"))
    for f in docs:
        try:
            err = validate_document(json.loads(f.read_text(encoding="utf-8")))
        except (OSError, ValueError, RecursionError) as exc:
            err = f"not readable JSON: {exc}"
        if err:
            problems.append(f"{f}: {err}")
    traces = sorted((directory / FOLDER).glob("*/*.jsonl"))
    for f in traces:
        problems += trace_problems(f)
    table_problems, checked, rows = _table_problems(directory)
    problems += table_problems + _card_problems(directory, rows) + _row_problems(directory)
    also = f", {len(traces)} traces" if traces else ""
    summary = (
        f"{len(docs)} ATIF documents, {checked} Parquet files{also} checked: "
        f"{len(problems)} problem(s)"
    )
    return problems, summary
