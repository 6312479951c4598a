"""Same input and options give byte-identical data files, whatever the worker count."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from trajset.pipeline import ExportOptions, Mode, RunOptions, RunSettings, run_export, sample_store

from .fixture_stores import fixtures, lay_out

DATA_DIRS = ("atif", "data", "traces")


def _data_files(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for d in DATA_DIRS
        if (root / d).exists()
        for p in sorted((root / d).rglob("*"))
        if p.is_file()
    }


#: a batch per unit: many batches, so two workers share them
PER_UNIT = RunSettings(batch_mean_units=1)


def _workers(out: Path) -> set[int]:
    """The processes that ran the batches, from the markers (kept with ``keep_state``)."""
    markers = (out / ".trajset" / "units").glob("*.json")
    return {json.loads(m.read_text())["worker"] for m in markers}


def test_two_exports_are_byte_identical_across_worker_counts(tmp_path: Path) -> None:
    """One worker, and two processes sharing the batches (checked: both ran some), write
    the same bytes over every reader's fixtures; so does a second one-worker run."""
    stores = [  # every reader's test stores, in one run
        lay_out(fixture, tmp_path / "store" / f"{kind}-{i}")
        for kind, found in fixtures().items()
        for i, fixture in enumerate(found)
    ]
    opts = ExportOptions(prefer=("score",), traces=True)
    runs = {}
    for name, workers in (("a", 1), ("b", 1), ("c", 2)):
        run = RunOptions(workers=workers, keep_state=True, settings=PER_UNIT)
        runs[name] = run_export(stores, tmp_path / name, opts, run)
    assert len(_workers(tmp_path / "a")) == 1 and len(_workers(tmp_path / "c")) == 2
    a = _data_files(tmp_path / "a")
    assert len(a) >= 30 and any(f.startswith("traces/") for f in a)
    assert a == _data_files(tmp_path / "b") == _data_files(tmp_path / "c")
    assert runs["a"].counts == runs["c"].counts


def test_resume_skips_finished_units_and_gives_the_same_files(tmp_path: Path) -> None:
    out = tmp_path / "o"
    opts = ExportOptions(traces=True)
    first = run_export([sample_store()], out, opts, RunOptions(workers=1))
    before = _data_files(out)
    # Simulate a run killed midway: half the units lost their marker, documents and traces;
    # and a trace no unit wrote (a session gone from the store) is left behind
    markers = sorted((out / ".trajset" / "units").glob("*.json"))
    for m in markers[: len(markers) // 2]:
        for name in json.loads(m.read_text())["documents"]:
            (out / "atif" / name).unlink()
        for rel in json.loads(m.read_text())["traces"]:
            (out / rel).unlink()
        m.unlink()
    (out / "traces" / "agentsession" / "gone.jsonl").write_text("{}\n")
    again = run_export([sample_store()], out, opts, RunOptions(workers=1, mode=Mode.resume))
    assert _data_files(out) == before
    assert again.counts == first.counts
    assert not list(out.rglob("*.tmp"))


def test_settings_reach_the_worker_processes(tmp_path: Path) -> None:
    """A batch run by the pool's process cuts its sessions into slices of one and hands its
    rows on after every slice, as the settings say: more parts than with the defaults, and
    the same bytes."""
    store = tmp_path / "store"
    shutil.copytree(sample_store(), store)
    spilling = RunSettings(batch_mean_units=1, slice_trajectories=1, spill_document_bytes=1)
    parts: dict[str, dict[str, int]] = {}  # run -> batch marker -> parts written
    pool: set[str] = set()  # the batches the pool's processes ran under the spilling settings
    for name, settings in (("default", PER_UNIT), ("spilling", spilling)):
        run = RunOptions(workers=2, keep_state=True, settings=settings)
        run_export([store], tmp_path / name, ExportOptions(), run)
        markers = {
            m.name: json.loads(m.read_text())
            for m in (tmp_path / name / ".trajset" / "units").glob("*.json")
        }
        parts[name] = {k: len(m["parts"]) for k, m in markers.items()}
        if name == "spilling":
            pool = {k for k, m in markers.items() if m["worker"] != os.getpid()}
    assert pool, "the pool's process ran some batches"  # the first batch goes to the pool
    # the same batches (whichever process ran them by default): more parts when spilling
    assert sum(parts["spilling"][k] for k in pool) > sum(parts["default"][k] for k in pool)
    assert _data_files(tmp_path / "spilling") == _data_files(tmp_path / "default")
