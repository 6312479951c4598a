"""trajset beside the tools a user would pick instead, on the same real sessions, in one run.

    python benchmarks/peers.py --venvs ~/.cache/trajset-peers --size-mb 50 --repeat 3 \\
        [--kinds claude-code,codex]      # prints the table RESULTS.md keeps

Each peer is installed at a pinned version into a virtual environment of its own under
``--venvs`` (made once).  For each store kind, a corpus of ``--size-mb`` is built from the
real session files of ``tests/data/upstream/`` (``real_corpus``: every file copied again
and again, each copy's UUIDs rewritten to fresh ones, so no two copies share a session,
entry or call id) at the place the peers look for it, below a scratch ``HOME``.  trajset
(``trajset export``, 1 worker, default options: every table, ATIF, redaction, card) and
each peer reading that kind then run alternately, ``--repeat`` times, each as a user runs
it: a fresh process with ``HOME`` set to the scratch folder, stdin closed, never pushing
(the peers are asked not to, and a closed network would stop them anyway).  Reported per
pair: the median wall time from process start to exit, the CPU time (user + system, the
process and its children), the peak resident memory, the ratio of speeds, and what each
tool wrote (files, bytes, rows).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
UPSTREAM = ROOT / "tests" / "data" / "upstream"
UUID = re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")

#: store kind -> (the real files it is built from, where below HOME its store lies)
SOURCES = {
    "claude-code": ("claude-code", ".claude/projects"),
    "codex": ("codex/real", ".codex/sessions"),
}


@dataclass(frozen=True)
class Peer:
    """A tool, its pinned version, the Python it needs, and its command per store kind."""

    name: str
    spec: str
    python: str
    #: store kind -> the command's arguments after the executable, given (home, out)
    commands: dict[str, Callable[[Path, Path], list[list[str]]]]
    what: str  # what it writes and leaves out (from its own documentation and a look)


def _claw(tool: str, source: str) -> Callable[[Path, Path], list[list[str]]]:
    return lambda home, out: [
        [tool, "export", "--no-push", "--source", source, "--all-projects", "-o",
         str(out / "export.jsonl")]
    ]  # fmt: skip


def _teich(source: str) -> Callable[[Path, Path], list[list[str]]]:
    return lambda home, out: [
        ["teich", "extract", source, "--out", str(out / "traces")],
        ["teich", "convert", str(out / "traces"), "--out", str(out / "training.jsonl")],
    ]


PEERS = [
    Peer("codeclaw", "codeclaw==0.4.6", "python3",
         {"claude-code": _claw("codeclaw", "claude"), "codex": _claw("codeclaw", "codex")},
         "one JSONL row per session; tool outputs left out; no ATIF, no pairs"),
    Peer("dataclaw", "dataclaw==0.4.2", "python3",
         {"claude-code": _claw("dataclaw", "claude"), "codex": _claw("dataclaw", "codex")},
         "one JSONL row per session with messages and tool calls; no ATIF, no pairs"),
    Peer("teich", "teich==0.3.6", "python3",
         {"claude-code": _teich("claude"), "codex": _teich("codex")},
         "raw traces copied, then one training row per session; no ATIF, no pairs"),
]  # fmt: skip


def install(peer: Peer, venvs: Path) -> Path:
    """The peer's venv (made and installed once); its bin folder."""
    venv = venvs / peer.name
    bin_ = venv / "bin"
    if not (bin_ / ".installed").exists():
        subprocess.run([peer.python, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(bin_ / "pip"), "install", "-q", peer.spec], check=True)
        (bin_ / ".installed").write_text(peer.spec)
    return bin_


def _renamed(data: bytes, copy: int) -> bytes:
    """``data`` with every UUID replaced by one derived from it and ``copy``."""
    return UUID.sub(
        lambda m: str(uuid.uuid5(uuid.NAMESPACE_OID, f"{copy}:{m.group().decode()}")).encode(),
        data,
    )


def real_corpus(kind: str, home: Path, size: int) -> Path:
    """A store of ``kind`` of at least ``size`` bytes below ``home``, from the real files."""
    source, below = SOURCES[kind]
    store = home / below
    files = sorted(
        p
        for p in (UPSTREAM / source).rglob("*.jsonl")
        if p.is_file() and not any(x.startswith("synthetic") for x in p.parts)
    )  # the real sessions alone
    written, copy = 0, 0
    while written < size:
        copy += 1
        for f in files:
            rel = f.relative_to(UPSTREAM / source)
            if kind == "claude-code":  # a project folder per copy, the agents' own files kept
                rel = Path(f"-work-copy{copy}") / Path(*rel.parts[1:]) if len(rel.parts) > 1 \
                    else Path(f"-work-copy{copy}") / rel.name  # fmt: skip
            else:  # rollouts below sessions/YYYY/MM/DD/
                parts = [p for p in rel.parts if p != "sessions"]
                rel = Path(*parts[-4:]) if len(parts) >= 4 else Path("2026/01/01") / rel.name
            target = store / Path(_renamed(str(rel).encode(), copy).decode())
            target.parent.mkdir(parents=True, exist_ok=True)
            data = _renamed(f.read_bytes(), copy)
            target.write_bytes(data)
            written += len(data)
    return store


