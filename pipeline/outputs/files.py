"""Writing files into the output folder: atomically, and never outside it.

Every file is written under a temporary name in its final folder and
renamed into place, so a killed run leaves no partial file behind.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..errors import OutputError


@contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """A temporary name beside ``path`` to write to; renamed to ``path`` when the block ends
    without an exception, removed otherwise."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` via a temporary file and a rename."""
    with atomic_path(path) as tmp, open(tmp, "wb") as fh:
        fh.write(data)


def inside(root: Path, path: Path) -> Path:
    """``path`` resolved, guaranteed to lie inside ``root``."""
    resolved = path.resolve()
    if not resolved.is_relative_to(root.resolve()):
        raise OutputError(f"refusing to write {path}: it lies outside the output folder {root}")
    return resolved
