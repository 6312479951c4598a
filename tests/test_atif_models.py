"""Our ATIF v1.8 models against the handwritten fixtures and Harbor's golden trajectories."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trajset.schemas.atif import json_schema, validate_document

# The rule each invalid fixture breaks, as a phrase Harbor 0.25.0's message and ours both contain.
RULES = {
    "invalid-step-ids-not-sequential.json": "expected 4 (sequential from 1), got 9",
    "invalid-source-call-id-other-step.json": "source_call_id 'call_a1' which is not found in step 7",
    "invalid-tool-calls-on-user-step.json": "Field 'tool_calls' is only applicable when source is 'agent'",
    "invalid-subagent-ref-session-id-only.json": "SubagentTrajectoryRef must be resolvable",
    "invalid-embedded-subagent-without-trajectory-id.json": "subagent_trajectories[0].trajectory_id is required",
    "invalid-llm-call-count-zero-with-metrics.json": "Field 'metrics' must be absent when llm_call_count is 0",
    "invalid-unknown-field.json": "steps.2.role: Extra inputs are not permitted",
    "invalid-audio-part-with-image-source.json": "type='audio' requires a AudioSource",
    "invalid-schema-version.json": "schema_version: Input should be 'ATIF-v1.0'",
    "invalid-timestamp.json": "Invalid isoformat string: '01/01/2026 10:00'",
}


def test_handwritten_fixtures_accepted_or_rejected_as_expected(fixtures: Path) -> None:
    cases = json.loads((fixtures / "atif" / "handwritten" / "expected.json").read_text())[
        "fixtures"
    ]
    assert {c["file"] for c in cases if not c["valid"]} == set(RULES)
    for case in cases:
        doc = json.loads((fixtures / "atif" / "handwritten" / case["file"]).read_text())
        error = validate_document(doc)
        if case["valid"]:
            assert error is None, (case["file"], error)
        else:
            phrase = RULES[case["file"]]
            assert phrase in case["harbor_0_25_0_error"]
            assert error is not None and phrase in error, (case["file"], error)


def test_harbor_golden_trajectories_validate(fixtures: Path) -> None:
    files = sorted((fixtures / "atif").glob("harbor-golden-*/*.trajectory*.json"))
    assert files
    for f in files:
        assert validate_document(json.loads(f.read_text())) is None, f.name


def test_json_schema_is_emitted() -> None:
    schema = json_schema()
    assert {"Trajectory", "Step", "ContentPart", "AudioSource"} <= set(schema["$defs"])


@pytest.mark.parametrize(
    ("mutate", "needle"),
    [
        (lambda d: d["steps"].__setitem__(0, {**d["steps"][0], "source": "assistant"}), "source"),
        (lambda d: d.__setitem__("steps", []), "steps"),
        (lambda d: d["agent"].pop("version"), "version"),
    ],
)
def test_rules_beyond_the_fixtures(mutate, needle: str) -> None:  # type: ignore[no-untyped-def]
    doc = {
        "schema_version": "ATIF-v1.8",
        "agent": {"name": "a", "version": "1"},
        "steps": [{"step_id": 1, "source": "user", "message": "hi"}],
    }
    assert validate_document(doc) is None
    mutate(doc)
    error = validate_document(doc)
    assert error is not None and needle in error
