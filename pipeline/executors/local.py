"""``local``: this machine; in-process for one worker, a process pool for more."""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")


class LocalExecutor:
    """``workers`` processes; the job is pickled with each chunk of items (once per worker for
    small runs), so what it builds lazily is built once per chunk, never per item.

    Inside a ``with`` block the pool started by the first map of more than one item
    serves every later map until the block ends, so a run's second map (its shards)
    spawns no process again; outside one, each map has a pool of its own."""

    def __init__(self, workers: int = 1) -> None:
        self.workers = max(1, min(workers, os.cpu_count() or 1))  # more only wait for a CPU
        self._pool: ProcessPoolExecutor | None = None
        self._open = False

    def __enter__(self) -> LocalExecutor:
        self._open = True
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        self._open = False
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None

    def map(self, job: Callable[[T], R], items: Sequence[T]) -> Iterator[R]:
        if self.workers == 1 or len(items) <= 1:
            yield from map(job, items)
            return
        chunksize = max(1, len(items) // (self.workers * 16))
        if self._pool is not None:
            yield from self._pool.map(job, items, chunksize=chunksize)
            return
        # spawn, not fork: polars and pyarrow run thread pools, and a forked child can
        # inherit one of their locks held (a hang seen after --where ran in the parent)
        pool = ProcessPoolExecutor(self.workers, mp_context=multiprocessing.get_context("spawn"))
        if self._open:
            self._pool = pool
            yield from pool.map(job, items, chunksize=chunksize)
            return
        with pool:
            yield from pool.map(job, items, chunksize=chunksize)
