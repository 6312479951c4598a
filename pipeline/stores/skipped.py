"""What a folder store holds that no unit reads, each with the reason (the manifest's
``skipped``): files of another kind, links not followed, special files, folders that
cannot be listed."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from .base import Unit
from .regular import Boundary, RealPaths, special_kind

#: how many skipped paths the manifest lists by name (all are counted)
SKIPS_LISTED = 1000


def skipped_paths(stores: Iterable[Path], units: Iterable[Unit]) -> list[tuple[str, str]]:
    """Every path below a folder store that no unit reads, with the reason: files of another
    kind (notes, a writer's lock file, a database beside session files), links not
    followed into folders, and folders that cannot be listed.  Sorted, so the manifest that
    lists them does not depend on the order in which the file system lists files.  A folder
    a reader calls foreign (``Reader.foreign_folders``) is one row, and not walked."""
    from . import READERS, reader_for  # the registry imports this module

    units = list(units)
    read = {os.path.abspath(f) for u in units for f in (reader_for(u.kind).inputs(u) or u.files)}
    kinds = sorted({u.kind for u in units})
    skipped: list[tuple[str, str]] = []
    for store in stores:
        if not store.is_dir():
            continue
        foreign = {
            os.path.abspath(p): why
            for k in kinds
            for p, why in READERS[k].foreign_folders(store).items()
        }

        boundary = Boundary(str(store), RealPaths())
        direct = {boundary.real(f) for f in read if not os.path.islink(f)}

        def unreadable(exc: OSError) -> None:
            skipped.append((str(exc.filename), f"folder cannot be read: {exc.strerror or exc}"))

        for folder, dirs, files in os.walk(store, onerror=unreadable):
            for name in list(dirs):
                p = os.path.join(folder, name)
                if os.path.islink(p):
                    skipped.append((p, "a link to a folder; not followed"))
                elif os.path.abspath(p) in foreign:
                    skipped.append((p, f"{foreign[os.path.abspath(p)]}; not read"))
                    dirs.remove(name)
            for name in files:
                p = os.path.join(folder, name)
                if os.path.abspath(p) not in read:
                    skipped.append((p, _why_skipped(p, boundary, direct)))
    return sorted(set(skipped))


def _why_skipped(path: str, boundary: Boundary, direct: set[str]) -> str:
    special = special_kind(path)
    if special:
        return f"{special}; not read"
    return boundary.why(path, direct) or "not a session file of this store"
