"""The one place that maps errors to exit codes: 0 success, 1 processing failed, 2 usage.

Every command is wrapped by ``exits``: a ``UsageError`` exits 2, any other
``TrajsetError`` exits 1, a full disk exits 1 and Ctrl-C 130 (for ``export`` both name
the command that resumes it), each with one line on stderr and no traceback.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shlex
import sqlite3
import sys
from collections.abc import Callable
from typing import NoReturn, ParamSpec, TypeVar

import typer

from ..errors import TrajsetError, UsageError, disk_full

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
    again = _resume_command(args)
    return f"interrupted; the batches finished are kept, and this finishes the export: {again}"


def _resume_command(args: list[str]) -> str:
    """``args`` (an ``export`` command line) with ``--mode resume`` in place of any mode."""
    kept, skip = [], False
    for a in args:
        if skip:
            skip = False
        elif a == "--mode":
            skip = True
        elif not a.startswith("--mode="):
            kept.append(a)
    return shlex.join(["trajset", *kept, "--mode", "resume"])


def _folder_bytes(folder: str) -> int:
    total = 0
    for root, _, files in os.walk(folder):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(root, name)).st_size
    return total


def disk_full_message(exc: BaseException, out: object = None, argv: list[str] | None = None) -> str:
    """What a command stopped by a full disk says: where, how much was written to ``out``
    (the command's output folder), and for ``export`` the command that finishes the run
    once there is room."""
    args = list(sys.argv[1:] if argv is None else argv)
    out = str(out) if out else None
    where = getattr(exc, "filename", None) or out or "the output folder"
    message = f"the disk is full: writing {where} failed ({exc})"
    if out and os.path.isdir(out):
        message += f"; {_folder_bytes(out):,} bytes are in {out}"
    if args and args[0] == "export":
        message += f". Free some space, then this finishes the export: {_resume_command(args)}"
    return message


def exits(command: Callable[P, R]) -> Callable[P, R]:
    """Run ``command``; a ``TrajsetError`` becomes its message and exit code, a full disk
    one message and exit 1."""

    @functools.wraps(command)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return command(*args, **kwargs)
        except TrajsetError as exc:
            fail(str(exc), exit_code(exc))
        except KeyboardInterrupt:
            fail(interrupted_message(), INTERRUPTED)
        except (OSError, sqlite3.OperationalError) as exc:
            if not disk_full(exc):
                raise
            fail(disk_full_message(exc, kwargs.get("out")), FAILED)

    return wrapper
