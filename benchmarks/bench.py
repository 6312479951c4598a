"""The export's speed, memory and efficiency on generated corpora, measured in one run.

    python benchmarks/bench.py                                   # ~60 MB, large tool outputs
    python benchmarks/bench.py --sessions 200 --tool-output-kb 36 --sizes 1,2,4 --repeat 3 \\
        --write benchmarks/RESULTS.md
    python benchmarks/bench.py --sessions 5 --repeat 1 --sizes 1   # a smoke run (CI)
    python benchmarks/bench.py --format einox --write benchmarks/RESULTS.md   # an einox store
    python benchmarks/bench.py --format codex --write benchmarks/RESULTS.md   # Codex rollouts
    python benchmarks/bench.py --format gemini-cli --write benchmarks/RESULTS.md   # Gemini CLI chats
    python benchmarks/bench.py --format pi --write benchmarks/RESULTS.md   # Pi sessions
    python benchmarks/bench.py --format opencode --write benchmarks/RESULTS.md   # an OpenCode database
    python benchmarks/bench.py --format harbor --sessions 1000 --write benchmarks/RESULTS.md   # a Harbor job
    python benchmarks/bench.py --format claude-code --write benchmarks/RESULTS.md   # Claude Code projects
    python benchmarks/bench.py --format qwen-code --write benchmarks/RESULTS.md     # Qwen Code projects
    python benchmarks/bench.py --format copilot-cli --write benchmarks/RESULTS.md   # a Copilot CLI home
    python benchmarks/bench.py --format cursor --write benchmarks/RESULTS.md        # Cursor CLI stores
    python benchmarks/bench.py --format agentsession-sqlite --write benchmarks/RESULTS.md   # one sessions.db
    python benchmarks/bench.py --format suga --write benchmarks/RESULTS.md   # one suga export

For the corpus (``corpus.py``, or ``einox_corpus.py``/``codex_corpus.py`` with ``--format``; seed 1) this
measures, in one run:

- the **floor**: orjson parse of every input record (a JSONL line, a ``*.json`` file, the
  JSON text of an agentsession or OpenCode database; the MB parsed are shown), orjson dump
  of every ATIF document written, and a pyarrow write of every table written (zstd, as the
  export writes them), in a fresh process;
- ``trajset export`` with 1 worker (default redaction, all outputs), with ``--no-redact``,
  and with 2 workers, each in a fresh process (wall time and peak resident memory: the
  process's own high-water mark, and for 2 workers the largest worker's);
- in rounds: each round runs every one of these once, the floor right after the 1-worker
  export whose output it reads, so load falls on all of them alike; ``--repeat`` rounds,
  medians reported;
- **efficiency** = floor / export time, the 2-worker speed-up and its ceiling (below): each
  the median of the rounds' own ratios (a round's two terms ran minutes apart, not hours),
  every round's shown too; **amplification** = (ATIF JSON bytes + the tables'
  uncompressed Arrow bytes) / input bytes, and the same on disk; input MB/s; the
  redaction overhead (default / ``--no-redact`` time);
- the **machine's ceiling** for that speed-up: two 1-worker exports started at once (each
  to its own folder) against one alone.  Their processes share the machine's memory
  bandwidth and caches, so two need not run twice as fast as one: the ceiling says how
  much of a 2-worker shortfall is the machine's;
- for each ``--sizes`` multiple of the corpus: 1-worker time, MB/s and peak memory, to show
  cost grows linearly with the input and memory does not, and a 2-worker run right after
  (one run each: the speed-up as the fixed cost of starting workers weighs less);
- what a user sees: each run's wall time from process start (interpreter and imports
  included), and ``trajset export`` itself, alternating with the others;
- the driver's own work (``driver/*`` stages) in the largest size's 2-worker run, against
  the CPU seconds of the whole export (the process and its workers), and Amdahl's
  projection from it for 32 and 128 workers.

``--write FILE`` replaces the block between ``<!-- bench:begin -->`` and
``<!-- bench:end -->`` in FILE (``bench:<format>:begin`` and ``bench:<format>:end`` for
another store kind; appended when missing) with the figures and the machine.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import orjson
import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).parent))

from claude_corpus import build_claude_corpus
from codex_corpus import build_codex_corpus
from copilot_corpus import build_copilot_corpus
from corpus import build_corpus
from cursor_corpus import build_cursor_corpus
from einox_corpus import build_einox_corpus
from gemini_corpus import build_gemini_corpus
from harbor_corpus import build_harbor_corpus
from opencode_corpus import build_opencode_corpus
from pi_corpus import build_pi_corpus
from qwen_corpus import build_qwen_corpus
from sqlite_corpus import build_sqlite_corpus
from suga_corpus import build_suga_corpus

BUILDERS = {
    "agentsession": build_corpus,
    "einox": build_einox_corpus,
    "codex": build_codex_corpus,
    "gemini-cli": build_gemini_corpus,
    "pi": build_pi_corpus,
    "opencode": build_opencode_corpus,
    "harbor": build_harbor_corpus,
    "claude-code": build_claude_corpus,
    "qwen-code": build_qwen_corpus,
    "copilot-cli": build_copilot_corpus,
    "cursor": build_cursor_corpus,
    "agentsession-sqlite": build_sqlite_corpus,
    "suga": build_suga_corpus,
}

CHILD = """
import json, resource, sys, time
from pathlib import Path
from trajset.pipeline.tuning import pyarrow_without_pandas
pyarrow_without_pandas()  # as the trajset command sets up its process (and it allows a fork)
from trajset.pipeline import ExportOptions, RunOptions, run_export
store, out, redact, workers = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3] == "1", int(sys.argv[4])
start = time.perf_counter()
run = run_export([store], out, ExportOptions(redact=redact), RunOptions(workers=workers, fork=True))
seconds = time.perf_counter() - start
# VmHWM starts at exec (ru_maxrss would count the parent's pages from before it); workers
# report through RUSAGE_CHILDREN, which counts them from their fork (an upper bound)
hwm = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM"))
peak = max(hwm, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
print(json.dumps({"seconds": seconds, "peak_mb": peak / 1024, "bytes": run.bytes_read,
                  "stages": {k: round(v.seconds, 3) for k, v in run.stats.stages.items()}}))
"""


def _cpu_of_children() -> float:
    """User + system seconds of the waited-for children (their own children included)."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def settle(out: Path) -> None:
    """Before a timed run, outside its time: the previous run's output removed, and every
    write and removal so far on its way to the disk (``os.sync``).  Otherwise the kernel
    does that work during the next run, and more of it after a larger run: one worker on
    64.5 MB took 25.4 s (11.7 s of system time) right after 5 GB of earlier outputs were
    removed, and 8.6-8.9 s (1.1-1.3 s) after a sync; the 4x corpus then ran 3.7x one's
    time, where without the sync it ran 5-6x and the 2-worker speed-up read 2.5x."""
    shutil.rmtree(out, ignore_errors=True)
    if hasattr(os, "sync"):  # not on Windows
        os.sync()


def store_input(store: Path) -> Path:
    """What the export is given: the store folder, or the database a corpus folder holds."""
    db = store / "sessions.db"
    return db if db.is_file() else store


def _child_export(store: Path, out: Path, redact: bool, workers: int) -> list[str]:
    """The command line of one export in a fresh process (``CHILD``)."""
    return [sys.executable, "-c", CHILD, str(store_input(store)), str(out), str(int(redact)),
            str(workers)]  # fmt: skip


def _last_json(text: str) -> dict[str, Any]:
    """The figures a child process printed as the last line of its output."""
    return dict(json.loads(text.strip().splitlines()[-1]))


def export(store: Path, out: Path, redact: bool, workers: int) -> dict[str, Any]:
    """One export in a fresh process: seconds inside ``run_export``, ``wall`` from process
    start (interpreter and imports included) to its end, ``cpu`` of the process and its
    workers, peak MB (children included), stage seconds (the driver's own work as
    ``driver/*``)."""
    settle(out)
    args = _child_export(store, out, redact, workers)
    cpu, start = _cpu_of_children(), time.perf_counter()
    text = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    wall, cpu = time.perf_counter() - start, _cpu_of_children() - cpu
    return _last_json(text) | {"wall": wall, "cpu": cpu}


def exports_at_once(store: Path, out: Path, copies: int) -> list[dict[str, Any]]:
    """``copies`` 1-worker exports of ``store`` started together in fresh processes, each
    to its own folder under ``out``: what ``export`` measures, for each."""
    settle(out)
    procs = [
        subprocess.Popen(
            _child_export(store, out / str(i), True, 1), stdout=subprocess.PIPE, text=True
        )
        for i in range(copies)
    ]
    texts = [p.communicate()[0] for p in procs]
    if any(p.returncode for p in procs):
        raise RuntimeError("an export started beside another failed")
    return [_last_json(t) for t in texts]


def command(store: Path, out: Path, workers: int) -> float:
    """Wall seconds of ``trajset export STORE --out OUT -q --workers N`` as a user runs it,
    from process start (the console script of this Python's environment)."""
    settle(out)
    script = Path(sys.executable).parent / "trajset"
    args = [str(script), "export", str(store_input(store)), "--out", str(out), "-q",
            "--workers", str(workers)]  # fmt: skip
    start = time.perf_counter()
    subprocess.run(args, check=True, capture_output=True)
    return time.perf_counter() - start


def driver_share(r: dict[str, Any]) -> dict[str, Any]:
    """The driver's own seconds (``driver/*``: discovery, the session index, results taken
    in, shard plans, the errors file, the manifest) against the CPU of the whole export, and
    Amdahl's projection of the speed-up over 1 worker at 32 and 128 workers."""
    own = {k.split("/", 1)[1]: v for k, v in r["stages"].items() if k.startswith("driver/")}
    serial = sum(own.values())
    share = serial / r["cpu"] if r["cpu"] else 0.0
    return {
        "driver_seconds": {k: round(v, 2) for k, v in own.items()},
        "driver_total_seconds": round(serial, 2),
        "cpu_seconds": round(r["cpu"], 1),
        "share": round(share, 4),
        "amdahl": {str(n): round(1 / (share + (1 - share) / n), 1) for n in (32, 128)},
    }


FLOOR = """
import sys
from pathlib import Path
sys.path.insert(0, sys.argv[3])
from bench import floor_here
print(floor_here(Path(sys.argv[1]), Path(sys.argv[2])))
"""


def floor(store: Path, out: Path) -> dict[str, float]:
    """The floor, measured in a fresh process (the documents and tables it loads would
    otherwise sit in this process and in the memory of every export started after it)."""
    args = [sys.executable, "-c", FLOOR, str(store), str(out), str(Path(__file__).parent)]
    text = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    return _last_json(text)


#: (table, column) of the JSON text a store kind's database holds: an agentsession
#: database's header and lines, an OpenCode database's messages and parts
DB_RECORDS = (
    ("sessions", "header"),
    ("entries", "line"),
    ("message", "data"),
    ("part", "data"),
    (
        "blobs",
        "data",
    ),  # a Cursor CLI store: its JSON message blobs (its protobuf roots are no JSON)
)


def records(store: Path) -> Iterator[bytes | str]:
    """Every JSON record of a store: a JSONL line, a ``*.json`` file, a database's JSON text."""
    for path in sorted(store.rglob("*.jsonl")):
        with path.open("rb") as fh:
            yield from (line for line in fh if line.strip())
    for path in sorted(store.rglob("*.json")):
        yield path.read_bytes()
    for path in sorted(store.rglob("*.db")):
        with closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)) as db:
            tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master")}
            for table, column in DB_RECORDS:
                if table in tables:
                    rows = (text for (text,) in db.execute(f"SELECT {column} FROM {table}"))
                    yield from (t for t in rows if not isinstance(t, bytes) or t.startswith(b"{"))


