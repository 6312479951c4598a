"""Damaged stores of every kind, held out from the cases written by hand (benchmarks/damaged.py):
each exports with no traceback, within its bounds, every session exported or an error row,
and twice byte-identically.  ``python benchmarks/damaged.py --per-class 3`` runs three times
as many."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from trajset.pipeline.stores import READERS, jsonl

from .conftest import benchmark_module

damaged = benchmark_module("damaged")


@pytest.mark.slow
@pytest.mark.parametrize("kind", sorted(READERS))
def test_every_damage_of_a_store_is_exported_or_a_row(kind: str, tmp_path: Path) -> None:
    problems = []
    for i, (k, fixture, name, seed) in enumerate(damaged.cases(65, 1, [kind])):
        problems += damaged.check(tmp_path / str(i), k, fixture, name, random.Random(seed))
    assert problems == []


def test_the_checks_catch_a_reader_that_drops_a_line_silently(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The runner's own check: a JSON Lines reader that loses a cut last line without its
    ``truncated`` row is reported."""
    objects = jsonl.objects

    def silent(data, name):  # type: ignore[no-untyped-def]
        found, issues = objects(data, name)
        return found, [i for i in issues if i.kind != "truncated"]

    monkeypatch.setattr(jsonl, "objects", silent)
    for module in ("claude.lines", "codex.rollouts", "pi.files"):
        monkeypatch.setattr(f"trajset.pipeline.stores.{module}.objects", silent)
    problems = damaged.check(tmp_path, "pi", 1, "cut_last", random.Random(1))
    assert problems and "data changed without an error row" in problems[0]


def test_a_link_back_into_the_store_changes_nothing(tmp_path: Path) -> None:
    assert damaged.check(tmp_path, "gemini-cli", 0, "link_back", random.Random(3)) == []
