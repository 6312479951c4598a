"""Per-batch parts and completion markers under ``DIR/.trajset/`` (what ``--mode resume`` uses).

A batch's share of every table is one or more Arrow IPC parts; a finished
batch leaves a marker holding its units' results, named by ``batch_key`` (the
input paths themselves are not stored: they may hold a home path).  ``options.json``
records the options a folder was started with, so a resume cannot mix them.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from dataclasses import asdict
from pathlib import Path

from ..errors import UsageError
from ..options import ExportOptions
from ..outputs.files import atomic_write
from .batches import Batch, batch_key
from .results import BatchResult

STATE = ".trajset"


def part_path(out: Path, batch: Batch, seq: int, table: str) -> Path:
    return out / STATE / "parts" / table / f"{batch_key(batch)}-{seq:04d}.arrow"


def marker_path(out: Path, batch: Batch) -> Path:
    return out / STATE / "units" / (batch_key(batch) + ".json")


def read_marker(out: Path, batch: Batch) -> BatchResult | None:
    """The batch's finished result; None without a marker or with one from an older layout."""
    path = marker_path(out, batch)
    if not path.exists():
        return None
    data = json.loads(path.read_text())
    if not isinstance(data, dict) or "units" not in data or len(data["units"]) != len(batch):
        return None
    if "audit" not in data or not all(isinstance(u, dict) and "ledger" in u for u in data["units"]):
        return None  # written before batches kept a ledger and an audit: run again
    return BatchResult.from_json(batch, data)


def write_marker(out: Path, result: BatchResult) -> None:
    atomic_write(marker_path(out, result.batch), json.dumps(result.to_json()).encode())


def drop_state(out: Path) -> None:
    """Remove the parts and markers of a finished run (what only an incremental
    ``--mode resume`` needs, kept with ``--keep-state``); the options and the secrets'
    fingerprint stay, so a later resume still refuses other options."""
    for name in ("parts", "units"):
        shutil.rmtree(out / STATE / name, ignore_errors=True)


def check_resumable(
    out: Path, options: ExportOptions, resume: bool, secrets: tuple[str, ...] = ()
) -> None:
    """``--mode resume`` only finishes a run made with the same options and the same literal
    secrets; records them otherwise (the secrets as a salted fingerprint, never the values)."""
    saved = out / STATE / "options.json"
    current = json.dumps(asdict(options), sort_keys=True)
    if resume and saved.exists() and saved.read_text() != current:
        raise UsageError(
            f"--mode resume: {out} was started with other options ({saved.read_text()}); "
            "resume with the same options or use --mode overwrite"
        )
    salt_file, print_file = out / STATE / "secrets.salt", out / STATE / "secrets.sha256"
    if not (resume and salt_file.exists()):
        atomic_write(salt_file, os.urandom(16).hex().encode())
    salt = salt_file.read_text()
    fingerprint = hashlib.sha256("\0".join([salt, *sorted(secrets)]).encode()).hexdigest()
    if resume and print_file.exists() and print_file.read_text() != fingerprint:
        raise UsageError(
            f"--mode resume: {out} was started with other --secret/--secret-env values; resume "
            "with the same secrets or use --mode overwrite"
        )
    atomic_write(print_file, fingerprint.encode())
    atomic_write(saved, current.encode())
