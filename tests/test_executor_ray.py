"""The Ray executor on a local Ray with 2 CPUs (batches and shards as Ray tasks) writes the
local executor's data files.  Each test runs in a network namespace with only the loopback
interface (``loopback.py``): Ray's servers bind every interface there is."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from trajset.pipeline import ExportOptions, RunOptions, RunSettings, run_export, sample_store
from trajset.pipeline.executors.ray import RayExecutor

from .exports import data_files
from .loopback import loopback_only

UPSTREAM = Path(__file__).parent / "data" / "upstream"
ray = pytest.importorskip("ray", reason="Ray cannot be installed here (pip install 'trajset[ray]')")

pytestmark = [
    pytest.mark.ray,
    pytest.mark.slow,
    pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::FutureWarning"),
]


@loopback_only
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
    assert data_files(tmp_path / "ray") == data_files(tmp_path / "local")
    assert not ray.is_initialized()  # the Ray started for the run is stopped with it


def _double(x: int) -> int:
    return 2 * x


@loopback_only
def test_a_ray_started_for_the_run_reaches_no_network() -> None:
    """The local Ray's processes listen (on every interface, as Ray does) in a namespace
    whose only interface is loopback, and name their node 127.0.0.1."""
    import psutil

    with RayExecutor(workers=1) as executor:
        assert list(executor.map(_double, [1, 2, 3])) == [2, 4, 6]
        ours = {p.pid for p in psutil.Process().children(recursive=True)}
        listening = [
            c
            for c in psutil.net_connections(kind="inet")
            if c.status == psutil.CONN_LISTEN and c.pid in ours
        ]
        assert listening  # Ray's own servers (GCS, raylet, object manager, workers)
        loopback_or_any = {"127.0.0.1", "::ffff:127.0.0.1", "::1", "::", "0.0.0.0"}
        assert {c.laddr.ip for c in listening} <= loopback_or_any, listening
        assert {n["NodeManagerAddress"] for n in ray.nodes()} == {"127.0.0.1"}
    assert not ray.is_initialized()
