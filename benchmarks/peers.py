"""trajset beside the tools a user would pick instead, on the same real sessions, in one run.

    python benchmarks/peers.py --venvs ~/.cache/trajset-peers --size-mb 50 --repeat 3 \\
        [--kinds claude-code,codex]      # prints the table RESULTS.md keeps

Each peer is installed at a pinned version into a virtual environment of its own under
``--venvs`` (made once).  For each store kind, a corpus of ``--size-mb`` is built from the
real session files of ``tests/data/upstream/`` (``real_corpus``: every file copied again
and again, each copy's UUIDs rewritten to fresh ones, so no two copies share a session,
entry or call id) at the place the peers look for it, below a scratch ``HOME`` (a Claude
Code copy in the project folder of ``HOME/work/copyN``, a git repository, as Claude Code
names it).  trajset is installed the same way, from this checkout, into a virtual
environment of its own (a user's ``pip install``: bytecode compiled; an editable install
under ``PYTHONDONTWRITEBYTECODE`` compiles every module at each start), unless
``--trajset-bin`` names one.  trajset (``trajset export``, 1 worker, default options: every
table, ATIF, redaction, card) and each peer reading that kind then run alternately,
``--repeat`` times, each as a user runs it: a fresh process with ``HOME`` set to the
scratch folder, stdin closed, never pushing (the peers are asked not to, LiteLLM's price
list is read from its package, and a closed network would stop them anyway).  Reported per
pair: the median wall time from process start to exit, the CPU time (user + system, the
process and its children), the peak resident memory, the ratio of speeds, and what each
tool wrote (files, bytes).

Harbor converts one trial's session after the trial; ``harbor_convert.py`` calls its own
converter once per session of the store.  opentraces imports the Claude Code sessions of
the repository it is initialised in, so it runs once per project folder.
"""

from __future__ import annotations

import argparse
import hashlib
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
    "gemini-cli": ("gemini-cli/real", ".gemini/tmp"),
    "pi": ("pi/real", ".pi/agent/sessions"),
}
#: a Gemini CLI project's hash (its folder's name and ``projectHash``), made new per copy
PROJECT_HASH = re.compile(rb"[0-9a-f]{64}")


@dataclass(frozen=True)
class Call:
    """One process of a peer's run: its arguments (the executable first, from the peer's
    environment) and the folder it runs in (``HOME`` when None)."""

    argv: list[str]
    cwd: Path | None = None


Commands = Callable[[Path, Path], list[Call]]  # (home, out) -> the processes, in order


@dataclass(frozen=True)
class Peer:
    """A tool, its pinned version, the Python it needs, and its command per store kind."""

    name: str
    spec: str
    python: str
    commands: dict[str, Commands]
    what: str  # what it writes and leaves out (from its own documentation and a look)
    #: what a run needs beforehand, untimed (given home and out): a fresh state
    prepare: Callable[[Path, Path], None] | None = None


def _claw(tool: str, source: str) -> Commands:
    return lambda home, out: [
        Call([tool, "export", "--no-push", "--source", source, "--all-projects", "-o",
              str(out / "export.jsonl")])
    ]  # fmt: skip


def _teich(source: str) -> Commands:
    return lambda home, out: [
        Call(["teich", "extract", source, "--out", str(out / "traces")]),
        Call(["teich", "convert", str(out / "traces"), "--out", str(out / "training.jsonl")]),
    ]


def _harbor(kind: str) -> Commands:
    script = str(Path(__file__).resolve().parent / "harbor_convert.py")
    return lambda home, out: [
        Call(["python", script, kind, str(home / SOURCES[kind][1]), str(out)])
    ]


def _repositories(home: Path) -> list[Path]:
    return sorted(p for p in (home / "work").iterdir() if p.is_dir())


def _opentraces(home: Path, out: Path) -> list[Call]:
    init = ["opentraces", "init", "--agent", "claude-code", "--import-existing"]
    return [Call(init, cwd=repo) for repo in _repositories(home)]


