"""Executors: results in unit order whatever the worker count; the job carries its context."""

from __future__ import annotations

import contextlib
import gc
import os
import pickle
import subprocess
import sys
import threading
import time
from concurrent.futures import _base as futures_base
from pathlib import Path
from typing import Any, cast

import pytest
import typer
from typer.testing import CliRunner

from trajset.pipeline import (
    ExportOptions,
    RunOptions,
    RunSettings,
    run_export,
    sample_store,
    tuning,
)
from trajset.pipeline.cli import app
from trajset.pipeline.cli.export import _ProgressBar
from trajset.pipeline.errors import UsageError
from trajset.pipeline.executors import EXECUTORS, LocalExecutor, local, make_executor
from trajset.pipeline.outputs import parquet
from trajset.pipeline.run import driver
from trajset.pipeline.run.context import RunContext
from trajset.pipeline.run.driver import default_workers
from trajset.pipeline.run.worker import BatchJob
from trajset.pipeline.stores import SessionIndex, Unit
from trajset.pipeline.tables import CONFIGS
from trajset.pipeline.tuning import fewer_collections

from .exports import data_files


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


def test_a_callers_frozen_objects_stay_frozen_after_a_run() -> None:
    """``gc.unfreeze`` thaws everything: a run inside a process that froze objects of its
    own (a server after its start-up) thawed them."""
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        assert frozen > 0
        with fewer_collections():
            assert gc.get_threshold()[0] == 10_000
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()


def _pid(_: int) -> int:
    return os.getpid()


def test_inside_a_with_block_the_maps_share_one_pool() -> None:
    with LocalExecutor(2) as executor:
        first = set(executor.map(_pid, range(40)))
        assert len(first - {os.getpid()}) == 1  # this process and a pool of one
        assert set(executor.map(_pid, range(40))) <= first  # the same processes, no new ones
    assert executor._pool is None  # shut down with the block
    assert set(LocalExecutor(2).map(_pid, range(4))) - {os.getpid()}  # outside: a pool per map


def _slow_first(n: int) -> int:
    if n == 0:
        time.sleep(1)  # the pool's first chunk: this process runs the items after it
    return n * n


def test_this_process_works_while_the_pool_is_busy_and_results_stay_in_order() -> None:
    assert list(LocalExecutor(2).map(_slow_first, range(64))) == [n * n for n in range(64)]
    with LocalExecutor(2) as executor:
        assert len(set(executor.map(_pid, range(8)))) == 2  # the pool is started
        executor._pool.submit(time.sleep, 1)  # type: ignore[union-attr]  # and busy
        assert os.getpid() in set(executor.map(_pid, range(8)))


def _slow_zero(n: int) -> int:
    if n == 0:
        time.sleep(1)
    return n


def test_the_driver_waits_for_the_pool_without_spinning() -> None:
    """The thread's last item done, the pool's not: the driver waited on a done future, in
    a loop, for as long as the pool took."""
    with LocalExecutor(2) as executor:
        assert len(set(executor.map(_pid, range(8)))) == 2  # the pool is started
        cpu = time.process_time()
        assert list(executor.map(_slow_zero, range(2))) == [0, 1]  # 0 in the pool, 1 here
        assert time.process_time() - cpu < 0.5


def _sleepy(n: int) -> int:
    time.sleep(0.05)
    return n


def test_a_ctrl_c_while_the_driver_waits_leaves_no_future_locked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``concurrent.futures.wait`` takes the futures' locks one by one in a Python loop; a
    Ctrl-C between two left the first held, its result could never be set, and a run hung
    after Ctrl-C (once in four full-suite runs).  That interrupt, made certain here, must
    not matter: the driver no longer waits that way, and the map ends in time."""

    def interrupted(self: Any) -> None:
        self.futures[0]._condition.acquire()  # the first lock taken, then the interrupt
        raise KeyboardInterrupt

    monkeypatch.setattr(futures_base._AcquireFutures, "__enter__", interrupted)
    ended = threading.Event()

    def run() -> None:
        with contextlib.suppress(KeyboardInterrupt):
            assert list(LocalExecutor(2).map(_sleepy, range(16))) == list(range(16))
        ended.set()

    threading.Thread(target=run, daemon=True).start()
    assert ended.wait(30), "the map hung after an interrupt while it waited"


def _write_shard_noting_the_process(task: parquet.ShardTask) -> dict[str, int | str]:
    (Path(os.environ["TRAJSET_TEST_PIDS"]) / str(os.getpid())).touch()
    return parquet.write_shard(task)


def test_the_workers_write_the_shards_not_the_driver(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The driver wrote every shard: 1.8-2.1 s of CPU for 64 MB with two workers, a ceiling
    on what more workers could give."""
    pids = tmp_path / "pids"
    pids.mkdir()
    monkeypatch.setenv("TRAJSET_TEST_PIDS", str(pids))
    monkeypatch.setattr(driver, "write_shard", _write_shard_noting_the_process)
    per_file = RunSettings(batch_input_bytes=1)  # a batch per session file
    run_export(
        [sample_store()],
        tmp_path / "two",
        ExportOptions(),
        RunOptions(workers=2, settings=per_file),
    )
    writers = {int(p.name) for p in pids.iterdir()}
    assert writers - {os.getpid()}  # the pool wrote some (this process, the first worker, too)
    for p in pids.iterdir():
        p.unlink()
    run_export([sample_store()], tmp_path / "one", ExportOptions(), RunOptions(workers=1))
    assert {int(p.name) for p in pids.iterdir()} == {os.getpid()}
    assert data_files(tmp_path / "two") == data_files(tmp_path / "one")


