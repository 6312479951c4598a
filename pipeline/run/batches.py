"""Work units grouped into batches: one job, one marker and few parts per batch.

Thousands of small sessions cost more in per-file work (a part per table,
a marker) than in processing, so an executor runs batches of consecutive
units.  Where a batch ends depends only on the unit that ends it: a hash of
its label, weighed by its size, so a batch holds about
``RunSettings.batch_input_bytes`` of input and at most about
``RunSettings.batch_mean_units`` units (large sessions get batches of
a few, which keeps the workers evenly loaded).  Adding, changing or removing
a session file changes its own batch only, and ``--mode resume`` re-runs
that batch alone.  Nothing depends on the worker count, which keeps the
data files byte-identical whatever runs them.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from pathlib import Path

from ..options import RunSettings
from ..stores import Unit

Batch = tuple[Unit, ...]


def unit_size(unit: Unit) -> int:
    """The unit's input bytes; for a unit selected inside a file it shares with others (a
    database session: a key and no place of its own), what its reader measured of it
    (``Unit.size``; counted as 0, 200 sessions of one database fell into 3 batches and a
    second worker ran 1.15x one).  An einox owner has a key and its own folder: its files
    count (counted as 0 they put every owner of a store in one batch)."""
    if unit.key and not unit.name:
        return unit.size
    size = 0
    for f in unit.files:
        with contextlib.suppress(OSError):  # unreadable: its error row comes from the reader
            size += os.stat(f).st_size
    return size


def ends_batch(unit: Unit, size: int, settings: RunSettings) -> bool:
    """Whether a batch ends after ``unit`` (of ``size`` input bytes): with a chance of
    ``1 / batch_mean_units + size / batch_input_bytes``, drawn from a hash of the end of its
    label (its file and folder names: the same store gives the same batches wherever it lies)."""
    digest = hashlib.sha256("/".join(Path(unit.label).parts[-2:]).encode()).digest()
    draw = int.from_bytes(digest[:8], "big") / 2**64
    return draw < 1 / settings.batch_mean_units + size / settings.batch_input_bytes


def batches(units: list[Unit], settings: RunSettings | None = None) -> list[Batch]:
    """The units, in order, cut into batches after every unit that ``ends_batch``."""
    settings = settings or RunSettings()
    out: list[Batch] = []
    current: list[Unit] = []
    for unit in units:
        current.append(unit)
        if ends_batch(unit, unit_size(unit), settings):
            out.append(tuple(current))
            current = []
    if current:
        out.append(tuple(current))
    return out


def batch_key(batch: Batch) -> str:
    """A name for the batch's marker and parts (its labels hashed: no input path is stored)."""
    return hashlib.sha256("\n".join(u.label for u in batch).encode()).hexdigest()[:24]
