"""``DIR/manifest.json``: version, options, input fingerprints, counts, redaction report, stage stats."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from trajset.redactors import Redactor

from ..options import ExportOptions, RunOptions
from ..outputs.files import atomic_path
from ..stores import SKIPS_LISTED
from .ledger import Ledger
from .results import RunResult

JSON = Any


def redaction_report(options: ExportOptions, ledger: Ledger) -> JSON:
    """Findings per rule in the trees and placeholders per rule in every output; never plaintext."""
    counts = ledger.counts
    return {
        "rules": options.rule_names(),
        "findings": ledger.findings(),
        "outputs": ledger.placeholders(),
        "entries_changed": counts.get("redacted_entries", 0),
        "hashed_context_entries_changed": counts.get("redacted_hashed_context_entries", 0),
        "note": "request hashes of responses whose context was redacted no longer verify; this is expected",
    }


def write_manifest(
    out: Path,
    options: ExportOptions,
    how: RunOptions,
    run: RunResult,
    version: str,
    redactor: Redactor,
    tables: dict[str, JSON] | None = None,
) -> JSON:
    counts = dict(sorted(run.counts.items()))
    manifest = {
        "trajset_version": version,
        "options": {
            "prefer": options.policy_labels(),
            "store_kind": options.store_kind,
            "redact": options.redact,
            "where": options.where,
            "license": options.license,
            "reader_options": dict(options.reader_options),
            "homes": len(options.homes),  # how many --home paths (the paths name their users)
            "max_media_bytes": options.max_media_bytes,
        },
        "inputs": run.inputs,
        "counts": {k: v for k, v in counts.items() if not k.startswith("redacted")},
        "errors": len(run.errors),
        "skipped": [
            {"path": redactor.plain_text(path), "reason": reason}
            for path, reason in run.skipped[:SKIPS_LISTED]
        ],
        "redaction": redaction_report(options, run.ledger),
        "settings": how.settings.to_json(),
        "stages": {k: v.to_json() for k, v in run.stats.stages.items()},
        "tables": tables or {},
    }
    with atomic_path(out / "manifest.json") as tmp, open(tmp, "w", encoding="utf-8") as fh:
        json.dump(manifest, fh, indent=2, ensure_ascii=False)  # streams the spooled inputs
        fh.write("\n")
    return manifest
