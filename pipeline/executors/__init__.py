"""Executors behind one protocol (``base.Executor``); ``EXECUTORS`` is the registry.

Each entry builds an executor from the worker count.  ``ray`` (for stores
that outgrow one machine) plugs in here as one more module and line.
"""

from __future__ import annotations

from collections.abc import Callable

from ..errors import UsageError
from .base import Executor
from .local import LocalExecutor

#: ``--executor`` name -> factory taking the worker count
EXECUTORS: dict[str, Callable[[int], Executor]] = {
    "local": LocalExecutor,
}


def make_executor(name: str, workers: int) -> Executor:
    """The executor called ``name``; ``UsageError`` listing the valid names."""
    if name not in EXECUTORS:
        raise UsageError(f"unknown --executor {name!r}; valid: {', '.join(EXECUTORS)}")
    return EXECUTORS[name](workers)


__all__ = ["EXECUTORS", "Executor", "LocalExecutor", "make_executor"]
