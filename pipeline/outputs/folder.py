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
    """One export at a time per folder: a second one refuses; a lock left by a process that
    is gone (a killed run) is taken over."""
    lock = out / LOCK
    try:
        out.mkdir(parents=True, exist_ok=True)
        fd = _take(lock)
    except OSError as exc:
        raise OutputError(f"--out {out} cannot be used: {exc.strerror or exc}") from None
    try:
        os.write(fd, str(os.getpid()).encode())
        os.close(fd)
        yield
    finally:
        lock.unlink(missing_ok=True)


def _take(lock: Path) -> int:
    try:
        return os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    except FileExistsError:
        holder = lock.read_text(errors="replace").strip()
        if holder.isdigit() and _alive(int(holder)):
            raise OutputError(
                f"another export (process {holder}) is writing into {lock.parent}; wait for it, "
                f"or remove {lock} if no export runs"
            ) from None
        lock.unlink(missing_ok=True)
        return os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


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
