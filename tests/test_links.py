"""Linked subsessions: loaded through the run's index, embedded once, and link cycles end."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.builder import SessionBuilder
from trajset.pipeline import ExportOptions, RunOptions, run_export


def _linking(sid: str, target: str) -> SessionBuilder:
    b = SessionBuilder(sid, hashes=False)
    b.config(model="m", tools_added=[{"type": "function", "name": "spawn"}])
    b.user("delegate this")
    b.respond(calls=[("call_1", "spawn", {})])
    b.add("link", rel="subsession", session=target, call_id="call_1")
    b.tool_output("call_1", "done")
    b.respond(text="finished")
    return b


def _store(tmp_path: Path, *sessions: SessionBuilder) -> Path:
    store = tmp_path / "store"
    store.mkdir()
    for b in sessions:
        (store / f"{b.header['id']}.jsonl").write_text(b.text(), encoding="utf-8")
    return store


def _doc(out: Path, sid: str) -> dict:  # type: ignore[type-arg]
    return json.loads((out / "atif" / f"{sid}.json").read_text(encoding="utf-8"))


def test_a_linked_session_in_the_store_is_embedded(tmp_path: Path) -> None:
    child = SessionBuilder("child", hashes=False)
    child.user("sub task")
    child.respond(text="sub result")
    store = _store(tmp_path, _linking("parent", "child"), child)
    run = run_export([store], tmp_path / "out", ExportOptions(), RunOptions(workers=1))
    assert not run.errors
    [sub] = _doc(tmp_path / "out", "parent")["subagent_trajectories"]
    assert sub["session_id"] == "child" and sub["trajectory_id"].startswith("child/")


def test_link_cycles_end_instead_of_recursing(tmp_path: Path) -> None:
    store = _store(tmp_path, _linking("a", "b"), _linking("b", "a"), _linking("self", "self"))
    run = run_export([store], tmp_path / "out", ExportOptions(), RunOptions(workers=2))
    assert run.counts["sessions_exported"] == 3 and not run.errors
    a = _doc(tmp_path / "out", "a")
    [b_in_a] = a["subagent_trajectories"]
    assert b_in_a["session_id"] == "b" and "subagent_trajectories" not in b_in_a
    refs = [
        ref
        for s in b_in_a["steps"]
        for r in (s.get("observation") or {}).get("results", [])
        for ref in r.get("subagent_trajectory_ref") or []
    ]
    assert refs == [{"session_id": "a", "trajectory_path": "a.json", "extra": refs[0]["extra"]}]
    assert "subagent_trajectories" not in _doc(tmp_path / "out", "self")


def test_a_linked_subsession_is_converted_once_per_parent_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each parent trajectory that links a subsession embeds its main document: it was
    converted again for every one of them (here 5 continuations after the link)."""
    from trajset.pipeline.atif import document

    parent = _linking("parent", "child")
    done = parent.leaf
    for i in range(5):
        parent.branch(done).respond(text=f"finished, take {i}")
    child = SessionBuilder("child", hashes=False)
    child.user("sub task")
    child.respond(text="sub result")
    converted = Counter[str]()
    main = document.main_trajectory

    def counted(session: Any, *args: Any) -> Any:
        converted[session.id] += 1
        return main(session, *args)

    monkeypatch.setattr(document, "main_trajectory", counted)
    store = _store(tmp_path, parent, child)
    run = run_export([store], tmp_path / "out", ExportOptions(), RunOptions(workers=1))
    assert run.counts["trajectories"] == 6 and converted == {"child": 1}  # 5 parents, 1 child
