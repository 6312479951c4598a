"""Same input and options give byte-identical data files, whatever the worker count."""

from __future__ import annotations

import json
from pathlib import Path

from trajset.pipeline import ExportOptions, Mode, RunOptions, run_export, sample_store

DATA_DIRS = ("atif", "data")


def _data_files(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for d in DATA_DIRS
        if (root / d).exists()
        for p in sorted((root / d).rglob("*"))
        if p.is_file()
    }


def test_two_exports_are_byte_identical_across_worker_counts(tmp_path: Path) -> None:
    opts = ExportOptions()
    run_export([sample_store()], tmp_path / "a", opts, RunOptions(workers=1))
    run_export([sample_store()], tmp_path / "b", opts, RunOptions(workers=1))
    run_export([sample_store()], tmp_path / "c", opts, RunOptions(workers=2))
    a = _data_files(tmp_path / "a")
    assert len(a) >= 9
    assert a == _data_files(tmp_path / "b") == _data_files(tmp_path / "c")


def test_resume_skips_finished_units_and_gives_the_same_files(tmp_path: Path) -> None:
    out = tmp_path / "o"
    first = run_export([sample_store()], out, ExportOptions(), RunOptions(workers=1))
    before = _data_files(out)
    # Simulate a run killed midway: half the units lost their marker and their documents.
    markers = sorted((out / ".trajset" / "units").glob("*.json"))
    for m in markers[: len(markers) // 2]:
        for name in json.loads(m.read_text())["documents"]:
            (out / "atif" / name).unlink()
        m.unlink()
    again = run_export(
        [sample_store()], out, ExportOptions(), RunOptions(workers=1, mode=Mode.resume)
    )
    assert _data_files(out) == before
    assert again.counts == first.counts
    assert not list(out.rglob("*.tmp"))
