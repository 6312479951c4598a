"""Golden files for the bundled sample store: every table, every ATIF document, the manifest counts.

Compared as JSON values.  After a deliberate change of output, regenerate with
``TRAJSET_UPDATE_GOLDEN=1 python -m pytest tests/test_golden.py`` and review the diff.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from trajset.pipeline.tables import CONFIGS

from .conftest import DATA

GOLDEN = DATA / "golden" / "sample_store"
UPDATE = bool(os.environ.get("TRAJSET_UPDATE_GOLDEN"))


@pytest.fixture(scope="module")
def exported(sample_export: Path) -> Path:
    return sample_export


def _table(path: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = pq.read_table(path).to_pylist()
    return rows


def _check(name: str, actual: Any) -> None:
    path = GOLDEN / name
    value = json.loads(json.dumps(actual, ensure_ascii=False))
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(value, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    assert path.exists(), f"no golden file {path}; run with TRAJSET_UPDATE_GOLDEN=1"
    assert value == json.loads(path.read_text(encoding="utf-8")), name


@pytest.mark.parametrize("table", [*CONFIGS, "errors"])
def test_table_equals_golden(exported: Path, table: str) -> None:
    files = (
        [exported / "errors.parquet"]
        if table == "errors"
        else sorted((exported / "data" / table).glob("*.parquet"))
    )
    rows = [r for f in files for r in _table(f)]
    if table == "errors":
        for r in rows:  # the source path is where the package is installed
            r["source"] = Path(r["source"]).name
    _check(f"{table}.json", rows)


def test_documents_equal_golden(exported: Path) -> None:
    docs = sorted((exported / "atif").glob("*.json"))
    assert len(docs) == 8
    for doc in docs:
        _check(f"atif/{doc.name}", json.loads(doc.read_text(encoding="utf-8")))
    media = sorted(
        p.relative_to(exported / "atif").as_posix()
        for p in (exported / "atif").rglob("*.*")
        if p.parent != exported / "atif"
    )
    _check("media.json", media)


def test_manifest_counts_equal_golden(exported: Path) -> None:
    manifest = json.loads((exported / "manifest.json").read_text(encoding="utf-8"))
    redaction = {k: manifest["redaction"][k] for k in ("rules", "findings", "outputs")}
    _check(
        "manifest.json",
        {"counts": manifest["counts"], "errors": manifest["errors"], "redaction": redaction},
    )
