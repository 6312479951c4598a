"""Shared fixtures: the vendored upstream data, the CLI runner, Hypothesis settings."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings
from typer.testing import CliRunner

# Shared machines are noisy: no per-example deadline; under CI a fixed seed, so a run is reproducible.
settings.register_profile("trajset", deadline=None, derandomize=bool(os.environ.get("CI")))
settings.load_profile("trajset")

DATA = Path(__file__).resolve().parent / "data"
UPSTREAM = DATA / "upstream"  # byte copies of the upstream fixtures, each folder with SOURCE.md


@pytest.fixture
def fixtures() -> Path:
    return UPSTREAM


@pytest.fixture
def agentsession_data() -> Path:
    return UPSTREAM / "agentsession" / "testdata"


@pytest.fixture(scope="session")
def sample_export(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample store exported with the default options, once per test process (each
    ``pytest -n`` worker has its own): read it, never write into it (copy it first)."""
    from trajset.pipeline import ExportOptions, RunOptions, run_export, sample_store

    out = tmp_path_factory.mktemp("sample-export") / "ds"
    run_export([sample_store()], out, ExportOptions(), RunOptions(workers=1))
    return out


@pytest.fixture(autouse=True)
def no_hub(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """``trajset publish`` reads and writes a folder-backed Hub double in every test, never
    the network (a test that needs its own double sets it again)."""
    import sys

    from .hub_double import FolderHub

    root = tmp_path_factory.getbasetemp() / "hub" / os.urandom(6).hex()  # made when used
    module = sys.modules.get("trajset.pipeline.cli.publish")
    if module is None:
        import trajset.pipeline.cli  # noqa: F401  (registers the command modules)

        module = sys.modules["trajset.pipeline.cli.publish"]
    monkeypatch.setattr(module, "hub_client", lambda: FolderHub(root))


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``datasets`` and the Hub client offline, with a cache of the test's own; its folder."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def session_file(name: str) -> Path:
    """Path of a fixture session by base name (``basic`` -> sessions/v0.4/basic.jsonl)."""
    base = UPSTREAM / "agentsession" / "testdata" / "sessions"
    v04 = base / "v0.4" / f"{name}.jsonl"
    return v04 if v04.exists() else base / f"{name}.jsonl"


def benchmark_module(name: str) -> Any:
    """``benchmarks/<name>.py``, loaded from its file (the benchmarks are no package), its
    siblings importable while it loads (``from texts import ...``); ``sys.path`` is left as
    it was found."""
    import importlib.util
    import sys

    path = Path(__file__).resolve().parents[1] / "benchmarks" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"trajset_benchmark_{name}", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # a dataclass looks its module up while it is made
    saved = list(sys.path)
    sys.path.insert(0, str(path.parent))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path[:] = saved
    return module


def benchmark_corpus() -> Any:
    """``benchmarks/corpus.py`` (the generated stores tests share with the benchmarks)."""
    return benchmark_module("corpus")


def shown(path: Path, store: Path) -> str:
    """``path`` as an export shows it in an error row or the manifest: from the name of the
    store it was read from on (no path of the machine leaves the run)."""
    return path.relative_to(store.parent).as_posix()
