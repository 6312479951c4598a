"""Shared fixtures: the upstream fixture folder (skipped when absent), the CLI runner, sessions in tmp_path."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings
from typer.testing import CliRunner

# Shared machines are noisy: no per-example deadline; under CI a fixed seed, so a run is reproducible.
settings.register_profile("trajset", deadline=None, derandomize=bool(os.environ.get("CI")))
settings.load_profile("trajset")

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "fixtures"


def _fixtures() -> Path:
    if not SHARED.is_dir():
        pytest.skip(
            "upstream fixtures not found at ../shared/fixtures (they are not part of the repository)"
        )
    return SHARED


@pytest.fixture
def fixtures() -> Path:
    return _fixtures()


@pytest.fixture
def agentsession_data(fixtures: Path) -> Path:
    return fixtures / "agentsession" / "testdata"


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


def session_file(name: str) -> Path:
    """Path of a fixture session by base name (``basic`` -> sessions/v0.4/basic.jsonl)."""
    base = _fixtures() / "agentsession" / "testdata" / "sessions"
    return (
        base / "v0.4" / f"{name}.jsonl"
        if (base / "v0.4" / f"{name}.jsonl").exists()
        else base / f"{name}.jsonl"
    )