def _huge_pages_off(_: int) -> int:
    prctl = tuning._prctl()
    assert prctl is not None
    return prctl(tuning.PR_GET_THP_DISABLE, 0, 0, 0, 0)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl(2) is Linux's")
def test_small_pages_while_a_run_allocates_in_its_workers_too_and_restored_after() -> None:
    assert _huge_pages_off(0) == 0
    with tuning.small_pages():
        assert _huge_pages_off(0) == 1
        with tuning.small_pages():  # a batch inside a run
            pass
        assert _huge_pages_off(0) == 1
        assert set(LocalExecutor(2).map(_huge_pages_off, range(8))) == {1}  # pool and thread
    assert _huge_pages_off(0) == 0


_FORKED_WHERE_ALLOWED = """
import multiprocessing, sys, threading
from pathlib import Path
from trajset.pipeline import ExportOptions, RunOptions, RunSettings, run_export, sample_store

methods = []
real = multiprocessing.get_context
multiprocessing.get_context = lambda method=None: methods.append(method) or real(method)
out = Path(sys.argv[1])
per_file = RunSettings(batch_input_bytes=1)  # a batch per session file: the pool runs some
two = RunOptions(workers=2, settings=per_file, fork=True)  # as the command line asks
run_export([sample_store()], out / "forked", ExportOptions(), two)
threading.Thread(target=threading.Event().wait, daemon=True).start()  # one thread more
run_export([sample_store()], out / "spawned", ExportOptions(), two)
run_export([sample_store()], out / "one", ExportOptions(), RunOptions(workers=1))
from tests.exports import data_files  # imports polars, which would keep the pool from forking

same = data_files(out / "forked") == data_files(out / "one") == data_files(out / "spawned")
print(methods, same)
"""


