"""The output folder: ``--mode error|overwrite|resume``, and never a folder inside the store.

``--mode overwrite`` over a previous export writes the new one into
``DIR/.trajset.next/`` while the old one stays readable, then swaps them
(``finish_output``): the old manifest goes first (so the folder reads as
unfinished), each top-level entry is replaced by one rename, the new
manifest comes last.  A reader sees the old export, then the new one, never
the old manifest beside new data; a run killed before the swap leaves the
old export whole.
"""

from __future__ import annotations

import fcntl
import os
import shutil
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from ..errors import OutputError, UsageError
from ..options import Mode

LOCK = ".trajset.lock"  # held by the export writing into the folder
NEXT = ".trajset.next"  # the export being written by --mode overwrite
OLD = ".trajset.old"  # the previous export while it is swapped out

#: what trajset writes at the top of an export folder (nothing else is removed by overwrite)
MANAGED = (
    "atif",
    "data",
    "errors.parquet",
    "manifest.json",
    "README.md",
    ".trajset",
    LOCK,
    NEXT,
    OLD,
)


def check_outside(out: Path, stores: Sequence[Path]) -> None:
    for store in stores:
        if store.is_dir() and out.resolve().is_relative_to(store.resolve()):
            raise UsageError(
                f"--out {out} lies inside the store {store}; choose a folder outside it"
            )


@contextmanager
def locked(out: Path) -> Iterator[None]:
    """One export at a time per folder: a second one refuses.  The lock is the operating
    system's (``flock`` on the lock file), so a killed run's lock is gone with its process
    and no two runs can both take one over (a check of the pid, then an unlink, let two
    runs each take a stale lock)."""
    lock = out / LOCK
    try:
        out.mkdir(parents=True, exist_ok=True)
        fd = _take(lock)
    except OSError as exc:
        raise OutputError(f"--out {out} cannot be used: {exc.strerror or exc}") from None
    try:
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        yield
    finally:
        lock.unlink(missing_ok=True)
        os.close(fd)


def _take(lock: Path) -> int:
    """An open descriptor of ``lock`` holding its exclusive lock; ``OutputError`` when a
    live run holds it."""
    while True:
        fd = os.open(lock, os.O_CREAT | os.O_RDWR, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 32).decode(errors="replace").strip()
            os.close(fd)
            raise OutputError(
                f"another export (process {holder or 'starting'}) is writing into "
                f"{lock.parent}; wait for it to finish"
            ) from None
        try:
            same = os.fstat(fd).st_ino == os.stat(lock).st_ino
        except FileNotFoundError:  # the run before let go and removed it meanwhile
            same = False
        if same:
            return fd
        os.close(fd)


def prepare_output(out: Path, mode: Mode) -> Path:
    """Apply ``--mode`` to the output folder (the caller holds its lock); returns the folder
    to write into: ``out``, or a staging folder inside it that ``finish_output`` swaps in."""
    try:
        return _prepare(out, mode)
    except OSError as exc:
        raise OutputError(f"--out {out} cannot be used: {exc.strerror or exc}") from None


def mark_unfinished(out: Path) -> None:
    """A resume that may go on drops the manifest, which is written last: until the run
    ends the folder reads as unfinished.  A refused resume keeps a finished export whole."""
    (out / "manifest.json").unlink(missing_ok=True)


def finish_output(out: Path, staged: Path) -> None:
    """Swap a staged export in place of the previous one (see the module docstring)."""
    if staged == out:
        return
    try:
        old = out / OLD
        _remove(old)
        old.mkdir()
        (out / "manifest.json").unlink(missing_ok=True)
        for name in MANAGED:
            if name not in (LOCK, NEXT, OLD, "manifest.json") and (out / name).exists():
                (out / name).rename(old / name)
        for name in sorted(p.name for p in staged.iterdir()):
            if name != "manifest.json":
                (staged / name).rename(out / name)
        (staged / "manifest.json").rename(out / "manifest.json")
        _remove(staged)
        _remove(old)
    except OSError as exc:
        raise OutputError(
            f"--out {out}: the new export could not replace the old one: {exc}"
        ) from None


def _remove(p: Path) -> None:
    if p.is_dir() and not p.is_symlink():
        shutil.rmtree(p)
    elif p.exists() or p.is_symlink():
        p.unlink()


def _prepare(out: Path, mode: Mode) -> Path:
    if out.exists() and not out.is_dir():
        raise OutputError(f"--out {out} exists and is not a folder")
    existing = sorted(p.name for p in out.iterdir() if p.name != LOCK) if out.exists() else []
    foreign = [n for n in existing if n not in MANAGED]
    if mode == Mode.error and foreign:
        raise OutputError(
            f"--out {out} holds files trajset did not write ({', '.join(foreign[:3])}); "
            "give an empty or new folder"
        )
    if mode == Mode.error and existing:
        raise OutputError(
            f"--out {out} is not empty; pass --mode overwrite to replace a previous export "
            "or --mode resume to finish one"
        )
    if mode == Mode.overwrite and existing:
        if foreign:
            raise OutputError(
                f"--out {out} holds files trajset did not write ({', '.join(foreign[:3])}); "
                "refusing to overwrite it: give an empty or new folder"
            )
        for name in (NEXT, OLD):  # left by a run killed before or during its swap
            _remove(out / name)
        if (out / "manifest.json").exists():  # a finished export: readable until the swap
            (out / NEXT).mkdir()
            return out / NEXT
        for name in existing:  # an unfinished one: nothing a reader could use
            _remove(out / name)
    if mode == Mode.resume:  # the manifest goes once the resume is allowed (mark_unfinished)
        for name in (NEXT, OLD):  # a killed overwrite's staging: its results are not markers
            _remove(out / name)
        for tmp in out.rglob(".*.tmp"):  # a killed writer's temporary files
            tmp.unlink(missing_ok=True)
    out.mkdir(parents=True, exist_ok=True)
    return out
