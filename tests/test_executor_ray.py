"""The Ray executor on a local Ray with 2 CPUs (batches and shards as Ray tasks) writes the
local executor's data files."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from trajset.pipeline import ExportOptions, RunOptions, RunSettings, run_export, sample_store

from .test_reliability import _data

UPSTREAM = Path(__file__).parent / "data" / "upstream"
ray = pytest.importorskip("ray", reason="Ray cannot be installed here (pip install 'trajset[ray]')")

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::FutureWarning")


def test_ray_and_local_executors_write_identical_data_files(tmp_path: Path) -> None:
    per_file = RunSettings(batch_input_bytes=1)  # a batch per file: the shards on Ray too
    store = tmp_path / "store"
    shutil.copytree(sample_store(), store)
    shutil.copytree(UPSTREAM / "agentsession" / "testdata" / "sessions", store / "fixtures")
    options = ExportOptions(prefer=("score",))
    local = run_export(
        [store], tmp_path / "local", options, RunOptions(workers=1, settings=per_file)
    )
    remote = run_export(
        [store], tmp_path / "ray", options,
        RunOptions(workers=2, executor="ray", settings=per_file),
    )  # fmt: skip
    assert remote.counts == local.counts
    assert _data(tmp_path / "ray") == _data(tmp_path / "local")
    assert not ray.is_initialized()  # the Ray started for the run is stopped with it
