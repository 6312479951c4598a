"""``local``: this machine; in-process for one worker, a process pool for more."""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")


class LocalExecutor:
    """``workers`` processes; the job is pickled with each chunk of items (once per worker for
    small runs), so what it builds lazily is built once per chunk, never per item."""

    def __init__(self, workers: int = 1) -> None:
        self.workers = max(1, min(workers, os.cpu_count() or 1))  # more only wait for a CPU

    def map(self, job: Callable[[T], R], items: Sequence[T]) -> Iterator[R]:
        if self.workers == 1 or len(items) <= 1:
            yield from map(job, items)
            return
        chunksize = max(1, len(items) // (self.workers * 16))
        # spawn, not fork: polars and pyarrow run thread pools, and a forked child can inherit
        # one of their locks held (a hang seen after --where was evaluated in the parent)
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=self.workers, mp_context=context) as pool:
            yield from pool.map(job, items, chunksize=chunksize)
