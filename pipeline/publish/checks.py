"""What must hold before anything of an export folder leaves: finished, valid, redacted, clean."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from trajset.redactors import GROUPS, build_redactor

from ..errors import AbortRun
from ..outputs.validate import validate_folder
from ..scan import scan_folder, second_opinion_of


class PublishRefused(AbortRun):
    """The folder may not be published as it is (exit 1); the message says why and what to do."""

    kind = "publish"


def read_manifest(directory: Path) -> dict[str, Any]:
    try:
        manifest: dict[str, Any] = json.loads(
            (directory / "manifest.json").read_text(encoding="utf-8")
        )
    except (OSError, ValueError):
        raise PublishRefused(
            f"{directory} has no readable manifest.json: the export is partial or did not finish; "
            "finish it with `trajset export ... --mode resume` first"
        ) from None
    return manifest


def check(
    directory: Path, allow_unredacted: bool, accept: frozenset[str] = frozenset()
) -> dict[str, Any]:
    """Refuse what must not leave; returns the manifest.  ``accept``: ids of detect-secrets
    findings someone looked at and found harmless."""
    manifest = read_manifest(directory)
    problems, _ = validate_folder(directory)
    if problems:
        raise PublishRefused(
            f"validate found {len(problems)} problem(s) ({problems[0]}); run `trajset validate {directory}`"
        )
    if not manifest.get("counts", {}).get("trajectories"):
        raise PublishRefused(f"{directory} holds no trajectory; nothing to publish")
    if allow_unredacted:
        return manifest
    rules = set(manifest.get("redaction", {}).get("rules") or [])
    missing = sorted(set(GROUPS["default"]) - rules - {"secrets_v1"})
    if not manifest.get("options", {}).get("redact"):
        raise PublishRefused(
            "the export was made with --no-redact; export again, or pass --allow-unredacted"
        )
    if missing:
        raise PublishRefused(
            f"the export was made without default redaction rules ({', '.join(missing[:3])}); "
            "export again with them, or pass --allow-unredacted"
        )
    findings = scan_folder(directory, build_redactor(sorted(rules | set(GROUPS["default"]))))
    if findings:
        n = sum(sum(c.values()) for c in findings.values())
        rel, counts = next(iter(sorted(findings.items())))
        raise PublishRefused(
            f"scan finds {n} value(s) the redaction rules match in {len(findings)} file(s), "
            f"the first {counts.most_common(1)[0][0]} in {rel}: export again with this trajset "
            f"(`trajset export STORES --out {directory} --mode overwrite`); `trajset scan "
            f"{directory}` lists them all, and --allow-unredacted publishes anyway"
        )
    if second := second_opinion_of(directory, accept):
        f = second[0]
        raise PublishRefused(
            f"detect-secrets finds {len(second)} value(s) the redaction rules left, the first a "
            f"{f.rule} in {f.file} ({f.where}, id {f.id}): if it is a secret, export again with "
            f"`--secret VALUE` or `--secret-env NAME`; if it is none, publish with --accept "
            f"{f.id}; `trajset scan {directory}` lists them all"
        )
    return manifest
