"""``trajset convert``: any store the readers know, written as Agent Session Format files.

The sessions are written with the same writer the sample store and the test
builder use (``stores.agentsession.write_session``): the jsonl store layout
``<out>/<project-key>/<stamp>_<session-id>.jsonl``.  Exporting the converted
folder gives the documents that exporting the original store gives.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from trajset.schemas.session import Session

from .errors import OutputError, UnitFailed, UnitSkipped
from .stores import discover, load_unit
from .stores.agentsession import write_session


@dataclass
class Converted:
    written: list[Path] = field(default_factory=list)
    errors: list[UnitFailed] = field(default_factory=list)
    skipped: int = 0


def convert_store(
    stores: Sequence[Path], out: Path, kind: str = "auto", options: tuple[tuple[str, str], ...] = ()
) -> Converted:
    """Convert every session of ``stores`` into ``out`` (which must be empty or absent)."""
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise OutputError(f"--out {out} exists and is not an empty folder; choose a new one")
    result = Converted()
    for unit in discover(stores, kind, options):
        try:
            loaded = load_unit(unit)
        except UnitSkipped:
            result.skipped += 1
            continue
        except UnitFailed as exc:
            loaded = [exc]
        for s in loaded:
            if isinstance(s, Session):
                result.written.append(write_session(out, s))
            else:
                result.errors.append(s)
    return result
