"""The redaction rule set's version: stable, order-free, changed by any rule, on every row."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq

from trajset.pipeline import ExportOptions, RunOptions, run_export, sample_store
from trajset.pipeline.tables import CONFIGS
from trajset.redactors import UNREDACTED, ruleset_version, selected_rules


def test_the_version_names_the_rules_not_their_order_or_secrets() -> None:
    rules = selected_rules()
    version = ruleset_version(rules)
    assert version.startswith("rs-") and len(version) == 3 + 12
    assert ruleset_version(list(reversed(rules))) == version
    assert ruleset_version(selected_rules(["pii"])) != version  # a rule more
    assert ruleset_version([r.replace("_v3", "_v2") for r in rules]) != version  # a rule's version
    assert ruleset_version(rules, [("ticket_v1", r"T-\d+")]) != version  # a custom rule
    assert ruleset_version(rules, [("ticket_v1", r"T-\d{4}")]) != ruleset_version(
        rules, [("ticket_v1", r"T-\d+")]
    )  # its pattern
    assert ruleset_version([]) == UNREDACTED
    # literal secrets are values, not rules: they never change the version (nor enter it)
    assert ExportOptions(secret_count=2, term_count=3).redaction_version() == version


def test_every_row_carries_the_version_the_manifest_names(sample_export: Path) -> None:
    manifest = json.loads((sample_export / "manifest.json").read_text(encoding="utf-8"))
    version = manifest["redaction"]["version"]
    assert version == ExportOptions().redaction_version()
    for name in CONFIGS:
        for shard in (sample_export / "data" / name).glob("*.parquet"):
            stamps = pq.read_table(shard, columns=["redaction_version"]).column(0)
            assert set(stamps.to_pylist()) <= {version}, shard


def test_an_unredacted_export_says_so_on_every_row(tmp_path: Path) -> None:
    out = tmp_path / "out"
    run_export([sample_store()], out, ExportOptions(redact=False), RunOptions(workers=1))
    table = pq.read_table(out / "data" / "trajectories", columns=["redaction_version"])
    assert set(table.column(0).to_pylist()) == {UNREDACTED}
