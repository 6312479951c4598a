"""The executor seam: run a job over work units and hand the results back in unit order.

An executor never changes results: the job is a pure function of the unit
and the run context it carries, so any executor and any worker count give
byte-identical data files.  A new executor is one module with such a class,
one line in ``EXECUTORS`` and one test file.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Protocol, TypeVar

T = TypeVar("T")
R = TypeVar("R")


class Executor(Protocol):
    """Maps ``job`` over ``items``; yields ``job(item)`` in the order of ``items``."""

    def map(self, job: Callable[[T], R], items: Sequence[T]) -> Iterator[R]: ...