@dataclass
class Run:
    wall: float
    cpu: float
    rss_mb: float


@dataclass
class Timings:
    runs: list[Run] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    files: int = 0
    bytes: int = 0

    def median(self, what: str) -> float:
        return statistics.median(getattr(r, what) for r in self.runs)


def timed(commands: list[list[str]], bin_: Path, home: Path) -> Run:
    """The commands one after another, each a fresh process with HOME the scratch folder."""
    env = {**os.environ, "HOME": str(home), "HF_HUB_OFFLINE": "1", "PATH":
           f"{bin_}{os.pathsep}{os.environ['PATH']}", "NO_COLOR": "1"}  # fmt: skip
    if hasattr(os, "sync"):
        os.sync()
    wall = cpu = rss = 0.0
    for argv in commands:
        start = time.perf_counter()
        proc = subprocess.Popen(
            [str(bin_ / argv[0]), *argv[1:]], env=env, cwd=home,
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )  # fmt: skip
        _, status, usage = os.wait4(proc.pid, 0)
        wall += time.perf_counter() - start
        err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
        if os.waitstatus_to_exitcode(status) not in (0,) and "Aborted" not in err:
            raise RuntimeError(f"{argv[0]} failed:\n{err.strip()[-3000:]}")
        cpu += usage.ru_utime + usage.ru_stime
        rss = max(rss, usage.ru_maxrss / 1024)
    return Run(wall, cpu, rss)


def _written(out: Path) -> tuple[int, int]:
    files = [p for p in out.rglob("*") if p.is_file() and ".trajset" not in p.parts]
    return len(files), sum(p.stat().st_size for p in files)


def compare(kind: str, peers: list[Peer], venvs: Path, trajset_bin: Path, work: Path,
            size: int, repeat: int) -> list[str]:  # fmt: skip
    """One store kind: trajset and each peer alternately; the table's rows."""
    home = work / kind / "home"
    shutil.rmtree(work / kind, ignore_errors=True)
    store = real_corpus(kind, home, size)
    mb = sum(p.stat().st_size for p in store.rglob("*") if p.is_file()) / 1e6
    ours = [["trajset", "export", str(store), "--out", str(work / kind / "trajset"),
             "--quiet", "--mode", "overwrite", "--workers", "1"]]  # fmt: skip
    results: dict[str, Timings] = {"trajset": Timings()}
    mine = [p for p in peers if kind in p.commands]
    bins = {p.name: install(p, venvs) for p in mine}
    for _ in range(repeat):
        results["trajset"].runs.append(timed(ours, trajset_bin, home))
        for p in mine:
            out = work / kind / p.name
            shutil.rmtree(out, ignore_errors=True)
            out.mkdir(parents=True)
            got = results.setdefault(p.name, Timings())
            try:
                got.runs.append(timed(p.commands[kind](home, out), bins[p.name], home))
            except RuntimeError as exc:  # a peer that crashes is a row that says so
                got.failures.append(str(exc).splitlines()[-1][:120])
            got.files, got.bytes = _written(out)
    results["trajset"].files, results["trajset"].bytes = _written(work / kind / "trajset")
    t = results["trajset"].median("wall")
    rows = []
    for name, r in results.items():
        what = next((p.what for p in mine if p.name == name), "ATIF, every table, card")
        if r.failures:
            what += f"; failed {len(r.failures)} of {repeat} runs ({r.failures[0]})"
        if not r.runs:
            rows.append(f"| {kind} ({mb:.0f} MB) | {name} | failed | | | | | {what} |")
            continue
        rows.append(
            f"| {kind} ({mb:.0f} MB) | {name} | {r.median('wall'):.2f} s | "
            f"{r.median('cpu'):.2f} s | {r.median('rss_mb'):.0f} MB | "
            f"{r.median('wall') / t:.2f}× | {r.files} files, {r.bytes / 1e6:.1f} MB | {what} |"
        )
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--venvs", type=Path, default=Path.home() / ".cache" / "trajset-peers")
    ap.add_argument("--work", type=Path, default=Path("/tmp/trajset-peers-work"))
    ap.add_argument("--trajset-bin", type=Path, default=Path(sys.executable).parent)
    ap.add_argument("--size-mb", type=float, default=50)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--kinds", default=",".join(SOURCES))
    a = ap.parse_args()
    header = ["| store | tool | wall (median) | CPU | peak RSS | trajset's speed × | "
              "written | what it writes |", "|---|---|---:|---:|---:|---:|---|---|"]  # fmt: skip
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    size = int(a.size_mb * 1e6)
    rows = []
    for kind in a.kinds.split(","):
        rows += compare(kind, PEERS, a.venvs, a.trajset_bin, a.work, size, a.repeat)
    text = "\n".join([*header, *rows, "", f"load average at the start: {load:.2f}"])
    print(text)


if __name__ == "__main__":
    main()