def _opentraces_fresh(home: Path, out: Path) -> None:
    """Every project's repository uninitialised again, opentraces' store and hooks gone; its
    store is then ``out``."""
    for repo in _repositories(home):
        shutil.rmtree(repo)
        repo.mkdir()
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
    for made in (home / ".opentraces", home / ".claude" / "settings.json"):
        if made.is_symlink() or made.is_file():
            made.unlink()
        elif made.exists():
            shutil.rmtree(made)
    (home / ".opentraces").symlink_to(out, target_is_directory=True)


PEERS = [
    Peer("codeclaw", "codeclaw==0.4.6", "python3",
         {"claude-code": _claw("codeclaw", "claude"), "codex": _claw("codeclaw", "codex")},
         "one JSONL row per session; tool outputs left out; no ATIF, no pairs"),
    Peer("dataclaw", "dataclaw==0.4.2", "python3",
         {"claude-code": _claw("dataclaw", "claude"), "codex": _claw("dataclaw", "codex"),
          "gemini-cli": _claw("dataclaw", "gemini")},
         "one JSONL row per session with messages and tool calls; no ATIF, no pairs"),
    Peer("teich", "teich==0.3.6", "python3",
         {"claude-code": _teich("claude"), "codex": _teich("codex"), "pi": _teich("pi")},
         "raw traces copied, then one training row per session; no ATIF, no pairs"),
    Peer("harbor", "harbor==0.25.0", "python3.12",
         {kind: _harbor(kind) for kind in ("claude-code", "codex", "gemini-cli", "pi")},
         "one ATIF trajectory per session (its converter); no redaction, no tables, no pairs"),
    Peer("opentraces", "opentraces==0.4.13", "python3", {"claude-code": _opentraces},
         "its trace store (one record per session, secrets scanned); no ATIF, no pairs",
         prepare=_opentraces_fresh),
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


def install_trajset(venvs: Path) -> Path:
    """This checkout installed as a user installs it (not editable), into its own venv,
    its dependencies once, the project itself again at every run; its bin folder."""
    venv = venvs / "trajset"
    bin_ = venv / "bin"
    if not (bin_ / ".installed").exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(bin_ / "pip"), "install", "-q", str(ROOT)], check=True)
        (bin_ / ".installed").write_text("trajset")
    subprocess.run([str(bin_ / "pip"), "install", "-q", "--no-deps", "--force-reinstall",
                    str(ROOT)], check=True)  # fmt: skip
    return bin_


def _renamed(data: bytes, copy: int, hashes: bool = False) -> bytes:
    """``data`` with every UUID (and with ``hashes``, every Gemini CLI project hash)
    replaced by one derived from it and ``copy``."""
    data = UUID.sub(
        lambda m: str(uuid.uuid5(uuid.NAMESPACE_OID, f"{copy}:{m.group().decode()}")).encode(),
        data,
    )
    if not hashes:
        return data
    return PROJECT_HASH.sub(
        lambda m: hashlib.sha256(b"%d:%s" % (copy, m.group())).hexdigest().encode(), data
    )


