"""``trajset sources``: the stores of every registered kind at their default locations.

Each reader declares where its stores live on a user's machine
(``Reader.locations``, honouring ``HOME`` and variables such as
``CLAUDE_CONFIG_DIR``); ``local_sources`` resolves them, keeps those that
exist and scans each quickly (units and session ids, no session loaded), so
``trajset sources`` can list them and ``export --all-local`` can export them
all in one run.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from .errors import TrajsetError
from .stores import READERS


@dataclass(frozen=True)
class Source:
    """A store found at a reader's default location."""

    kind: str
    path: Path
    sessions: int
    bytes: int
    #: why the store could not be scanned, or "" (its files are there, not of this kind)
    problem: str = ""


def scan(kind: str, path: Path) -> Source:
    """Units and session ids of the store at ``path`` read as ``kind``, and its input size."""
    reader = READERS[kind]
    if not reader.detect(path):
        return Source(kind, path, 0, 0, f"holds no {kind} store")
    try:
        units = reader.units(path)
    except (TrajsetError, OSError) as exc:
        return Source(kind, path, 0, 0, str(exc))
    files: set[str] = set()
    sessions = 0
    for u in units:
        with contextlib.suppress(Exception):  # a unit that cannot say counts no sessions
            sessions += len(reader.session_ids(u))
        files.update(u.files)
    size = 0
    for f in files:
        with contextlib.suppress(OSError):
            size += os.stat(f).st_size
    return Source(kind, path, sessions, size)


def local_sources(environ: Mapping[str, str] | None = None) -> list[Source]:
    """Every existing default location of every registered reader, in ``READERS`` order."""
    found: list[Source] = []
    for kind, reader in READERS.items():
        for location in reader.locations:
            path = location.resolve(environ)
            if path is not None and path.exists():
                found.append(scan(kind, path))
    return found
