"""Per-batch parts and completion markers under ``DIR/.trajset/`` (what ``--mode resume`` uses).

A batch's share of every table is one or more Arrow IPC parts; a finished
batch leaves a marker holding its result as JSON (``BatchResult.to_json``),
both named by the batch's key (a hash of its units' labels: the input paths
themselves are not stored, they may hold a home path).  ``options.json``
records the options a folder was started with, so a resume cannot mix them.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..options import ExportOptions
from .files import atomic_write

STATE = ".trajset"


def part_path(out: Path, key: str, seq: int, table: str) -> Path:
    """Part ``seq`` of table ``table`` of the batch named ``key``."""
    return out / STATE / "parts" / table / f"{key}-{seq:04d}.arrow"


def marker_path(out: Path, key: str) -> Path:
    return out / STATE / "units" / (key + ".json")


def read_marker(out: Path, key: str) -> dict[str, Any] | None:
    """The marker of the batch named ``key``, as JSON; None without one."""
    path = marker_path(out, key)
    if not path.exists():
        return None
    data = json.loads(path.read_text())
    return data if isinstance(data, dict) else None


def write_marker(out: Path, key: str, data: dict[str, Any]) -> None:
    atomic_write(marker_path(out, key), json.dumps(data).encode())


def drop_state(out: Path) -> None:
    """Remove the parts and markers of a finished run (what only an incremental
    ``--mode resume`` needs, kept with ``--keep-state``); the options and the secrets'
    fingerprint stay, so a later resume still refuses other options."""
    for name in ("parts", "units"):
        shutil.rmtree(out / STATE / name, ignore_errors=True)


def check_resumable(
    out: Path,
    options: ExportOptions,
    resume: bool,
    secrets: tuple[str, ...] = (),
    numbering: str = "",
) -> None:
    """``--mode resume`` only finishes a run made with the same options and the same literal
    secrets and terms; records them otherwise (as a salted fingerprint, never the values),
    and the identities' ``numbering`` (``check_numbering``)."""
    saved = out / STATE / "options.json"
    current = json.dumps(asdict(options), sort_keys=True)
    if resume and saved.exists() and saved.read_text() != current:
        raise UsageError(
            f"--mode resume: {out} was started with {_differences(saved.read_text(), options)}; "
            "resume with the same options or use --mode overwrite"
        )
    salt_file, print_file = out / STATE / "secrets.salt", out / STATE / "secrets.sha256"
    if not (resume and salt_file.exists()):
        atomic_write(salt_file, os.urandom(16).hex().encode())
    salt = salt_file.read_text()
    fingerprint = hashlib.sha256("\0".join([salt, *sorted(secrets)]).encode()).hexdigest()
    if resume and print_file.exists() and print_file.read_text() != fingerprint:
        raise UsageError(
            f"--mode resume: {out} was started with other --secret/--secret-env values or "
            "--redact-terms; resume with the same secrets and terms or use --mode overwrite"
        )
    atomic_write(print_file, fingerprint.encode())
    atomic_write(saved, current.encode())
    check_numbering(out, numbering, resume)


def _differences(saved: str, options: ExportOptions) -> str:
    """The options that differ, as ``name=<then> (now <now>)``, never a whole dump."""
    try:
        then = json.loads(saved)
    except ValueError:
        return "options this version cannot read"
    now = json.loads(json.dumps(asdict(options), sort_keys=True))  # tuples as JSON lists
    names = sorted(k for k in {*then, *now} if then.get(k) != now.get(k))
    listed = ", ".join(
        f"{k}={json.dumps(then.get(k))} (now {json.dumps(now.get(k))})" for k in names
    )
    return f"other options: {listed}"[:600]


def check_numbering(out: Path, numbering: str, resume: bool) -> None:
    """A resumed run whose store's identities are numbered otherwise than the first run's (a
    new owner, a folder gone) reuses no batch, as every pseudonym may have moved; records
    the numbering as a salted fingerprint (``check_resumable`` wrote the salt)."""
    salt = (out / STATE / "secrets.salt").read_text()
    saved = out / STATE / "numbering.sha256"
    fingerprint = hashlib.sha256(f"{salt}\0{numbering}".encode()).hexdigest()
    if resume and saved.exists() and saved.read_text() != fingerprint:
        for marker in (out / STATE / "units").glob("*.json"):
            marker.unlink()
    atomic_write(saved, fingerprint.encode())