def floor_here(store: Path, out: Path) -> str:
    """Seconds to parse every input record, dump every document and write every table, and
    the bytes parsed (JSON)."""
    start = time.perf_counter()
    parsed = 0
    for record in records(store):
        orjson.loads(record)
        parsed += len(record)
    parse = time.perf_counter() - start
    docs = [orjson.loads(p.read_bytes()) for p in sorted((out / "atif").glob("*.json"))]
    start = time.perf_counter()
    for doc in docs:
        orjson.dumps(doc, option=orjson.OPT_INDENT_2)
    dump = time.perf_counter() - start
    tables = [pq.read_table(p) for p in sorted((out / "data").rglob("*.parquet"))]
    start = time.perf_counter()
    for t in tables:
        pq.write_table(t, pa.BufferOutputStream(), compression="zstd", write_page_index=True)
    write = time.perf_counter() - start
    total = parse + dump + write
    return json.dumps(
        {"parse": parse, "dump": dump, "write": write, "total": total, "parsed_bytes": parsed}
    )


def output_bytes(out: Path) -> dict[str, int]:
    atif = sum(p.stat().st_size for p in (out / "atif").rglob("*") if p.is_file())
    parquet = sum(p.stat().st_size for p in (out / "data").rglob("*.parquet"))
    arrow = sum(pq.read_table(p).nbytes for p in (out / "data").rglob("*.parquet"))
    return {"atif": atif, "parquet": parquet, "arrow": arrow}


