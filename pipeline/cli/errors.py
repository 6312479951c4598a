"""The one place that maps errors to exit codes: 0 success, 1 processing failed, 2 usage.

Every command is wrapped by ``exits``: a ``UsageError`` exits 2, any other
``TrajsetError`` exits 1, Ctrl-C exits 130 (``export`` names the command that
resumes it), each with one line on stderr and no traceback.
"""

from __future__ import annotations

import functools
import shlex
import sys
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


#: the exit code of a command stopped by Ctrl-C (128 + SIGINT, as shells report it)
INTERRUPTED = 130


def interrupted_message(argv: list[str] | None = None) -> str:
    """What an interrupted command says: for ``export``, that the batches finished are kept
    and the exact command that finishes the run."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] != "export":
        return "interrupted"
    kept, skip = [], False
    for a in args:
        if skip:
            skip = False
        elif a == "--mode":
            skip = True
        elif not a.startswith("--mode="):
            kept.append(a)
    again = shlex.join(["trajset", *kept, "--mode", "resume"])
    return f"interrupted; the batches finished are kept, and this finishes the export: {again}"


def exits(command: Callable[P, R]) -> Callable[P, R]:
    """Run ``command``; a ``TrajsetError`` becomes its message and exit code."""

    @functools.wraps(command)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return command(*args, **kwargs)
        except TrajsetError as exc:
            fail(str(exc), exit_code(exc))
        except KeyboardInterrupt:
            fail(interrupted_message(), INTERRUPTED)

    return wrapper
