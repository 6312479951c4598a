"""Writing files into the output folder: atomically, and never outside it.

Every file is written under a temporary name in its final folder and
renamed into place, so a killed run leaves no partial file behind.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import OutputError


def atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` via a temporary file and a rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def inside(root: Path, path: Path) -> Path:
    """``path`` resolved, guaranteed to lie inside ``root``."""
    resolved = path.resolve()
    if not resolved.is_relative_to(root.resolve()):
        raise OutputError(f"refusing to write {path}: it lies outside the output folder {root}")
    return resolved
