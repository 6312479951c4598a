"""Executors: results in unit order whatever the worker count; the job carries its context."""

from __future__ import annotations

import gc
import pickle
from pathlib import Path

import pytest
from typer.testing import CliRunner

from trajset.pipeline import ExportOptions, RunOptions
from trajset.pipeline.cli import app
from trajset.pipeline.errors import UsageError
from trajset.pipeline.executors import EXECUTORS, LocalExecutor, make_executor
from trajset.pipeline.export import default_workers
from trajset.pipeline.jobs import BatchJob, fewer_collections
from trajset.pipeline.stages import RunContext
from trajset.pipeline.stores import SessionIndex, Unit


def _square(n: int) -> int:
    return n * n


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_local_executor_returns_results_in_input_order(workers: int) -> None:
    items = list(range(37))
    assert list(LocalExecutor(workers).map(_square, items)) == [n * n for n in items]


def test_registry_and_unknown_executor() -> None:
    assert "local" in EXECUTORS
    assert isinstance(make_executor(RunOptions(workers=2)), LocalExecutor)
    with pytest.raises(UsageError, match="valid: local"):
        make_executor(RunOptions(executor="spark"))


def test_a_job_pickles_with_its_context_and_rebuilds_its_runtime(tmp_path: Path) -> None:
    job = BatchJob(RunContext(tmp_path, ExportOptions(where="outcome_pass"), secrets=("s3cr3t",)))
    assert job.runtime.redactor.active and job.runtime.where is not None
    clone = pickle.loads(pickle.dumps(job))
    assert "runtime" not in clone.__dict__  # built lazily where the job runs
    assert clone.ctx == job.ctx and clone.runtime.redactor.active


def test_workers_beyond_the_cpus_are_capped_with_a_message(tmp_path: Path) -> None:
    """``--workers 100000`` hung starting every worker."""
    result = CliRunner().invoke(
        app, ["export", "--out", str(tmp_path / "o"), "-q", "--workers", "100000"]
    )
    assert result.exit_code == 0, result.output
    assert f"using {default_workers()}" in result.output


def test_a_job_carries_the_session_index_as_a_file_not_every_id(tmp_path: Path) -> None:
    """With the index in memory every chunk of work carried every session id of the store."""
    units = [
        Unit("agentsession", (f"store/s{i}.jsonl",), options=(("a", "b"),)) for i in range(5000)
    ]
    index = SessionIndex({f"id-{i}": u for i, u in enumerate(units)})
    on_disk = index.write(tmp_path / "index.db")
    job = BatchJob(RunContext(tmp_path, ExportOptions(), index=on_disk))
    assert len(pickle.dumps(job)) < 2000 < len(pickle.dumps(index))
    clone = pickle.loads(pickle.dumps(job)).ctx.index
    for sid in ("id-0", "id-1234", "id-4999"):
        assert clone.unit_of(sid) == index.unit_of(sid)
    assert clone.unit_of("id-5000") is None


def test_fewer_collections_restores_the_collector_and_nests() -> None:
    before = gc.get_threshold()
    with fewer_collections():
        assert gc.get_threshold()[0] == 10_000 and gc.get_freeze_count() > 0
        frozen = gc.get_freeze_count()
        with fewer_collections():  # a batch inside a run: the run's freeze stays
            pass
        assert gc.get_freeze_count() == frozen and gc.get_threshold()[0] == 10_000
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0
