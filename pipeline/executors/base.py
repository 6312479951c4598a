"""The executor seam: run a job over work units and hand the results back in unit order.

An executor never changes results: the job is a pure function of the unit
and the run context it carries, so any executor and any worker count give
byte-identical data files.  A run maps two jobs through one executor, in a
``with`` block so both share its workers: the batches of units, then the
shards of the tables.  A new executor is one module with such a class, one
line in ``EXECUTORS`` and one test file.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol, Self, TypeVar

T = TypeVar("T")
R = TypeVar("R")


def run_chunk(job: Callable[[T], R], chunk: Sequence[T]) -> list[R]:
    """``job`` over a chunk of items, in order: what a worker is sent (a process, a task)."""
    return [job(item) for item in chunk]


class Executor(Protocol):
    """Maps ``job`` over ``items``; yields ``job(item)`` in the order of ``items``.  Its
    workers live until the ``with`` block ends (outside one, until the map ends)."""

    def map(self, job: Callable[[T], R], items: Sequence[T]) -> Iterator[R]: ...

    def __enter__(self) -> Executor: ...

    def __exit__(self, *exc: Any) -> None: ...


class Lifetime:
    """An executor's ``with`` block: the workers a map starts live until the block ends
    (``close``), so a run's maps share them; outside one, a map releases its own."""

    _open = False

    def __enter__(self) -> Self:
        self._open = True
        return self

    def __exit__(self, *exc: Any) -> None:
        self._open = False
        self.close()

    def close(self) -> None:
        """Release the workers (a pool, a Ray this executor started)."""
