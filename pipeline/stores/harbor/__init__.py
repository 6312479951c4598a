"""Harbor job folders (specs/harbor-jobs.md): ``jobs/<job>/<trial>/`` with ATIF trajectories.

The trials of a task are grouped across a job: by task, checksum, agent and
model (``tree.group_key``), never by folder name, and a unit is one group
(``units.py``).  Each group is one session tree (``tree.py``) whose branches are
its trials, forked at the last step they share, each ending in its verifier
reward as an outcome (``outcomes.py``); ``--prefer score`` then keeps the
best-rewarded trial and pairs it with the others.  A trial's ATIF documents
are converted back to entries (``branch.py``, ``steps.py``), and each
subagent document is a session of its own, linked from the step that
refers to it.  A trial whose files do not read is one error row; one still
running (no ``result.json``) is a branch without an outcome; one that never
started an agent (no trajectory) is counted only.
"""

from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from collections.abc import Iterator
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trajset.schemas.session import Issue

from ...errors import SessionReadError
from ..base import Fixture, Loaded, Reads, Unit, UnitOptions, file_fingerprint
from ..draft import SessionDraft
from ..template import ConvertingReader
from . import layout
from .tree import (
    Job,
    branches,
    group_key,
    session_id,
    subagent,
    subagent_docs,
    tree_draft,
    tree_start,
)
from .trials import Trial, is_trial, read_json, read_records, read_trial
from .units import Group, groups

JSON = Any
SINGLE = "trial"  # the key of a unit that is one bare trial folder


@dataclass(frozen=True)
class Tree:
    """The trials of one task, agent and model, to become one tree; ``unit_counts``: what the
    unit counted (its first tree carries them)."""

    job: Job
    key: tuple[str, str, str, str]
    trials: list[Trial]
    source: str
    unit_counts: Counter[str]


@dataclass(frozen=True)
class Sub:
    """A subagent document of a tree's trial, to become its own session below the tree."""

    job: Job
    tree_id: str
    sid: str
    file: str
    doc: JSON
    start: str


