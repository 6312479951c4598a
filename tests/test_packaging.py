"""A wheel built from the repository installs in a fresh venv and its console script works.

Offline: the wheel is installed with ``--no-deps --no-index`` and its
dependencies are taken from this test environment through PYTHONPATH (a
PYTHONPATH entry processes no ``.pth`` files, so the editable install of the
checkout cannot shadow the wheel; the test checks where the import came from).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

from tests.conftest import benchmark_module
from trajset.pipeline.stores import READERS

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow  # wheels, virtual environments, subprocesses
#: what a wheel is built from (a copy of these, so no build/ folder of the checkout is reused)
SOURCES = ("pyproject.toml", "setup.py", "README.md", "pipeline", "redactors", "schemas")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A wheel built from a clean copy of the repository's package sources."""
    src, dist = tmp_path_factory.mktemp("src"), tmp_path_factory.mktemp("dist")
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(ROOT / name, src / name)
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
         "--no-index", "-q", "-w", str(dist), str(src)],
        check=True, capture_output=True,
    )  # fmt: skip
    [built] = dist.glob("trajset-*.whl")
    return built


def test_wheel_installs_in_a_fresh_venv_and_runs(tmp_path: Path, wheel: Path) -> None:
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    bin_dir = env_dir / ("Scripts" if os.name == "nt" else "bin")
    subprocess.run(
        [
            str(bin_dir / "python"),
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--no-index",
            str(wheel),
        ],
        check=True,
        capture_output=True,
    )
    env = {
        **os.environ,
        "PYTHONPATH": sysconfig.get_paths()["purelib"]
        + os.pathsep
        + sysconfig.get_paths()["platlib"],
    }
    env.pop("PYTHONHOME", None)
    where = subprocess.run(
        [str(bin_dir / "python"), "-c", "import trajset.pipeline as p; print(p.__file__)"],
        check=True,
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    ).stdout
    assert str(env_dir) in where
    help_ = subprocess.run(
        [str(bin_dir / "trajset"), "--help"], capture_output=True, text=True, env=env, cwd=tmp_path
    )
    assert help_.returncode == 0 and "export" in help_.stdout
    run = subprocess.run(
        [str(bin_dir / "trajset"), "export", "--out", str(tmp_path / "out"), "--quiet"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stderr
    assert len(list((tmp_path / "out" / "atif").glob("*.json"))) == 8


#: the benchmark runner, whose ``BUILDERS`` name every store kind it builds a corpus of
BENCH = benchmark_module("bench")


#: the runner's whole run on a store of files and on a database of another format; what it
#: does by kind (the floor's parse of each kind's records, the corpus builders) is checked
#: for every kind below, without timing the exports again
RUNNER_KINDS = ["agentsession", "opencode"]


@pytest.mark.parametrize("kind", RUNNER_KINDS)
def test_the_benchmark_runner_runs_on_a_tiny_corpus(kind: str) -> None:
    """A smoke run only: no timing is asserted (machines are shared and noisy)."""
    tiny = ["--sessions", "3", "--repeat", "1", "--sizes", "1", "--tool-output-kb", "2"]
    tiny += ["--format", kind]
    result = subprocess.run(
        [sys.executable, "benchmarks/bench.py", *tiny, "--json"],
        cwd=ROOT, capture_output=True, text=True, timeout=240, check=True,
    )  # fmt: skip
    figures = json.loads(result.stdout)
    assert {"efficiency", "amplification", "speedup_2_workers", "sizes"} <= set(figures)
    assert figures["corpus"]["format"] == kind and figures["corpus"]["input_mb"] > 0
    assert figures["command_seconds"] > 0 and figures["wall_seconds"]["default"] > 0
    assert figures["ceiling_2_workers"] > 0 and "two_at_once" in figures["seconds"]
    rounds = figures["round_ratios"]  # each ratio taken within a round (one round here)
    assert rounds["efficiency"] == [figures["efficiency"]] and len(rounds["ceiling_2_workers"]) == 1
    driver = figures["driver_share_largest_2_workers"]
    assert 0 < driver["share"] < 1 and {"discover", "index", "manifest"} <= set(
        driver["driver_seconds"]
    )


def test_the_benchmark_floor_parses_the_records_of_every_store_kind(tmp_path: Path) -> None:
    """The floor's parse reads each store kind's JSON wherever it lies: every byte of a file
    store, and of a database the JSON text of its rows (OpenCode's too: its database has
    tables of its own, which the floor once failed on), not the pages around it.  Every
    registered store kind has a corpus builder."""
    assert set(BENCH.BUILDERS) == set(READERS), "add the new kind's corpus to benchmarks/bench.py"
    for kind, build in sorted(BENCH.BUILDERS.items()):
        store = tmp_path / kind
        size = build(store, 3, seed=1, tool_output_bytes=2048)
        parsed = sum(len(record) for record in BENCH.records(store))
        least = 0.4 if kind in ("agentsession-sqlite", "cursor", "opencode") else 0.99
        assert least * size <= parsed <= size, (kind, parsed, size)


def test_every_package_folder_is_in_the_wheel(wheel: Path) -> None:
    """A new subpackage is packaged without a hand-kept list (``setup.py`` finds them): every
    folder of the three package folders that holds modules is a package of the wheel."""
    with zipfile.ZipFile(wheel) as zf:
        packaged = {Path(n).parent.as_posix() for n in zf.namelist() if n.endswith("/__init__.py")}
    folders = {
        "trajset/" + p.parent.relative_to(ROOT).as_posix()
        for root in ("pipeline", "redactors", "schemas")
        for p in (ROOT / root).rglob("*.py")
        if "__pycache__" not in p.parts
    }
    assert folders <= packaged, (
        f"not packaged (a folder without __init__.py?): {folders - packaged}"
    )


def test_the_before_after_comparison_runs_and_finds_a_build_equal_to_itself(
    tmp_path: Path,
) -> None:
    """A smoke run of ``benchmarks/compare.py`` (no timing is asserted)."""
    trajset = shutil.which("trajset")
    assert trajset, "the trajset command is installed with the package"
    store = tmp_path / "store"
    shutil.copytree(ROOT / "tests" / "data" / "upstream" / "suga" / "synthetic-export", store)
    result = subprocess.run(
        [sys.executable, "benchmarks/compare.py", trajset, trajset, str(store),
         "--repeat", "1", "--workers", "1", "--json"],
        cwd=ROOT, capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    figures = json.loads(result.stdout)
    assert figures["1 worker"]["data files identical"] is True