def _relative(arg: str) -> str:
    """An argument as written from the repository root (no path of this machine)."""
    root = Path(__file__).resolve().parents[1]
    path = Path(arg)
    if path.is_absolute() and path.resolve().is_relative_to(root):
        return path.resolve().relative_to(root).as_posix()
    return arg


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (
        f"{os.cpu_count()} CPUs ({cpu}), {platform.system()} {platform.machine()}, "
        f"Python {platform.python_version()}, pyarrow {pa.__version__}"
    )


def _round_ratios(
    runs: dict[str, list[dict[str, Any]]], floors: list[dict[str, float]]
) -> dict[str, Any]:
    """Efficiency, 2-worker speed-up and its ceiling, each taken within a round (its runs
    minutes apart) and the median of those reported: a ratio of two medians may set runs of
    different hours against each other on a shared machine, where the floor alone took
    0.9-2.2 s on the same corpus in different runs."""
    rounds = {
        "efficiency": [
            f["total"] / d["seconds"] for f, d in zip(floors, runs["default"], strict=True)
        ],
        "speedup_2_workers": [
            d["seconds"] / w["seconds"]
            for d, w in zip(runs["default"], runs["workers_2"], strict=True)
        ],
        "ceiling_2_workers": [
            2 * d["seconds"] / t["seconds"]
            for d, t in zip(runs["default"], runs["two_at_once"], strict=True)
        ],
    }
    digits = {"efficiency": 3, "speedup_2_workers": 2, "ceiling_2_workers": 2}
    out: dict[str, Any] = {k: round(statistics.median(v), digits[k]) for k, v in rounds.items()}
    out["rounds"] = {k: [round(x, digits[k]) for x in v] for k, v in rounds.items()}
    return out


