"""ATIF export against the reference exporter's own output and Harbor's validator."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from trajset.pipeline import (
    AtifOptions,
    Trajectory,
    items,
    items_from,
    read_session,
    read_store,
    sample_store,
    session_documents,
    to_atif,
    trajectories,
)
from trajset.schemas.atif import validate_document

from .conftest import session_file

FIXTURE_SESSIONS = [
    "basic",
    "branch",
    "compaction",
    "extensions",
    "runs",
    "truncated",
    "bad-first-kept",
]


def harbor_trajectory() -> Any:
    """Harbor's own ATIF model, the conformance oracle.

    Harbor requires Python >= 3.12 and pulls ~90 packages, but its trajectory
    models need only pydantic, so the test environment installs it with
    ``pip install --no-deps --ignore-requires-python harbor==0.25.0``
    (see .ci/run). Under CI a missing Harbor is a failure, not a skip.
    """
    try:
        from harbor.models.trajectories import Trajectory as HarborTrajectory
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail("harbor==0.25.0 is not installed; .ci/run installs it with --no-deps")
        pytest.skip(
            "harbor==0.25.0 not installed (pip install --no-deps --ignore-requires-python harbor==0.25.0)"
        )
    return HarborTrajectory


def _docs(session_path: Path, **kw: Any) -> list[dict]:
    docs = session_documents(read_session(session_path), AtifOptions(**kw))
    return [d for d in docs if isinstance(d, dict)]


@pytest.mark.parametrize(
    "expected_file",
    ["basic.o0000001", "branch.n0000001", "compaction.i0000007", "extensions.r0000002"],
)
def test_equals_reference_export(agentsession_data: Path, expected_file: str) -> None:
    name, leaf = expected_file.split(".")
    expected = json.loads((agentsession_data / "export" / f"{expected_file}.json").read_text())
    if name == "extensions":
        # Version difference listed in fixtures/agentsession/SOURCE.md: v0.0.5 exports config_extensions.
        expected["steps"][0]["extra"]["config_extensions"] = [
            {"acme_note": "kept on a known entry", "entry_id": "c0000001"}
        ]
    [doc] = [d for d in _docs(session_file(name)) if d["trajectory_id"] == leaf]
    assert doc == expected


def _all_fixture_documents() -> list[dict]:
    docs = []
    for name in FIXTURE_SESSIONS:
        docs.extend(_docs(session_file(name)))
    sessions = read_store(sample_store())
    by_id = {s.id: s for s in sessions}
    for s in sessions:
        docs.extend(
            d for d in session_documents(s, AtifOptions(subsessions=by_id)) if isinstance(d, dict)
        )
    return docs


def test_every_document_validates_with_our_models_and_harbors(agentsession_data: Path) -> None:
    harbor = harbor_trajectory()
    docs = _all_fixture_documents()
    assert len(docs) >= 15
    for doc in docs:
        assert validate_document(doc) is None, doc["trajectory_id"]
        harbor.model_validate(doc)
        harbor.model_validate(doc, strict=True)


def test_written_documents_validate_with_harbor(tmp_path: Path, runner) -> None:  # type: ignore[no-untyped-def]
    from trajset.pipeline.cli import app

    harbor = harbor_trajectory()
    result = runner.invoke(
        app, ["export", "--out", str(tmp_path / "out"), "--workers", "1", "--quiet"]
    )
    assert result.exit_code == 0, result.output
    files = sorted((tmp_path / "out" / "atif").glob("*.json"))
    assert len(files) == 8
    for f in files:
        harbor.model_validate_json(f.read_text())


def test_bad_first_kept_leaf_is_an_error_and_others_still_export(agentsession_data: Path) -> None:
    out = list(trajectories(read_session(session_file("bad-first-kept"))))
    errors = [t for t in out if not isinstance(t, Trajectory)]
    assert errors and all("first_kept" in str(e) for e in errors)


def test_items_rebuilds_the_context_items(agentsession_data: Path) -> None:

    for name in ["basic", "branch", "compaction", "runs"]:
        session = read_session(session_file(name))
        for t in trajectories(session):
            assert isinstance(t, Trajectory)
            assert items(to_atif(t)) == t.context.items


def test_items_from_rebuilds_calls_and_outputs(fixtures: Path) -> None:
    doc = json.loads(
        (
            fixtures / "atif" / "harbor-golden-v1.5-openhands" / "hello-world.trajectory.json"
        ).read_text()
    )
    rebuilt = items_from(doc)
    calls = [i for i in rebuilt if i["type"] == "function_call"]
    outputs = [i for i in rebuilt if i["type"] == "function_call_output"]
    assert calls and {o["call_id"] for o in outputs} <= {c["call_id"] for c in calls}
    assert len({c["call_id"] for c in calls}) == len(calls)


def test_subsession_is_embedded_when_found_in_the_store() -> None:
    sessions = read_store(sample_store())
    parent = next(s for s in sessions if s.source.endswith("a004.jsonl"))
    [doc] = session_documents(parent, AtifOptions(subsessions={s.id: s for s in sessions}))
    assert isinstance(doc, dict)
    [sub] = doc["subagent_trajectories"]
    assert sub["trajectory_id"].endswith("/r0000001")
    refs = [
        ref
        for s in doc["steps"]
        for r in (s.get("observation") or {}).get("results", [])
        for ref in r.get("subagent_trajectory_ref") or []
    ]
    assert refs == [
        {
            "trajectory_id": sub["trajectory_id"],
            "session_id": sub["session_id"],
            "extra": {"entry_id": "k0000001"},
        }
    ]