class HarborReader(ConvertingReader[Trial, Tree | Sub]):
    """``harbor``: a folder of jobs (``jobs/``), one job folder, or one trial folder."""

    kind = "harbor"
    prefer = ("score",)  # a task's trials are judged by their verifier's reward
    fixtures = (
        Fixture("upstream/harbor-jobs/synthetic-claude-code/jobs/2026-01-20__08-00-00"),
        Fixture("upstream/harbor-jobs/golden-terminus-2/jobs"),
        # a cut early trial renames the steps later trials shared with it
        Fixture("upstream/harbor-jobs/synthetic-claude-code/jobs", cut=False),
    )

    def detect(self, path: Path) -> bool:
        return path.is_dir() and (is_trial(path) or bool(layout.jobs(path)))

    def units(self, path: Path, options: UnitOptions = ()) -> list[Unit]:
        if is_trial(path):
            return [self.unit(tuple(layout.trial_inputs(path)), key=SINGLE, name=str(path))]
        out: list[Unit] = []
        for job in layout.jobs(path):
            own = layout.job_inputs(job, [])
            for group in groups(layout.trial_dirs(job)):
                trials = [job / name for name in group.trials]
                files = own + layout.job_inputs(job, trials)[len(own) :]
                # named by its first trial: a label of its own (batches, resume markers)
                out.append(self.unit(tuple(files), key=group.key, name=str(trials[0])))
        return out

    def foreign_folders(self, store: Path) -> dict[str, str]:
        if is_trial(store):
            return layout.foreign(store.parent, [store])
        return {
            k: v
            for job in layout.jobs(store)
            for k, v in layout.foreign(job, layout.trial_dirs(job)).items()
        }

    def fingerprint(self, unit: Unit, read: Reads | None = None) -> tuple[str, int]:
        """Over each input's digest, taken from what ``load`` read where it did."""
        digest, size = hashlib.sha256(), 0
        for f in unit.files:
            got = (read or {}).get(f) or file_fingerprint((f,))
            if not got[0]:
                return "", 0
            digest.update(f"{Path(f).name}\0{got[0]}\n".encode())
            size += got[1]
        return "sha256:" + digest.hexdigest(), size

    def files(self, unit: Unit) -> tuple[str, ...]:
        """The unit's trial folders (one, for a bare trial)."""
        if unit.key == SINGLE:
            return (unit.name,)
        job = Path(unit.name).parent
        return tuple(str(job / name) for name in Group.of(unit.key).trials)

    def read(self, path: Path, unit: Unit, earlier: list[Trial]) -> Trial:
        return read_trial(path)

    def join(self, read: list[Trial], unit: Unit) -> Iterator[Tree | Sub | SessionReadError]:
        """The job's records (an error for each that does not read, from the job's first
        unit), then each group of trials of one task, agent and model as a tree, followed by
        its trials' subagent documents.  The unit's counts go on its first tree."""
        single = unit.key == SINGLE
        folder = Path(unit.name) if single else Path(unit.name).parent  # a trial, or its job
        job = Job(folder.parent.name if single else folder.name, folder.name)
        if not single:
            errors: Loaded = []
            job.config, job.result, job.lock = (
                _job_record(folder / name, errors) for name in layout.JOB_FILES
            )
            if Group.of(unit.key).first:  # the job's first unit reports them
                yield from (e for e in errors if isinstance(e, SessionReadError))
        job.id = str((job.result or {}).get("id") or job.id)
        counts: Counter[str] = Counter()
        counts["harbor/trials_unreadable"] = len(self.files(unit)) - len(read)
        trials: dict[tuple[str, str, str, str], list[Trial]] = defaultdict(list)
        seen: dict[str, Trial] = {}
        for t in read:
            if t.id in seen:
                counts["harbor/trials_duplicate"] += 1
                seen[t.id].notes.append(Issue(
                    "duplicate_session", None, f"trial {t.path.name} has this trial's id "
                    f"({t.id}); the copy is not exported", str(t.path),
                ))  # fmt: skip
                continue
            seen[t.id] = t
            counts["harbor/trials"] += 1
            if not t.chain:
                counts["harbor/trials_without_trajectory"] += 1
                continue
            counts["harbor/trials_incomplete"] += t.result is None
            trials[group_key(t)].append(t)
        for key in sorted(trials):
            group = trials[key]
            yield Tree(job, key, group, str(folder), counts)
            counts = Counter()
            tree_id, start = session_id(job.id, *key), tree_start(group)
            for t in group:
                yield from (Sub(job, tree_id, *doc, start) for doc in subagent_docs(job, t))

    def convert(self, tree: Tree | Sub, unit: Unit) -> SessionDraft:
        if isinstance(tree, Sub):
            return subagent(tree.job, tree.tree_id, tree.sid, tree.doc, tree.start, tree.file)
        branch_counts: Counter[str] = Counter()
        d = tree_draft(tree.job, tree.key, tree.trials, tree.source)
        d.entries = branches(tree.job, tree.trials, branch_counts)
        d.notes += [n for t in tree.trials for n in t.notes]  # their records' and steps'
        d.counts.update({k: v for k, v in branch_counts.items() if v})
        d.counts += tree.unit_counts  # (positive ones)
        return d

    def session_ids(self, unit: Unit) -> list[str]:
        """The unit's tree ids (its job's id and each group's key), so that a copy of a job
        is found as the same sessions; subagent sessions are in their tree's unit, and no
        other unit links to them."""
        if unit.key == SINGLE:
            return []
        job = Path(unit.name).parent
        record = _job_record(job / "result.json", [])
        job_id = str((record or {}).get("id") or job.name)
        keys = set()
        for folder in self.files(unit):
            with suppress(SessionReadError):
                keys.add(group_key(read_records(Path(folder))))
        return [session_id(job_id, *k) for k in sorted(keys)]


def _job_record(path: Path, out: Loaded) -> dict[str, JSON] | None:
    """A job's ``config.json``, ``result.json`` or ``lock.json``; one that does not read is
    an error row, and the trials are read without it."""
    if not path.is_file():
        return None
    try:
        value = read_json(path, f"the job's {path.name}")
    except SessionReadError as exc:
        out.append(exc)
        return None
    return value if isinstance(value, dict) else None