#: the runs made alone on the machine (wall time and peak memory are reported for them)
LONE = ("default", "no_redact", "workers_2")


def run(args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        store = root / "corpus"
        build = BUILDERS[args.format]
        size = build(
            store, args.sessions, seed=1, tool_output_bytes=int(args.tool_output_kb * 1024)
        )
        runs: dict[str, list[dict[str, Any]]] = {
            "default": [], "no_redact": [], "workers_2": [], "two_at_once": [],
        }  # fmt: skip
        commands: list[float] = []
        floors: list[dict[str, float]] = []
        for _ in range(args.repeat):  # alternating, so load falls on all of them alike
            runs["no_redact"].append(export(store, root / "o", False, 1))
            runs["workers_2"].append(export(store, root / "o", True, 2))
            commands.append(command(store, root / "o", 1))
            runs["default"].append(export(store, root / "out", True, 1))
            floors.append(floor(store, root / "out"))  # of the documents and tables just written
            pair = exports_at_once(store, root / "o", 2)
            runs["two_at_once"].append(max(pair, key=lambda r: r["seconds"]))
        fl = {k: statistics.median(f[k] for f in floors) for k in floors[0]}
        parsed = fl.pop("parsed_bytes")  # the same in every round
        ratios = _round_ratios(runs, floors)
        out_bytes = output_bytes(root / "out")
        med = {k: statistics.median(r["seconds"] for r in v) for k, v in runs.items()}
        wall = {k: statistics.median(r["wall"] for r in v) for k, v in runs.items() if k in LONE}
        peak = {k: max(r["peak_mb"] for r in v) for k, v in runs.items() if k in LONE}
        sizes = []
        for m in args.sizes:
            s = root / f"corpus-x{m}"
            n = build(
                s, args.sessions * m, seed=1, tool_output_bytes=int(args.tool_output_kb * 1024)
            )
            r = export(s, root / "o", True, 1)
            r2 = export(s, root / "o", True, 2)  # right after, under the same load
            largest = driver_share(r2) | {"input_mb": round(n / 1e6, 1)}
            sizes.append(
                {
                    "input_mb": round(n / 1e6, 1),
                    "seconds": round(r["seconds"], 2),
                    "mb_per_s": round(n / 1e6 / r["seconds"], 2),
                    "peak_mb": round(r["peak_mb"]),
                    "seconds_2_workers": round(r2["seconds"], 2),
                    "speedup_2_workers": round(r["seconds"] / r2["seconds"], 2),
                }
            )
            shutil.rmtree(s)
    return {
        "machine": machine(),
        "command": " ".join(["python benchmarks/bench.py", *map(_relative, sys.argv[1:])]),
        "corpus": {
            "format": args.format,
            "sessions": args.sessions,
            "tool_output_kb": args.tool_output_kb,
            "input_mb": round(size / 1e6, 1),
        },
        "seconds": {k: round(v, 2) for k, v in med.items()},
        "wall_seconds": {k: round(v, 2) for k, v in wall.items()},
        "command_seconds": round(statistics.median(commands), 2),
        "command_mb_per_s": round(size / 1e6 / statistics.median(commands), 2),
        "driver_share_largest_2_workers": largest,
        "peak_mb": {k: round(v) for k, v in peak.items()},
        "stage_seconds_default": runs["default"][-1]["stages"],
        "floor_seconds": {k: round(v, 2) for k, v in fl.items()},
        "floor_parsed_mb": round(parsed / 1e6, 1),
        "efficiency": ratios["efficiency"],
        "input_mb_per_s": round(size / 1e6 / med["default"], 2),
        "input_mb_per_s_no_redact": round(size / 1e6 / med["no_redact"], 2),
        "redaction_overhead": round(med["default"] / med["no_redact"], 2),
        "speedup_2_workers": ratios["speedup_2_workers"],
        "ceiling_2_workers": ratios["ceiling_2_workers"],
        "round_ratios": ratios["rounds"],
        "amplification": round((out_bytes["atif"] + out_bytes["arrow"]) / size, 2),
        "amplification_on_disk": round((out_bytes["atif"] + out_bytes["parquet"]) / size, 2),
        "sizes": sizes,
    }


def markdown(r: dict[str, Any]) -> str:
    c, s, p, w = r["corpus"], r["seconds"], r["peak_mb"], r["wall_seconds"]
    d = r["driver_share_largest_2_workers"]
    lines = [
        f"Machine: {r['machine']}.",
        f"Corpus: {c['sessions']} generated sessions, tool outputs of about "
        f"{c['tool_output_kb']} KB, {c['input_mb']} MB of {c['format']} session files. "
        f"Command: `{r['command']}`.",
        "",
        "| run | wall time (median) | peak memory |",
        "|---|---:|---:|",
        f"| floor: orjson parse + orjson dump + pyarrow write | {r['floor_seconds']['total']} s | |",
        f"| export, 1 worker, default redaction, all outputs | {s['default']} s | {p['default']} MB |",
        f"| export, 1 worker, `--no-redact` | {s['no_redact']} s | {p['no_redact']} MB |",
        f"| export, 2 workers, default redaction | {s['workers_2']} s | {p['workers_2']} MB |",
        "",
        "The times above are inside `run_export`. From process start to its end (interpreter "
        f"and imports included): 1 worker {w['default']} s, `--no-redact` {w['no_redact']} s, "
        f"2 workers {w['workers_2']} s; and the command a user runs, "
        f"`trajset export STORE --out DIR -q --workers 1`: **{r['command_seconds']} s, "
        f"{r['command_mb_per_s']} MB/s**.",
        "",
        "| figure | value |",
        "|---|---:|",
        f"| efficiency (floor / export) | {_with_rounds(r, 'efficiency')} |",
        f"| input MB/s, 1 worker (no redaction) | {r['input_mb_per_s']} ({r['input_mb_per_s_no_redact']}) |",
        f"| redaction overhead (default / `--no-redact`) | {r['redaction_overhead']}x |",
        f"| 2-worker speed-up | {_with_rounds(r, 'speedup_2_workers', 'x')} |",
        f"| the machine's ceiling for it: two 1-worker exports at once | "
        f"{_with_rounds(r, 'ceiling_2_workers', 'x')} |",
        f"| amplification: (ATIF + uncompressed Arrow) / input | {r['amplification']}x |",
        f"| amplification on disk: (ATIF + Parquet) / input | {r['amplification_on_disk']}x |",
        "",
        f"Stage seconds (default run): {r['stage_seconds_default']}; floor parts: "
        f"{r['floor_seconds']}, of {r['floor_parsed_mb']} MB of JSON records parsed.",
        "",
        "The machine's ceiling: two 1-worker exports of the corpus started together (each to "
        f"its own folder) took {s['two_at_once']} s (the slower of the two; median), against "
        f"{s['default']} s for one alone (medians): this machine runs two processes of this "
        f"work {r['ceiling_2_workers']}x as fast as one (the median of the rounds' own "
        "ratios), with nothing shared between them.  The 2-worker export's "
        f"{r['speedup_2_workers']}x is to be read against that, not 2x.",
        "",
        "| input | 1 worker, default | MB/s | peak memory | 2 workers | 2-worker speed-up |",
        "|---:|---:|---:|---:|---:|---:|",
        *(
            f"| {x['input_mb']} MB | {x['seconds']} s | {x['mb_per_s']} | {x['peak_mb']} MB "
            f"| {x['seconds_2_workers']} s | {x['speedup_2_workers']}x |"
            for x in r["sizes"]
        ),
        "",
        f"The driver's own work in the {d['input_mb']} MB export on 2 workers: "
        f"{d['driver_total_seconds']} s ({d['driver_seconds']}) of {d['cpu_seconds']} CPU "
        f"seconds in all, **{d['share'] * 100:.2f}%**; by Amdahl's law 32 workers would "
        f"run at most {d['amdahl']['32']}x and 128 at most {d['amdahl']['128']}x one worker.",
    ]
    return "\n".join(lines)


def _with_rounds(r: dict[str, Any], key: str, unit: str = "") -> str:
    """A ratio's median and each round's value (its spread is the machine's noise)."""
    each = ", ".join(f"{x}{unit}" for x in r["round_ratios"][key])
    return f"{r[key]}{unit} (rounds: {each})"


def write_block(path: Path, text: str, kind: str = "agentsession") -> None:
    tag = "bench" if kind == "agentsession" else f"bench:{kind}"
    begin, end = f"<!-- {tag}:begin -->", f"<!-- {tag}:end -->"
    old = path.read_text() if path.exists() else ""
    block = f"{begin}\n{text}\n{end}"
    if begin in old and end in old:
        new = old[: old.index(begin)] + block + old[old.index(end) + len(end) :]
    else:
        new = old.rstrip("\n") + "\n\n" + block + "\n"
    path.write_text(new)


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--sessions", type=int, default=200)
    ap.add_argument("--tool-output-kb", type=float, default=36)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument(
        "--sizes", default="1,2,4", help="corpus multiples for the scaling rows (1,2,4)"
    )
    ap.add_argument("--format", choices=sorted(BUILDERS), default="agentsession")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    ap.add_argument("--write", type=Path, help="put the figures into this Markdown file")
    args = ap.parse_args()
    args.sizes = [int(x) for x in args.sizes.split(",") if x]
    result = run(args)
    print(json.dumps(result, indent=2) if args.json else markdown(result))
    if args.write:
        write_block(args.write, markdown(result), args.format)


if __name__ == "__main__":
    main()
