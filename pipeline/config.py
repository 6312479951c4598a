"""``--config FILE.toml``: export options and custom redaction rules in one file.

::

    [export]
    prefer = ["label:kept", "score"]
    where = "outcome_pass"
    license = "mit"
    redact = ["pii"]
    secret_env = ["OPENAI_API_KEY"]
    workers = 4

    [[redact.rules]]
    name = "ticket_id_v1"
    pattern = "TICKET-[0-9]{5}"

Options given on the command line win over the file.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from .errors import UsageError

EXPORT_KEYS = {
    "prefer": list,
    "where": str,
    "license": str,
    "redact": list,
    "secret_env": list,
    "workers": int,
    "no_redact": bool,
    "store_kind": str,
}


def load_config(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(export options, custom redaction rules) from a TOML file."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"--config {path}: cannot read it ({exc.strerror})") from None
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"--config {path}: not valid TOML ({exc})") from None
    unknown_tables = sorted(set(data) - {"export", "redact"})
    if unknown_tables:
        raise UsageError(
            f"--config {path}: unknown table(s) {', '.join(unknown_tables)}; valid: export, redact"
        )
    export = data.get("export", {})
    for key, value in export.items():
        if key not in EXPORT_KEYS:
            raise UsageError(
                f"--config {path}: unknown option export.{key}; valid: {', '.join(EXPORT_KEYS)}"
            )
        if not isinstance(value, EXPORT_KEYS[key]):
            raise UsageError(f"--config {path}: export.{key} must be a {EXPORT_KEYS[key].__name__}")
    redact = data.get("redact", {})
    unknown = sorted(set(redact) - {"rules"})
    if unknown:
        raise UsageError(
            f"--config {path}: unknown option redact.{unknown[0]}; valid: redact.rules"
        )
    rules = redact.get("rules", [])
    if not isinstance(rules, list) or not all(isinstance(r, dict) for r in rules):
        raise UsageError(
            f"--config {path}: redact.rules must be an array of tables [[redact.rules]]"
        )
    return export, rules
