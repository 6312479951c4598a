"""A job's work units: one per group of trials (``tree.group_key``), so that a worker holds
one task's trials, not a whole job, and the workers share a job's tasks.

The groups are read from each trial's ``lock.json`` and ``result.json`` alone.
The job's first unit also reads the trials whose records do not read (its
load gives their error rows and counts them) and reports the job's own files.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from ...errors import SessionReadError
from .tree import group_key
from .trials import read_records


@dataclass(frozen=True)
class Group:
    """The trials one unit reads (folder names); ``Unit.key`` is ``<first> <name>/<name>/…``
    (a folder name holds no ``/``)."""

    first: bool
    trials: tuple[str, ...]

    @property
    def key(self) -> str:
        return f"{int(self.first)} {'/'.join(self.trials)}"

    @classmethod
    def of(cls, key: str) -> Group:
        first, _, names = key.partition(" ")
        return cls(first == "1", tuple(names.split("/")) if names else ())


def groups(trials: list[Path]) -> list[Group]:
    """The job's trials grouped as their trees group them, in the groups' order."""
    keyed: dict[tuple[str, ...], list[str]] = defaultdict(list)
    unreadable: list[str] = []
    for path in trials:
        try:
            keyed[group_key(read_records(path))].append(path.name)
        except SessionReadError:
            unreadable.append(path.name)
    names = [keyed[k] for k in sorted(keyed)] or [[]]
    names[0] += unreadable
    return [Group(n == 0, tuple(g)) for n, g in enumerate(names) if g]
