"""What the walk over one trajectory has built so far (``Walk``), shared by the walker and its helpers.

The steps, the extras waiting for the next step (``pending``), the open
model-output group, and the calls, links, outcomes, runs and totals seen.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from trajset.schemas.context import Settings
from trajset.schemas.entries import LinkEntry
from trajset.schemas.records import Trajectory
from trajset.schemas.session import Entry
from trajset.schemas.timestamps import rfc3339nano

JSON = Any
Step = dict[str, JSON]


@dataclass
class Walk:
    """The state of the walk over one trajectory (see the module docstring)."""

    traj: Trajectory
    settings: Settings
    steps: list[Step] = field(default_factory=list)
    pending: dict[str, JSON] = field(default_factory=dict)
    group: list[Entry] = field(default_factory=list)
    group_rid: str = ""
    copied: bool = False
    compaction_id: str = ""
    entry_step: dict[str, Step] = field(default_factory=dict)
    call_step: dict[str, Step] = field(default_factory=dict)
    calls: dict[str, dict[str, JSON]] = field(default_factory=dict)
    links: list[tuple[Entry, LinkEntry]] = field(default_factory=list)
    outcomes: list[JSON] = field(default_factory=list)
    root_env: JSON = None
    open_run: dict[str, JSON] | None = None
    totals: list[int] = field(default_factory=lambda: [0, 0, 0])
    cost: float | None = None

    def append(self, step: Step, anchor: Entry) -> Step:
        """Number ``step``, stamp it from ``anchor``, attach the pending extras, and keep it."""
        step["step_id"] = len(self.steps) + 1
        step["timestamp"] = rfc3339nano(anchor.body.ts)
        extra = step.setdefault("extra", {})
        extra["agentsession"] = {"entry_id": anchor.id}
        if self.copied and "is_copied_context" not in step:
            step["is_copied_context"] = True
        extra.update(self.pending)
        self.pending = {}
        self.steps.append(step)
        self.entry_step[anchor.id] = step
        return step
