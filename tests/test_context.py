"""The context algorithm against the upstream context fixtures (spec §4.2, §4.7)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trajset.pipeline import build_context, read_session
from trajset.pipeline.errors import ContextError
from trajset.pipeline.tree.context import request_context

from .conftest import session_file


@pytest.mark.parametrize("name", ["basic", "branch", "compaction", "extensions"])
def test_context_equals_fixture_for_every_leaf(agentsession_data: Path, name: str) -> None:
    expected = json.loads((agentsession_data / "context" / f"{name}.json").read_text())
    session = read_session(session_file(name))
    assert sorted(expected) == sorted(session.leaves())
    for leaf, want in expected.items():
        assert build_context(session.path(leaf)).to_json() == want, leaf


def test_bad_first_kept_fails_context_with_the_entry(agentsession_data: Path) -> None:
    session = read_session(session_file("bad-first-kept"))
    leaf = session.leaves()[-1]
    with pytest.raises(ContextError) as info:
        build_context(session.path(leaf))
    assert "first_kept" in str(info.value) and info.value.entry_id


def test_request_context_drops_only_the_responses_own_items(agentsession_data: Path) -> None:
    session = read_session(session_file("basic"))
    ctx = request_context(session, "r0000001")
    assert [e.id for e in ctx.entries] == ["c0000001", "i0000001"]


def test_settings_replay_rules() -> None:
    from tests.builder import SessionBuilder

    b = SessionBuilder("s")
    tool = lambda n: {"type": "function", "name": n}  # noqa: E731
    b.config(
        model="m1", instructions="", tools_added=[tool("a"), tool("b")], extra={"x": 1, "y": 2}
    )
    b.config(tools_removed=["a"], tools_added=[tool("a")], extra={"x": None})
    ctx = build_context(b.session().path(b.leaf))  # type: ignore[arg-type]
    s = ctx.settings
    assert [t["name"] for t in s.tools] == ["b", "a"]
    assert s.extra == {"y": 2}
    assert s.instructions == ""  # present-but-empty is a real value ...
    assert "instructions" not in s.to_json()  # ... that the JSON form omits
    b.config(model="m2", replace=True)
    assert build_context(b.session().path(b.leaf)).settings.to_json() == {"model": "m2"}  # type: ignore[arg-type]
