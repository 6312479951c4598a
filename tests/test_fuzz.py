"""Bounded mutation fuzzing (Hypothesis) over every store kind: the invariants of benchmarks/fuzz.py.

The long runner (``python benchmarks/fuzz.py --minutes 10``) explores far more; this keeps a
small, derandomized-under-CI share of it in every test run.
"""

from __future__ import annotations

import random
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trajset.pipeline import RunSettings
from trajset.pipeline.stores import READERS

from .conftest import benchmark_module
from .fixture_stores import fixtures

fuzz = benchmark_module("fuzz")


def test_the_runner_has_a_seed_for_every_registered_reader() -> None:
    fuzz.check_seeds()
    assert set(fixtures()) == set(READERS)


@settings(max_examples=25, suppress_health_check=[HealthCheck.too_slow])
@given(
    kind=st.sampled_from(sorted(READERS)),
    seed=st.integers(0, 2**32 - 1),
    small=st.booleans(),
)
def test_a_mutated_store_never_breaks_an_invariant(kind: str, seed: int, small: bool) -> None:
    run = fuzz.SMALL_SLICES if small else RunSettings()
    with tempfile.TemporaryDirectory() as tmp:
        problem = fuzz.one_round(Path(tmp), kind, random.Random(seed), seed % 5 == 0, run)
    assert problem == "", problem
