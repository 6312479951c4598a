"""``local``: this machine; the calling process is one of the ``workers``, a process pool
the others."""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from queue import SimpleQueue
from typing import TypeVar

from ..tuning import fork_safe, pyarrow_without_pandas
from .base import Lifetime, run_chunk

T = TypeVar("T")
R = TypeVar("R")


def _worker() -> None:
    """A pool process: leaves Ctrl-C to the calling process (which stops the run and says
    how to resume it), so a terminal's interrupt prints no traceback from every worker."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    pyarrow_without_pandas()


def _start_method(fork: bool) -> str:
    """``fork`` where allowed and ``fork_safe`` (what this process has buffered for its
    standard streams is written first, or each child would write it again), else ``spawn``."""
    if not (fork and fork_safe()):
        return "spawn"
    sys.stdout.flush()
    sys.stderr.flush()
    return "fork"


class LocalExecutor(Lifetime):
    """``workers`` processes: this one (its items run in a thread) and a pool of
    ``workers - 1``.  So one process fewer is started, and while the pool starts this one
    already works.  With ``fork``, the pool's processes are forked where ``tuning.fork_safe``
    allows, so they start with the pipeline imported; otherwise they are spawned (a fresh
    interpreter importing it: about a second before a first unit).  The job is
    pickled with each chunk for the pool, so what it builds lazily is built once per
    chunk there (and once here).

    Inside a ``with`` block the pool started by the first map of more than one item
    serves every later map until the block ends, so a run's second map (its shards)
    spawns no process again; outside one, each map has a pool of its own."""

    def __init__(self, workers: int = 1, *, fork: bool = False) -> None:
        self.workers = max(1, min(workers, os.cpu_count() or 1))  # more only wait for a CPU
        self.fork = fork
        self._pool: ProcessPoolExecutor | None = None

    def close(self) -> None:
        if self._pool is not None:
            interrupted = sys.exc_info()[0] is KeyboardInterrupt
            self._pool.shutdown(cancel_futures=interrupted)  # an interrupt drops queued work
            self._pool = None

    def map(self, job: Callable[[T], R], items: Sequence[T]) -> Iterator[R]:
        if self.workers == 1 or len(items) <= 1:
            yield from map(job, items)
            return
        if self._pool is not None:
            yield from self._shared(self._pool, job, items)
            return
        context = multiprocessing.get_context(_start_method(self.fork))
        pool = ProcessPoolExecutor(self.workers - 1, mp_context=context, initializer=_worker)
        if self._open:
            self._pool = pool
            yield from self._shared(pool, job, items)
            return
        with pool:
            yield from self._shared(pool, job, items)

    def _shared(
        self, pool: ProcessPoolExecutor, job: Callable[[T], R], items: Sequence[T]
    ) -> Iterator[R]:
        """``job`` over ``items`` in the pool and in a thread here, results in their order.

        Work goes to whoever is free, a chunk to a pool process, one item to the thread,
        never queued ahead: a few large items (a run's shards) are spread as evenly as
        many small ones."""
        size = max(1, len(items) // (self.workers * 16))
        pending: deque[Future[list[R]]] = deque()  # in the order of their items
        busy: set[Future[list[R]]] = set()  # running in the pool
        here: Future[list[R]] | None = None  # running in the thread
        front = 0  # items[front:] are not started
        # Each future says here when it is done.  ``concurrent.futures.wait`` is not used:
        # it takes every future's lock in a Python loop, and a Ctrl-C between two of them
        # left one held, so the future's result could never be set and the run hung.
        finished: SimpleQueue[Future[list[R]]] = SimpleQueue()
        with ThreadPoolExecutor(1, thread_name_prefix="trajset-worker") as thread:
            while front < len(items) or pending:
                while front < len(items) and len(busy) < self.workers - 1:
                    chunk = pool.submit(run_chunk, job, items[front : front + size])
                    chunk.add_done_callback(finished.put)
                    busy.add(chunk)
                    pending.append(chunk)
                    front += size
                if front < len(items) and (here is None or here.done()):
                    here = thread.submit(run_chunk, job, items[front : front + 1])
                    here.add_done_callback(finished.put)
                    pending.append(here)
                    front += 1
                while pending and pending[0].done():
                    yield from pending.popleft().result()
                if pending:  # until a process or the thread is free, or the next result ready
                    finished.get()  # one future more is done (perhaps one already seen)
                    busy = {f for f in busy if not f.done()}
