"""The bundled sample store: what it covers, and that it is what the generator writes."""

from __future__ import annotations

from pathlib import Path

from trajset.pipeline import read_store, sample_store

from .conftest import benchmark_corpus


def test_sample_store_equals_generator_output(tmp_path: Path) -> None:
    corpus = benchmark_corpus()
    corpus.build_sample_store(tmp_path)
    made = {p.relative_to(tmp_path): p.read_bytes() for p in tmp_path.rglob("*.jsonl")}
    shipped = {
        p.relative_to(sample_store()): p.read_bytes() for p in sample_store().rglob("*.jsonl")
    }
    assert made == shipped, (
        "regenerate with: python benchmarks/corpus.py sample pipeline/sample_store"
    )


def test_sample_store_covers_the_features() -> None:
    sessions = read_store(sample_store())
    types = {e.type for s in sessions for e in s.entries}
    assert {
        "item",
        "response",
        "config",
        "compaction",
        "label",
        "info",
        "env",
        "outcome",
        "link",
        "run",
        "dispatch",
        "decision",
    } <= types
    items = [e.raw["item"] for s in sessions for e in s.entries if e.type == "item"]
    assert any(i["type"] == "function_call_output" for i in items)
    assert any(
        isinstance(i.get("content"), list)
        and any(p.get("type") == "input_image" for p in i["content"])
        for i in items
    )
    assert sum(1 for s in sessions if s.forks()) >= 2
    assert sum(1 for s in sessions if s.truncation) == 1
    assert any(e.type == "outcome" and "pass" in e.raw for s in sessions for e in s.entries)
