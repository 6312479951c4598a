"""Throughput of ``trajset export`` on a generated corpus, redaction on vs off, in one run.

    python benchmarks/bench.py --sessions 300 --repeat 3

Runs alternate (off, on, off, on, ...) in one process with one worker, so
the ratio is measured under the same machine load; absolute MB/s drift on
shared machines, ratios much less.  Peak memory is measured per run in a
child process (ru_maxrss), for a corpus and for one twice its size, to show
memory grows with the largest unit, not with the store.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from corpus import build_corpus

from trajset.pipeline import ExportOptions, RunOptions, run_export


def one_run(
    store: Path, out: Path, redact: bool, workers: int
) -> tuple[float, int, dict[str, float]]:
    shutil.rmtree(out, ignore_errors=True)
    start = time.perf_counter()
    run = run_export([store], out, ExportOptions(redact=redact), RunOptions(workers=workers))
    seconds = time.perf_counter() - start
    return seconds, run.bytes_read, {k: round(v.seconds, 3) for k, v in run.stats.stages.items()}


def peak_rss_mb(store: Path, out: Path) -> float:
    """Peak resident memory of one single-worker export in a fresh child process."""
    shutil.rmtree(out, ignore_errors=True)
    code = (
        "import resource,sys;from pathlib import Path;"
        "from trajset.pipeline import ExportOptions, RunOptions, run_export;"
        f"run_export([Path({str(store)!r})], Path({str(out)!r}), ExportOptions(), RunOptions(workers=1));"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"
    )
    out_text = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True
    ).stdout
    return int(out_text.strip().splitlines()[-1]) / 1024


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--sessions", type=int, default=300)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--json", action="store_true", help="print the results as JSON")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        store = root / "corpus"
        size = build_corpus(store, args.sessions, seed=1)
        times: dict[bool, list[float]] = {False: [], True: []}
        stages: dict[bool, dict[str, float]] = {}
        for _ in range(args.repeat):
            for redact in (False, True):
                seconds, _, st = one_run(store, root / "out", redact, args.workers)
                times[redact].append(seconds)
                stages[redact] = st
        off, on = statistics.median(times[False]), statistics.median(times[True])
        big = root / "corpus2"
        build_corpus(big, args.sessions * 2, seed=1)
        rss_small, rss_big = peak_rss_mb(store, root / "m1"), peak_rss_mb(big, root / "m2")
    result = {
        "sessions": args.sessions,
        "corpus_mb": round(size / 1e6, 2),
        "workers": args.workers,
        "repeat": args.repeat,
        "mb_per_s_no_redact": round(size / 1e6 / off, 2),
        "mb_per_s_redact": round(size / 1e6 / on, 2),
        "ratio_redact_over_no_redact": round(off / on, 3),
        "stage_seconds_no_redact": stages[False],
        "stage_seconds_redact": stages[True],
        "peak_rss_mb": {
            f"{args.sessions} sessions": round(rss_small, 1),
            f"{2 * args.sessions} sessions": round(rss_big, 1),
        },
        "maxrss_self_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }
    print(
        json.dumps(result, indent=2)
        if args.json
        else "\n".join(f"{k}: {v}" for k, v in result.items())
    )


if __name__ == "__main__":
    main()
