"""The peers benchmark's corpora: each copy of the real sessions has ids of its own, lies
where its agent keeps it, and is read by trajset as sessions of their own."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from trajset.pipeline.stores import discover

from .conftest import benchmark_module

peers = benchmark_module("peers")


def _copies(store: Path) -> list[set[bytes]]:
    """The UUIDs of each file of ``store``."""
    return [set(peers.UUID.findall(f.read_bytes())) for f in sorted(store.rglob("*.jsonl"))]


@pytest.mark.parametrize("kind", sorted(peers.SOURCES))
def test_a_second_copy_shares_no_id_and_reads_as_sessions_of_its_own(
    tmp_path: Path, kind: str
) -> None:
    one = peers.real_corpus(kind, tmp_path / "one", 1)
    size = sum(f.stat().st_size for f in one.rglob("*") if f.is_file())
    two = peers.real_corpus(kind, tmp_path / "two", size + 1)
    files_one = sorted(f for f in one.rglob("*.jsonl"))
    files_two = sorted(f for f in two.rglob("*.jsonl"))
    assert len(files_two) == 2 * len(files_one)
    first, both = set().union(*_copies(one)), set().union(*_copies(two))
    assert first and first < both and len(both) == 2 * len(first)  # no id in two copies
    assert len(discover([two])) == 2 * len(discover([one]))


def test_claude_code_copies_lie_in_the_project_folders_of_their_repositories(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    store = peers.real_corpus("claude-code", home, 1)
    repos = sorted(p for p in (home / "work").iterdir())
    assert [p.name for p in repos] == ["copy1"]
    slug = re.sub(r"[^A-Za-z0-9-]", "-", str(repos[0]))
    assert sorted(p.name for p in store.iterdir()) == [slug]
