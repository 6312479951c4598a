"""Executors behind one protocol (``base.Executor``); ``EXECUTORS`` is the registry.

Each entry builds an executor from the run options (workers, a cluster
address).  ``ray`` (for stores that outgrow one machine) needs the
``trajset[ray]`` extra; it is imported only when used.
"""

from __future__ import annotations

from collections.abc import Callable

from ..errors import UsageError
from ..options import RunOptions
from .base import Executor
from .local import LocalExecutor
from .ray import RayExecutor

#: ``--executor`` name -> factory taking the run options
EXECUTORS: dict[str, Callable[[RunOptions], Executor]] = {
    "local": lambda run: LocalExecutor(run.workers, fork=run.fork),
    "ray": lambda run: RayExecutor(run.workers, run.ray_address),
}


def make_executor(run: RunOptions) -> Executor:
    """The executor ``run.executor`` names; ``UsageError`` listing the valid names."""
    if run.executor not in EXECUTORS:
        raise UsageError(f"unknown --executor {run.executor!r}; valid: {', '.join(EXECUTORS)}")
    return EXECUTORS[run.executor](run)


__all__ = ["EXECUTORS", "Executor", "LocalExecutor", "RayExecutor", "make_executor"]
