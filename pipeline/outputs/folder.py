"""The output folder: ``--mode error|overwrite|resume``, and never a folder inside the store."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

from ..errors import OutputError, UsageError
from ..options import Mode

#: what trajset writes at the top of an export folder (nothing else is removed by overwrite)
MANAGED = ("atif", "data", "errors.parquet", "manifest.json", "README.md", ".trajset")


def check_outside(out: Path, stores: Sequence[Path]) -> None:
    for store in stores:
        if store.is_dir() and out.resolve().is_relative_to(store.resolve()):
            raise UsageError(
                f"--out {out} lies inside the store {store}; choose a folder outside it"
            )


def prepare_output(out: Path, mode: Mode) -> None:
    """Apply ``--mode`` to the output folder."""
    if out.exists() and not out.is_dir():
        raise OutputError(f"--out {out} exists and is not a folder")
    existing = sorted(p.name for p in out.iterdir()) if out.exists() else []
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
    out.mkdir(parents=True, exist_ok=True)
