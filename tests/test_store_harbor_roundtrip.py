"""Harbor's ATIF -> trajset -> ATIF keeps every step, tool call, observation and metric.

Every golden document of ``tests/data/upstream/harbor-jobs`` (main trajectories,
continuation files, summarisation subagents) is compared, as values, with the
document trajset exports for it, and every exported document validates with
Harbor's own model.  What the export adds or moves, and only that, is undone
before comparing (specs/harbor-jobs.md, mapping table):

- ``metrics.cached_tokens`` is always written (0 when the step had none);
- the metrics without an Open Responses equivalent (``cost_usd``, token ids,
  logprobs) are kept in ``extra.openresponses.response["harbor:metrics"]``;
- a result no call names, on a step that made no call, is a user step after it
  (its text keeps its place in the sequence compared here);
- a continuation's copied context is said once.

Redaction is off: what is compared is the mapping, not the redactors.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from trajset.pipeline import ExportOptions, RunOptions, run_export

from .test_export_conformance import harbor_trajectory
from .test_store_harbor import HARBOR

JSON = Any
GOLDENS = sorted(HARBOR.glob("*/jobs/*/*/agent/trajectory.json"))


def _text(value: JSON) -> JSON:
    if isinstance(value, list):  # content parts: a text part compares as its text
        return [p.get("text") if p.get("type") == "text" else p for p in value]
    return value


def _said(steps: list[JSON]) -> dict[str, list[JSON]]:
    """What the steps said, in order: texts (messages and results), calls, reasoning."""
    out: dict[str, list[JSON]] = {"texts": [], "calls": [], "reasoning": []}
    for step in steps:
        if step.get("message") not in ("", None):
            out["texts"].append(_text(step["message"]))
        if step.get("reasoning_content"):
            out["reasoning"].append(step["reasoning_content"])
        for c in step.get("tool_calls") or []:
            out["calls"].append([c["tool_call_id"], c["function_name"], c["arguments"]])
        for r in (step.get("observation") or {}).get("results") or []:
            if r.get("content") not in ("", None):
                out["texts"].append(_text(r["content"]))
    return out


def _source(doc: JSON, *continuations: JSON) -> dict[str, list[JSON]]:
    steps = list(doc["steps"])
    for cont in continuations:
        earlier = {json.dumps([s.get("source"), s.get("message")]) for s in steps}
        steps += [
            s
            for s in cont["steps"]
            if not (
                s.get("is_copied_context")
                and json.dumps([s.get("source"), s.get("message")]) in earlier
            )
        ]
    said = _said(steps)
    said["metrics"] = [{"cached_tokens": 0} | s["metrics"] for s in steps if s.get("metrics")]
    return said


def _exported(doc: JSON) -> dict[str, list[JSON]]:
    said = _said(doc["steps"])
    said["metrics"] = []
    for step in doc["steps"]:
        if "metrics" in step:
            response = step["extra"]["openresponses"].get("response") or {}
            said["metrics"].append(step["metrics"] | response.get("harbor:metrics", {}))
    return said


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> list[JSON]:
    out = tmp_path_factory.mktemp("harbor") / "out"
    run = run_export(
        [HARBOR], out, ExportOptions(prefer=("score",), redact=False), RunOptions(workers=1)
    )
    assert run.errors == []
    return [json.loads(f.read_text()) for f in sorted((out / "atif").glob("*.json"))]


def _of_trial(docs: list[JSON], trial: str) -> JSON:
    """The exported document whose leaf is the trial's."""
    [doc] = [d for d in docs if d["steps"][-1]["extra"]["agentsession"]["entry_id"]
             .startswith(f"{trial}/")]  # fmt: skip
    return doc


def test_there_are_golden_documents_of_every_kind() -> None:
    names = {p.name for g in GOLDENS for p in g.parent.glob("trajectory*.json")}
    assert len(GOLDENS) == 9
    assert {"trajectory.cont-1.json", "trajectory.summarization-1-answers.json"} <= names


@pytest.mark.parametrize("golden", GOLDENS, ids=lambda p: p.parent.parent.name)
def test_every_trial_keeps_its_steps_calls_results_and_metrics(
    exported: list[JSON], golden: Path
) -> None:
    agent = golden.parent
    conts = [json.loads(p.read_text()) for p in sorted(agent.glob("trajectory.cont-*.json"))]
    source = _source(json.loads(golden.read_text()), *conts)
    assert _exported(_of_trial(exported, agent.parent.name)) == source


def test_every_subagent_document_is_embedded_and_exported_with_its_values(
    exported: list[JSON],
) -> None:
    goldens = sorted(HARBOR.glob("*/jobs/*/*/agent/trajectory.summarization-*.json"))
    assert len(goldens) == 3  # GcS7m2Q's, which resolve; Lh4nR8x's refs dangle
    [main] = [d for d in exported if d.get("subagent_trajectories")]
    embedded = {d["agent"]["name"]: d for d in main["subagent_trajectories"]}
    alone = {d["agent"]["name"]: d for d in exported if d["agent"]["name"] in embedded}
    for golden in goldens:
        doc = json.loads(golden.read_text())
        name = doc["agent"]["name"]
        assert _exported(embedded[name]) == _source(doc), golden.name
        assert _exported(alone[name]) == _source(doc), golden.name


def test_every_exported_document_validates_with_harbors_model(exported: list[JSON]) -> None:
    harbor = harbor_trajectory()
    assert len(exported) == 12
    for doc in exported:
        harbor.model_validate(doc)