def test_a_pool_allowed_to_fork_is_forked_while_its_process_runs_one_thread(
    tmp_path: Path,
) -> None:
    """Spawned, the pool's first unit started 0.8 s after the driver's (a fresh interpreter
    importing the pipeline); forked, at once.  The data files are the same either way."""
    run = subprocess.run(
        [sys.executable, "-c", _FORKED_WHERE_ALLOWED, str(tmp_path)],
        capture_output=True, text=True, cwd=Path(__file__).parent.parent,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[-1] == "['fork', 'spawn'] True"


def test_a_pool_forks_only_where_allowed_on_linux_with_one_thread_and_no_polars(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(tuning.threading, "active_count", lambda: 1)
    monkeypatch.delitem(sys.modules, "polars", raising=False)
    linux = sys.platform.startswith("linux")
    assert tuning.fork_safe() == linux
    assert local._start_method(True) == ("fork" if linux else "spawn")
    assert local._start_method(False) == "spawn"  # a caller's process may hold anything
    monkeypatch.setattr(tuning.threading, "active_count", lambda: 2)
    assert not tuning.fork_safe()
    monkeypatch.setattr(tuning.threading, "active_count", lambda: 1)
    monkeypatch.setitem(sys.modules, "polars", sys)
    assert not tuning.fork_safe()


def test_the_command_line_allows_its_pool_to_fork(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[bool] = []

    def run_export(*args: object, **kwargs: object) -> None:
        seen.append(cast(RunOptions, args[3]).fork)
        raise typer.Exit()

    command = sys.modules["trajset.pipeline.cli.export"]  # the package's ``export`` is the command
    monkeypatch.setattr(command, "run_export", run_export)
    assert CliRunner().invoke(app, ["export", "--out", str(tmp_path / "o"), "-q"]).exit_code == 0
    assert seen == [True]


def _pandas_after_a_conversion(_: int) -> tuple[int, bool]:
    import pyarrow as pa

    time.sleep(0.05)  # so the pool's process takes some
    pa.array([{"a": 1}], type=pa.struct({"a": pa.int64()}))  # as trajset converts rows
    return os.getpid(), "pandas" in sys.modules


_EXPORT_BY_THE_COMMAND = """
import atexit, sys
from trajset.pipeline.cli import main
atexit.register(lambda: print("pandas imported:", "pandas" in sys.modules))
atexit.register(lambda: print("polars imported:", "polars" in sys.modules))
sys.argv = ["trajset", "export", "--out", sys.argv[1], "--workers", "1", "-q"]
main()
"""

_PANDAS_STILL_THERE = """
import pyarrow as pa
from trajset.pipeline.tuning import pyarrow_without_pandas
pyarrow_without_pandas()
assert pa.array([1]).to_pylist() == [1]
frame = pa.table({"a": [1, 2]}).to_pandas()  # asks for pandas by name: pyarrow imports it
import pandas as pd
assert type(frame) is pd.DataFrame
assert pa.array(pd.Series(["x", "y"], dtype="category")).type.id == pa.dictionary(pa.int8(), pa.string()).id
print("ok")
"""


def test_the_command_and_its_workers_import_neither_pandas_nor_polars(
    tmp_path: Path,
) -> None:
    """pyarrow imported pandas (0.25-0.35 s a process) on its first list conversion; the
    card's outcome scores imported polars (0.1 s), which only ``--where`` needs."""
    run = subprocess.run(
        [sys.executable, "-c", _EXPORT_BY_THE_COMMAND, str(tmp_path / "o")],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert "pandas imported: False" in run.stdout
    assert "polars imported: False" in run.stdout
    assert (tmp_path / "o" / "data" / "trajectories").is_dir()
    pool = {seen for pid, seen in LocalExecutor(2).map(_pandas_after_a_conversion, range(8))
            if pid != os.getpid()}  # fmt: skip
    assert pool == {False}  # this process (pytest's) is not set up
    ok = subprocess.run([sys.executable, "-c", _PANDAS_STILL_THERE], capture_output=True, text=True)
    assert ok.stdout.strip() == "ok", ok.stderr


def test_progress_reports_the_units_then_the_shards(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The shards are written after the last unit (about a fifth of a run): the bar stood at 100%."""
    seen: list[tuple[str, int, int]] = []
    per_file = RunSettings(batch_input_bytes=1)  # a batch per file: the pool writes them
    run_export(
        [sample_store()], tmp_path / "o", ExportOptions(), RunOptions(workers=2, settings=per_file),
        progress=lambda done, total, stage: seen.append((stage, done, total)),
    )  # fmt: skip
    units = [s for s in seen if s[0] == "units"]
    shards = [s for s in seen if s[0] == "shards"]
    assert seen == units + shards
    assert units[-1] == ("units", 6, 6) and [d for _, d, _ in units] == list(range(1, 7))
    assert shards == [
        ("shards", i, len(CONFIGS)) for i in range(1, len(CONFIGS) + 1)
    ]  # one per table


def test_the_progress_bar_names_its_stage_and_runs_no_thread() -> None:
    """A thread of its own would keep the command's pool from forking (``tuning.fork_safe``)."""
    threads = threading.active_count()
    bar = _ProgressBar()
    try:
        assert threading.active_count() == threads
        bar.update(3, 6, "units")
        bar.update(1, 4, "shards")
        task = bar._progress.tasks[0]
        assert (task.description, task.completed, task.total) == ("shards", 1, 4)
    finally:
        bar.close()


_FREED = """
import sys
from trajset.pipeline import tuning

def rss():
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) >> 10 for l in f if l.startswith("VmRSS"))

# 200 MB of tool-output-sized strings among small survivors (a parsed session), then freed:
# the C heap keeps their pages, as a large session's freed entries were kept
held = [("x" * 36_000 + str(i), [i]) for i in range(5_600)]
survivors = [pair[1] for pair in held]
del held
before = rss()
tuning.release_freed(int(sys.argv[1]))
print(before, rss())
"""


@pytest.mark.skipif(tuning._libc("malloc_trim") is None, reason="malloc_trim is glibc's")
def test_a_large_units_freed_memory_goes_back_to_the_kernel() -> None:
    """In a fresh process (a test's own heap would blur it): after a unit of
    ``RELEASE_AFTER_BYTES`` the 200 MB freed go back; after a small one nothing is done."""
    large, small = (
        subprocess.run(
            [sys.executable, "-c", _FREED, str(read)], capture_output=True, text=True, check=True
        ).stdout.split()
        for read in (tuning.RELEASE_AFTER_BYTES, tuning.RELEASE_AFTER_BYTES - 1)
    )
    assert int(large[0]) - int(large[1]) > 150  # MB given back
    assert abs(int(small[0]) - int(small[1])) < 20
