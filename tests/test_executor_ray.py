"""The Ray executor, on a Ray started for the run (1 and 2 CPUs) and on a simulated cluster
of two nodes, writes the local executor's data files (batches and shards as Ray tasks).  Each test runs in a network namespace with only the loopback
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
    for workers in (1, 2):
        remote = run_export(
            [store], tmp_path / f"ray{workers}", options,
            RunOptions(workers=workers, executor="ray", settings=per_file),
        )  # fmt: skip
        assert remote.counts == local.counts
        assert data_files(tmp_path / f"ray{workers}") == data_files(tmp_path / "local")
    assert not ray.is_initialized()  # the Ray started for the run is stopped with it


@loopback_only
def test_a_two_node_cluster_writes_the_local_executors_data_files(tmp_path: Path) -> None:
    """Two Ray nodes of one CPU each (``ray.cluster_utils.Cluster``, both on 127.0.0.1),
    joined by address as a user joins a cluster: with 1 and with 2 workers, the data files
    equal the local executor's on 1 and on 2 workers (2 workers there are one per node:
    each node has one CPU and each task takes one)."""
    from ray.cluster_utils import Cluster

    per_file = RunSettings(batch_input_bytes=1)
    store = tmp_path / "store"
    shutil.copytree(sample_store(), store)
    options = ExportOptions(prefer=("score",))
    want = None
    for workers in (1, 2):
        local = run_export(
            [store], tmp_path / f"local{workers}", options,
            RunOptions(workers=workers, settings=per_file),
        )  # fmt: skip
        want = want or data_files(tmp_path / "local1")
        assert data_files(tmp_path / f"local{workers}") == want
    cluster = Cluster(
        initialize_head=True, head_node_args={"num_cpus": 1, "node_ip_address": "127.0.0.1"}
    )
    try:
        cluster.add_node(num_cpus=1, node_ip_address="127.0.0.1")
        cluster.wait_for_nodes()
        for workers in (1, 2):
            remote = run_export(
                [store], tmp_path / f"cluster{workers}", options,
                RunOptions(workers=workers, executor="ray", ray_address=cluster.address,
                           settings=per_file),
            )  # fmt: skip
            assert remote.counts == local.counts
            assert data_files(tmp_path / f"cluster{workers}") == want, workers
        ray.init(address=cluster.address)
        nodes = [n for n in ray.nodes() if n["Alive"]]
        ray.shutdown()
        assert len(nodes) == 2 and {n["NodeManagerAddress"] for n in nodes} == {"127.0.0.1"}
    finally:
        cluster.shutdown()


def _double(x: int) -> int:
    return 2 * x


@loopback_only
def test_a_ray_started_for_the_run_is_its_own_and_reaches_no_network() -> None:
    """Without an address the run starts its own Ray even where another is running on the
    machine (a ``ray start`` head, which Ray's own lookup would otherwise join, and fail to:
    a joined cluster takes no CPU count), and leaves that one running.  Its processes listen
    (on every interface, as Ray does) in a namespace whose only interface is loopback, and
    name their node 127.0.0.1."""
    import psutil
    from ray.cluster_utils import Cluster

    cluster = Cluster(
        initialize_head=True, head_node_args={"num_cpus": 1, "node_ip_address": "127.0.0.1"}
    )
    try:  # the running cluster has written its address where Ray looks for one
        with RayExecutor(workers=1) as executor:
            assert list(executor.map(_double, [1, 2, 3])) == [2, 4, 6]
            assert ray.get_runtime_context().gcs_address != cluster.address
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
        ray.init(address=cluster.address)
        assert [n["Alive"] for n in ray.nodes()] == [True]
        ray.shutdown()
    finally:
        cluster.shutdown()