def real_corpus(kind: str, home: Path, size: int) -> Path:
    """A store of ``kind`` of at least ``size`` bytes below ``home``, from the real files."""
    source, below = SOURCES[kind]
    store = home / below
    files = sorted(
        p
        for p in (UPSTREAM / source).rglob("*.json*")
        if p.suffix in (".json", ".jsonl")
        and p.is_file()
        and not any(x.startswith("synthetic") for x in p.parts)
    )  # the real sessions alone
    written, copy = 0, 0
    while written < size:
        copy += 1
        for f in files:
            rel = f.relative_to(UPSTREAM / source)
            if kind == "claude-code":  # a project per copy, named as Claude Code names it
                repo = home / "work" / f"copy{copy}"
                repo.mkdir(parents=True, exist_ok=True)
                project = Path(re.sub(r"[^A-Za-z0-9-]", "-", str(repo)))
                rel = project / Path(*rel.parts[1:]) if len(rel.parts) > 1 else project / rel.name
            elif kind == "gemini-cli":  # tmp/<project hash>/chats/<session>
                rel = Path(*rel.parts[-3:])
            elif kind == "pi":  # a project folder per copy, sessions named by their id
                rel = Path(f"--work-copy{copy}--") / f"2026-01-01T00-00-00-000Z_{rel.name}"
            else:  # rollouts below sessions/YYYY/MM/DD/
                parts = [p for p in rel.parts if p != "sessions"]
                rel = Path(*parts[-4:]) if len(parts) >= 4 else Path("2026/01/01") / rel.name
            gemini = kind == "gemini-cli"
            data = _renamed(f.read_bytes(), copy, gemini)
            target = store / Path(_renamed(str(rel).encode(), copy, gemini).decode())
            if kind == "pi":  # Pi names a session file after its time and its id
                first = UUID.search(data)
                target = target.with_name(target.name.split("_")[0] + "_" + (
                    first.group().decode() if first else f"copy{copy}") + ".jsonl")  # fmt: skip
            if kind == "codex" and not target.name.startswith("rollout-"):
                # a sample named otherwise: named as Codex names it, by its session id, so
                # the copies do not overwrite one another
                first = UUID.search(data)
                sid = first.group().decode() if first else f"{copy:08d}-0000-0000-0000-{0:012d}"
                target = target.with_name(f"rollout-2026-01-01T00-00-00-{sid}.jsonl")
            target.parent.mkdir(parents=True, exist_ok=True)
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


def timed(commands: list[Call], bin_: Path, home: Path) -> Run:
    """The commands one after another, each a fresh process with HOME the scratch folder."""
    env = {**os.environ, "HOME": str(home), "HF_HUB_OFFLINE": "1", "PATH":
           f"{bin_}{os.pathsep}{os.environ['PATH']}", "NO_COLOR": "1",
           "LITELLM_LOCAL_MODEL_COST_MAP": "True"}  # fmt: skip
    if hasattr(os, "sync"):
        os.sync()
    wall = cpu = rss = 0.0
    for call in commands:
        argv = call.argv
        start = time.perf_counter()
        proc = subprocess.Popen(
            [str(bin_ / argv[0]), *argv[1:]], env=env, cwd=call.cwd or home,
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
    ours = [Call(["trajset", "export", str(store), "--out", str(work / kind / "trajset"),
                  "--quiet", "--mode", "overwrite", "--workers", "1"])]  # fmt: skip
    results: dict[str, Timings] = {"trajset": Timings()}
    mine = [p for p in peers if kind in p.commands]
    bins = {p.name: install(p, venvs) for p in mine}
    for _ in range(repeat):
        results["trajset"].runs.append(timed(ours, trajset_bin, home))
        for p in mine:
            out = work / kind / p.name
            shutil.rmtree(out, ignore_errors=True)
            out.mkdir(parents=True)
            if p.prepare is not None:
                p.prepare(home, out)
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
    ap.add_argument("--trajset-bin", type=Path, help="a trajset install's bin folder "
                    "(default: this checkout installed into VENVS/trajset)")  # fmt: skip
    ap.add_argument("--size-mb", type=float, default=50)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--kinds", default=",".join(SOURCES))
    a = ap.parse_args()
    header = ["| store | tool | wall (median) | CPU | peak RSS | trajset's speed × | "
              "written | what it writes |", "|---|---|---:|---:|---:|---:|---|---|"]  # fmt: skip
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    size = int(a.size_mb * 1e6)
    trajset_bin = a.trajset_bin or install_trajset(a.venvs)
    rows = []
    for kind in a.kinds.split(","):
        rows += compare(kind, PEERS, a.venvs, trajset_bin, a.work, size, a.repeat)
    text = "\n".join([*header, *rows, "", f"load average at the start: {load:.2f}"])
    print(text)


if __name__ == "__main__":
    main()
