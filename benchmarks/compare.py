"""Two trajset builds on one store, in one run: alternating wall times and their data files.

    python benchmarks/compare.py BEFORE/bin/trajset AFTER/bin/trajset STORE [--repeat 5] [--workers 1,2]

Each build's ``trajset export STORE`` runs as a user runs it (a fresh process; the wall
time from its start to its exit, imports included), alternating before and after for
every worker count, ``--repeat`` times, so machine load falls on both alike; the medians
and their ratio are printed (as JSON with ``--json``).  Then the data files of the two
last exports (``atif/``, ``data/``, ``errors.parquet``, the card) are compared byte for
byte: a refactoring must change none of them.  Install each build in a venv of its own
(``pip install .``, not editable) so each runs its own code.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DATA = ("atif", "data", "errors.parquet", "README.md")


def data_files(out: Path) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    for name in DATA:
        p = out / name
        for f in sorted(p.rglob("*")) if p.is_dir() else [p]:
            if f.is_file():
                files[str(f.relative_to(out))] = f.read_bytes()
    return files


def timed_export(trajset: str, store: Path, out: Path, workers: int, extra: list[str]) -> float:
    if hasattr(os, "sync"):  # earlier runs' writes reach the disk before this one is timed
        os.sync()  # (``bench.settle``; the previous output stays, for --mode overwrite)
    start = time.perf_counter()
    subprocess.run(
        [trajset, "export", str(store), "--out", str(out), "--quiet", "--mode", "overwrite",
         "--workers", str(workers), *extra],
        check=True,
    )  # fmt: skip
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("store", type=Path)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--no-redact", action="store_true")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    extra = ["--no-redact"] if args.no_redact else []
    builds = {"before": args.before, "after": args.after}
    figures: dict[str, dict[str, object]] = {}
    identical = True
    with tempfile.TemporaryDirectory() as tmp:
        for w in (int(x) for x in args.workers.split(",")):
            times: dict[str, list[float]] = {name: [] for name in builds}
            for _ in range(args.repeat):
                for name, trajset in builds.items():
                    out = Path(tmp) / f"{name}-{w}"
                    times[name].append(timed_export(trajset, args.store, out, w, extra))
            same = data_files(Path(tmp) / f"before-{w}") == data_files(Path(tmp) / f"after-{w}")
            identical = identical and same
            medians = {name: statistics.median(t) for name, t in times.items()}
            figures[f"{w} worker{'s' if w > 1 else ''}"] = {
                **{f"{name} s": [round(t, 2) for t in ts] for name, ts in times.items()},
                **{f"{name} median s": round(m, 2) for name, m in medians.items()},
                "after / before": round(medians["after"] / medians["before"], 3),
                "data files identical": same,
            }
    if args.json:
        print(json.dumps(figures, indent=1))
    else:
        for label, f in figures.items():
            print(f"{label}: before {f['before median s']} s, after {f['after median s']} s, "
                  f"after/before {f['after / before']}, data identical: {f['data files identical']}")  # fmt: skip
    sys.exit(0 if identical else 1)


if __name__ == "__main__":
    main()
