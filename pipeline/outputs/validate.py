"""``trajset validate DIR``: every ATIF document, every table, and the card's configs.

Documents are checked with the ATIF v1.8 models; each Parquet file must have
exactly the declared schema; every config of the card's YAML must point at
files that exist, and every table folder must be a config.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq

from trajset.schemas.atif import validate_document

from ..tables import CONFIGS, SCHEMAS


def card_configs(readme: Path) -> dict[str, str]:
    """``config_name -> data_files path`` from the card's YAML front matter."""
    text = readme.read_text(encoding="utf-8")
    if not text.startswith("---\n"):
        return {}
    yaml_part = text[4 : text.index("\n---", 4)]
    configs: dict[str, str] = {}
    current = ""
    for line in yaml_part.splitlines():
        stripped = line.strip()
        if stripped.startswith("- config_name:"):
            current = stripped.split(":", 1)[1].strip()
        elif stripped.startswith("path:") and current:
            configs[current] = stripped.split(":", 1)[1].strip()
    return configs


def validate_folder(directory: Path) -> tuple[list[str], str]:
    problems: list[str] = []
    docs = sorted((directory / "atif").glob("*.json"))
    for f in docs:
        try:
            err = validate_document(json.loads(f.read_text(encoding="utf-8")))
        except (OSError, ValueError) as exc:
            err = f"not readable JSON: {exc}"
        if err:
            problems.append(f"{f}: {err}")
    tables = 0
    for name in (*CONFIGS, "errors"):
        files = (
            [directory / "errors.parquet"]
            if name == "errors"
            else sorted((directory / "data" / name).glob("*.parquet"))
        )
        if not files or not files[0].exists():
            problems.append(f"{directory}: table {name} is missing")
            continue
        for f in files:
            tables += 1
            try:
                schema = pq.read_schema(f)
            except Exception as exc:  # pyarrow raises several error types for a broken file
                problems.append(f"{f}: not a readable Parquet file ({exc})")
                continue
            if not schema.remove_metadata().equals(SCHEMAS[name].remove_metadata()):
                problems.append(
                    f"{f}: schema differs from the declared {name} schema (see `trajset schema {name}`)"
                )
    readme = directory / "README.md"
    if not readme.exists():
        problems.append(f"{directory}: no dataset card README.md")
    else:
        configs = card_configs(readme)
        for name in CONFIGS:
            if name not in configs:
                problems.append(f"{readme}: no config for table {name}")
            elif not list(directory.glob(configs[name])):
                problems.append(
                    f"{readme}: config {name} points at {configs[name]}, which matches no file"
                )
        for extra in sorted(set(configs) - set(CONFIGS)):
            problems.append(f"{readme}: config {extra} is not a trajset table")
    summary = (
        f"{len(docs)} ATIF documents, {tables} Parquet files checked: {len(problems)} problem(s)"
    )
    return problems, summary
