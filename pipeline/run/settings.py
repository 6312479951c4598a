"""The run's tuning knobs, in one frozen object (``RunSettings``) that ``RunContext`` carries.

They decide how a run cuts and buffers its work (trajectories per slice,
when rows are handed on, batch and shard sizes), so how much a worker holds
at once and how many part and shard files it writes; never the content or
order of a row.  Every executor's workers get them with the context, the
manifest records them (``settings``), and tests choose small values by
passing ``RunSettings(...)`` instead of patching module constants.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any


@dataclass(frozen=True)
class RunSettings:
    """Sizes of a run's pieces; each must be at least 1."""

    #: trajectories per slice of a session: what a worker holds the documents of at once
    slice_trajectories: int = 16
    #: a unit hands on (spills) the table rows it holds once it wrote this many document bytes
    spill_document_bytes: int = 32 * 1000 * 1000
    #: and once a session table (preferences) has built this many rows of a session
    spill_session_rows: int = 256
    #: a batch writes its rows to a part once the units behind them read this many input bytes
    part_input_bytes: int = 4 * 1000 * 1000
    #: units per batch on average, for units much smaller than ``batch_input_bytes``
    batch_mean_units: int = 64
    #: input bytes per batch on average, for larger units
    batch_input_bytes: int = 1_000_000
    #: a shard ends before a part would take its rows past this many in-memory bytes
    shard_bytes: int = 500 * 1000 * 1000
    #: row groups of a Parquet file stay near this many in-memory bytes
    row_group_bytes: int = 100 * 1000 * 1000

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(
                    f"RunSettings.{f.name} must be an integer of at least 1, not {value!r}"
                )

    def to_json(self) -> dict[str, Any]:
        return asdict(self)
