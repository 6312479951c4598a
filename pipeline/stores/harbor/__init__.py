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
from pathlib import Path
from typing import Any

from trajset.schemas.session import Session

from ...errors import SessionReadError
from ..base import Loaded, Reader, Reads, Unit, UnitOptions, converted_session, file_fingerprint
from . import layout
from .tree import Job, branches, group_key, header, subagent, subagent_docs
from .trials import Trial, is_trial, read_json, read_trial
from .units import Group, groups

JSON = Any
SINGLE = "trial"  # the key of a unit that is one bare trial folder


class HarborReader(Reader):
    """``harbor``: a folder of jobs (``jobs/``), one job folder, or one trial folder."""

    kind = "harbor"

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

    def load(self, unit: Unit) -> Loaded:
        out: Loaded = []
        single = unit.key == SINGLE
        folder = Path(unit.name) if single else Path(unit.name).parent  # a trial, or its job
        group = Group(True, (folder.name,)) if single else Group.of(unit.key)
        job = Job(folder.parent.name if single else folder.name, folder.name)
        if not single:
            errors: Loaded = out if group.first else []  # the job's first unit reports them
            job.config, job.result, job.lock = (
                _job_record(folder / name, errors) for name in layout.JOB_FILES
            )
        job.id = str((job.result or {}).get("id") or job.id)
        counts: Counter[str] = Counter()
        trials: dict[tuple[str, str, str, str], list[Trial]] = defaultdict(list)
        seen: set[str] = set()
        for path in [folder] if single else [folder / name for name in group.trials]:
            try:
                t = read_trial(path)
            except SessionReadError as exc:
                counts["harbor/trials_unreadable"] += 1
                out.append(exc)
                continue
            if t.id in seen:
                counts["harbor/trials_duplicate"] += 1
                continue
            seen.add(t.id)
            counts["harbor/trials"] += 1
            if not t.chain:
                counts["harbor/trials_without_trajectory"] += 1
                continue
            counts["harbor/trials_incomplete"] += t.result is None
            trials[group_key(t)].append(t)
        for key in sorted(trials):
            out.extend(_group(job, key, trials[key], str(folder)))
        first = next((s for s in out if isinstance(s, Session)), None)
        if first is not None:  # the unit's counts, once
            first.counts = dict(Counter(first.counts) + counts)
        return out

    def session_ids(self, unit: Unit) -> list[str]:
        return []  # subagent sessions are in their tree's unit; no other unit links here


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


def _group(job: Job, key: tuple[str, str, str, str], trials: list[Trial], source: str) -> Loaded:
    """The tree of one group and its trials' subagent sessions."""
    out: Loaded = []
    counts: Counter[str] = Counter()
    try:
        head = header(job, key, trials)
        raws = branches(job, trials, counts)
        c = {k: v for k, v in counts.items() if v}
        out.append(converted_session(head, raws, source, "harbor", [], c))
    except SessionReadError as exc:
        out.append(exc)
        return out
    for t in trials:
        for sid, file, doc in subagent_docs(job, t):
            try:
                sub_head, sub_raws = subagent(job, head["id"], sid, doc, raws[0]["ts"], file)
                out.append(converted_session(sub_head, sub_raws, file, "harbor", [], {}))
            except SessionReadError as exc:
                out.append(exc)
    return out
