"""``DIR/manifest.json``: version, options, input fingerprints, counts, redaction report, stage
stats (what goes in is the run's: ``RunResult.manifest``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .files import atomic_path

JSON = Any
#: the version of what an export's files hold: 2 since tool-call ``arguments`` and ``tools``
#: are declared ``Json()`` in the card (``load_dataset`` gives objects; they were text in 1)
FORMAT_VERSION = 2


def write_manifest(out: Path, manifest: dict[str, JSON]) -> dict[str, JSON]:
    """``manifest.json``, written atomically; its ``inputs`` may be an iterable the dump
    streams (a run's spooled input log).  A lone surrogate a store wrote in a name (a record
    type) is written as its JSON escape, ``\\ud83d``, which reads back the same."""
    with (
        atomic_path(out / "manifest.json") as tmp,
        open(tmp, "w", encoding="utf-8", errors="backslashreplace") as fh,
    ):
        json.dump(manifest, fh, indent=2, ensure_ascii=False)
        fh.write("\n")
    return manifest
