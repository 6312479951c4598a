"""The Ray executor on a local Ray with 2 CPUs (batches and shards as Ray tasks) writes the
local executor's data files."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from trajset.pipeline import ExportOptions, RunOptions, batches, run_export, sample_store

from .test_reliability import _data

UPSTREAM = Path(__file__).parent / "data" / "upstream"
ray = pytest.importorskip("ray", reason="Ray cannot be installed here (pip install 'trajset[ray]')")

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::FutureWarning")


def test_ray_and_local_executors_write_identical_data_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(batches, "TARGET_BYTES", 1)  # a batch per file: the shards on Ray too
    store = tmp_path / "store"
    shutil.copytree(sample_store(), store)
    shutil.copytree(UPSTREAM / "agentsession" / "testdata" / "sessions", store / "fixtures")
    options = ExportOptions(prefer=("score",))
    local = run_export([store], tmp_path / "local", options, RunOptions(workers=1))
    remote = run_export([store], tmp_path / "ray", options, RunOptions(workers=2, executor="ray"))
    assert remote.stats.counts == local.stats.counts
    assert _data(tmp_path / "ray") == _data(tmp_path / "local")
    assert not ray.is_initialized()  # the Ray started for the run is stopped with it
