"""Fuzz every store kind for a number of minutes; print the inputs that broke an invariant.

    python benchmarks/fuzz.py --minutes 10 --seed 1 [--keep DIR] [--small-slices]

Each round takes a seed input of one registered store kind (one of its reader's declared
``fixtures``; a reader without any stops the runner at its start), mutates one of its files (truncate at a byte offset,
flip bytes, insert or delete bytes, drop, repeat or swap lines, replace a value's type) and
exports it.  Invariants: the export returns (no exception reaches the caller); every input
session is accounted for (read = exported + failed) and every unit is counted; nothing is
written outside the output folder; and every 5th round, 1 and 2 workers write byte-identical
data files.  A broken invariant prints the round, the mutation and the kept input folder.
``--small-slices`` runs the 1-worker exports in slices of 2 trajectories with their rows
spilled after every slice and every 2 pairs (``RunSettings``), so the 1-and-2-worker
comparison also holds those paths against the defaults.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the fixtures live in tests/
from tests.fixture_stores import fixtures, lay_out
from trajset.pipeline import ExportOptions, RunOptions, RunSettings, run_export
from trajset.pipeline.stores import READERS

ROOT = Path(__file__).resolve().parents[1]
SMALL_SLICES = RunSettings(slice_trajectories=2, spill_document_bytes=1, spill_session_rows=2)


def check_seeds() -> None:
    """Every registered reader declares the stores it is tested on (``Reader.fixtures``):
    they are its seeds here."""
    missing = sorted(k for k, fx in fixtures().items() if not fx)
    if missing:
        raise SystemExit(f"fuzz: no seed store for the store kind(s) {', '.join(missing)}")


def _seed(kind: str, rng: random.Random, store: Path) -> None:
    """A copy of one fixture of ``kind`` at ``store`` (``Reader.fixtures``)."""
    lay_out(rng.choice(fixtures()[kind]), store)


def _lines(data: bytes, rng: random.Random, op: str) -> bytes:
    lines = data.split(b"\n")
    if len(lines) < 2:
        return data
    i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
    if op == "drop":
        del lines[i]
    elif op == "repeat":
        lines.insert(i, lines[j])
    else:
        lines[i], lines[j] = lines[j], lines[i]
    return b"\n".join(lines)


def _retype(data: bytes, rng: random.Random) -> bytes:
    try:
        text = data.decode()
    except UnicodeDecodeError:
        return data
    values = ["null", "[]", "{}", '"x"', "1e400", "-0", "18446744073709551616", "true"]
    keys = [
        '"id"',
        '"parent"',
        '"ts"',
        '"type"',
        '"content"',
        '"usage"',
        '"events"',
        '"messages"',
        '"uuid"',
        '"parentUuid"',
    ]
    key = rng.choice(keys)
    at = text.find(key + ":")
    if at < 0:
        return data
    start = at + len(key) + 1
    end = start
    while end < len(text) and text[end] not in ",}\n":
        end += 1
    return (text[:start] + rng.choice(values) + text[end:]).encode()


MUTATIONS: dict[str, Callable[[bytes, random.Random], bytes]] = {
    "truncate": lambda d, r: d[: r.randrange(len(d) + 1)],
    "flip": lambda d, r: bytes(b ^ (1 << r.randrange(8)) if r.random() < 0.002 else b for b in d),
    "insert": lambda d, r: (lambda i: d[:i] + bytes(r.randrange(256) for _ in range(r.randrange(1, 9))) + d[i:])(r.randrange(len(d) + 1)),
    "delete": lambda d, r: (lambda i: d[:i] + d[i + r.randrange(1, 64) :])(r.randrange(len(d) + 1)),
    "drop_line": lambda d, r: _lines(d, r, "drop"),
    "repeat_line": lambda d, r: _lines(d, r, "repeat"),
    "swap_lines": lambda d, r: _lines(d, r, "swap"),
    "retype": _retype,
}  # fmt: skip


def _data(out: Path) -> dict[str, bytes]:
    files = [p for d in ("atif", "data") for p in sorted((out / d).rglob("*")) if p.is_file()]
    return {str(p.relative_to(out)): p.read_bytes() for p in [*files, out / "errors.parquet"]}


def one_round(
    work: Path, kind: str, rng: random.Random, determinism: bool, settings: RunSettings
) -> str:
    """Mutate, export, check; returns "" or what broke."""
    store = work / "store"
    _seed(kind, rng, store)
    suffixes = (".jsonl", ".json", ".db")
    files = sorted(p for p in store.rglob("*") if p.is_file() and p.suffix in suffixes)
    target = rng.choice(files)
    op = rng.choice(list(MUTATIONS))
    target.write_bytes(MUTATIONS[op](target.read_bytes(), rng))
    what = f"{kind} {op} {target.relative_to(store)}"
    before = {p for p in work.rglob("*")}
    try:
        run = run_export(
            [store], work / "out", ExportOptions(), RunOptions(workers=1, settings=settings)
        )
    except Exception:  # an abort is fine only as a usage or output error with one line
        from trajset.pipeline.errors import TrajsetError

        exc = sys.exc_info()[1]
        if isinstance(exc, TrajsetError):
            return ""
        return f"{what}: exception\n{traceback.format_exc()}"
    c = run.counts  # run_export checks this too (InvariantBroken); checked here once more
    if c["sessions_read"] != c["sessions_exported"] + c["sessions_failed"]:
        return f"{what}: counts do not reconcile {dict(c)}"
    outside = (
        {p for p in work.rglob("*")} - before - set((work / "out").rglob("*")) - {work / "out"}
    )
    if outside:
        return f"{what}: wrote outside the output folder: {sorted(map(str, outside))[:3]}"
    if determinism:
        run_export([store], work / "out2", ExportOptions(), RunOptions(workers=2))
        if _data(work / "out") != _data(work / "out2"):
            return f"{what}: 1 and 2 workers differ"
    return ""


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--minutes", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--keep", type=Path, help="copy each breaking input here")
    ap.add_argument("--small-slices", action="store_true", help="slices of 2, spill often")
    args = ap.parse_args()
    check_seeds()
    settings = SMALL_SLICES if args.small_slices else RunSettings()
    rng = random.Random(args.seed)
    deadline = time.monotonic() + 60 * args.minutes
    rounds = broken = 0
    while time.monotonic() < deadline:
        rounds += 1
        kind = rng.choice(list(READERS))
        with tempfile.TemporaryDirectory() as tmp:
            problem = one_round(Path(tmp), kind, rng, rounds % 5 == 0, settings)
            if problem:
                broken += 1
                print(f"round {rounds}: {problem}", flush=True)
                if args.keep:
                    shutil.copytree(
                        Path(tmp) / "store", args.keep / f"round-{rounds}", symlinks=True
                    )
    print(
        json.dumps({"minutes": args.minutes, "seed": args.seed, "rounds": rounds, "broken": broken})
    )
    sys.exit(1 if broken else 0)


if __name__ == "__main__":
    main()
