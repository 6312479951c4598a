"""The output folder: ``--mode error|overwrite|resume``, and never a folder inside the store."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from ..errors import OutputError, UsageError
from ..options import Mode

LOCK = ".trajset.lock"  # held by the export writing into the folder

#: what trajset writes at the top of an export folder (nothing else is removed by overwrite)
MANAGED = ("atif", "data", "errors.parquet", "manifest.json", "README.md", ".trajset", LOCK)


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


def prepare_output(out: Path, mode: Mode) -> None:
    """Apply ``--mode`` to the output folder (the caller holds its lock)."""
    try:
        _prepare(out, mode)
    except OSError as exc:
        raise OutputError(f"--out {out} cannot be used: {exc.strerror or exc}") from None


def _prepare(out: Path, mode: Mode) -> None:
    if out.exists() and not out.is_dir():
        raise OutputError(f"--out {out} exists and is not a folder")
    existing = sorted(p.name for p in out.iterdir() if p.name != LOCK) if out.exists() else []
    if mode == Mode.error and existing:
        raise OutputError(
            f"--out {out} is not empty; pass --mode overwrite to replace a previous export "
            "or --mode resume to finish one"
        )
    if mode == Mode.overwrite and existing:
        foreign = [n for n in existing if n not in MANAGED]
        if foreign:
            raise OutputError(
                f"--out {out} holds files trajset did not write ({', '.join(foreign[:3])}); "
                "refusing to overwrite it"
            )
        for name in existing:
            p = out / name
            shutil.rmtree(p) if p.is_dir() else p.unlink()
    if (
        mode == Mode.resume
    ):  # the manifest is written last: until then the folder reads as unfinished
        (out / "manifest.json").unlink(missing_ok=True)
        for tmp in out.rglob(".*.tmp"):  # a killed writer's temporary files
            tmp.unlink(missing_ok=True)
    out.mkdir(parents=True, exist_ok=True)
