"""The one place that maps errors to exit codes: 0 success, 1 processing failed, 2 usage.

Every command is wrapped by ``exits``: a ``UsageError`` exits 2, any other
``TrajsetError`` exits 1, each with one line on stderr and no traceback.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import NoReturn, ParamSpec, TypeVar

import typer

from ..errors import TrajsetError, UsageError

P = ParamSpec("P")
R = TypeVar("R")

OK, FAILED, USAGE = 0, 1, 2


def exit_code(exc: TrajsetError) -> int:
    return USAGE if isinstance(exc, UsageError) else FAILED


def fail(message: str, code: int) -> NoReturn:
    typer.echo(f"trajset: {message}", err=True)
    raise typer.Exit(code)


def exits(command: Callable[P, R]) -> Callable[P, R]:
    """Run ``command``; a ``TrajsetError`` becomes its message and exit code."""

    @functools.wraps(command)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return command(*args, **kwargs)
        except TrajsetError as exc:
            fail(str(exc), exit_code(exc))

    return wrapper
