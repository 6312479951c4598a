"""Where jobs and trials are in a folder (specs/harbor-jobs.md §1).

``<jobs_dir>/<job_name>/<trial_name>/``: a job is a folder holding trial
folders (``trials.is_trial``), with or without its own ``config.json`` and
``result.json`` (``harbor trials start`` writes bare trials under
``trials/``).  A folder of jobs may hold them at any depth; dot-folders
(a regrade's ``.sources/``) and links are not walked.
"""

from __future__ import annotations

import os
from pathlib import Path

from .trials import is_trial

#: folders below a job to search for jobs
MAX_DEPTH = 4
#: the job's own records, read when present
JOB_FILES = ("config.json", "result.json", "lock.json")
#: folders of a trial that hold no trajectory, with what they hold
FOREIGN = {"artifacts": "files the trial collected", "steps": "steps of a multi-step task",
           "agent/images": "images the trajectories refer to by path"}  # fmt: skip


def _subfolders(folder: Path) -> list[Path]:
    try:
        with os.scandir(folder) as it:
            found = [
                Path(e.path)
                for e in it
                if not e.name.startswith(".") and e.is_dir(follow_symlinks=False)
            ]
    except OSError:
        return []
    return sorted(found)


def trial_dirs(job: Path) -> list[Path]:
    """The trial folders of a job, by name."""
    return [p for p in _subfolders(job) if is_trial(p)]


def is_job(folder: Path) -> bool:
    return any(is_trial(p) for p in _subfolders(folder))


def jobs(path: Path) -> list[Path]:
    """The job folders at or below ``path`` (not below a job), sorted."""
    if is_job(path):
        return [path]
    found: list[Path] = []
    todo = [(path, 0)]
    while todo:
        folder, depth = todo.pop()
        for sub in _subfolders(folder):
            if is_job(sub):
                found.append(sub)
            elif depth + 1 < MAX_DEPTH:
                todo.append((sub, depth + 1))
    return sorted(found)


def trial_inputs(trial: Path) -> list[str]:
    """The files a trial is read from: its result, lock and reward files, and every ATIF
    document of ``agent/`` (``trajectory*.json``: the main one, continuations, subagents)."""
    names = ("result.json", "lock.json", "verifier/reward.json", "verifier/reward.txt")
    out = [str(trial / n) for n in names if (trial / n).is_file()]
    agent = trial / "agent"
    if agent.is_dir():
        out += [str(p) for p in sorted(agent.glob("trajectory*.json")) if p.is_file()]
    return out


def job_inputs(job: Path, trials: list[Path]) -> list[str]:
    own = [str(job / n) for n in JOB_FILES if (job / n).is_file()]
    return own + [f for t in trials for f in trial_inputs(t)]


def foreign(job: Path, trials: list[Path]) -> dict[str, str]:
    """The folders of a job that hold no trajectory: ``.sources/`` and each trial's own."""
    out = {}
    if (job / ".sources").is_dir():
        out[str(job / ".sources")] = "links to the source trials of a regrade job"
    for t in trials:
        out |= {str(t / sub): why for sub, why in FOREIGN.items() if (t / sub).is_dir()}
    return out
