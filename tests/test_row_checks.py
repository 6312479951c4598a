"""The row checks every training row must pass (``outputs/row_checks.py``), over every
fixture store of every reader, real and synthetic: no violation in the export's manifest,
none in ``trajset validate``.  Each check is also shown firing on rows that break it.

On the code before these checks existed they found, in the stores named by the issue that
asked for them: Codex ``ai-sessions`` 21 empty trainable messages (each model call split
in two), OpenCode's SQLite fixture 6, Pi ``pi-mono`` 13 and 6 unanswered calls (an errored
answer's partial calls), Codex ``agent-sessions`` a repeated prompt and 3 answers trainable
in two rows.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from trajset.pipeline.cli import app
from trajset.pipeline.outputs.row_checks import CHECKS, count, sft_violations, steps_violations
from trajset.pipeline.outputs.validate import validate_folder

from .conftest import UPSTREAM
from .exports import export, table
from .fixture_stores import DATA, fixtures, lay_out

#: the store folders below tests/data/upstream that are not a reader's declared fixture
#: (the declared ones are laid out by ``fixture_stores``)
FOLDERS = (
    "claude-code/*",
    "codex/real/*",
    "codex/synthetic/*",
    "codex/upstream-synthetic/claude-code-log",
    # two rollouts not named rollout-*: passed as files (their SOURCE.md says so)
    "codex/real/teich/example_codex_session.jsonl",
    "codex/upstream-synthetic/codemie-code/turn-spawn-skill.jsonl",
    "gemini-cli/real/*",
    "gemini-cli/synthetic/*",
    "harbor-jobs/*/jobs",
    "opencode/sqlite",
    "pi/real/*",
    "pi/synthetic/*",
    "pi/pi-session-inspector",
    "suga/synthetic-export",
    "einox/synthetic/data",
)
DECLARED = [f for found in fixtures().values() for f in found]
STORES = sorted(
    {
        str(p.relative_to(DATA))
        for pattern in FOLDERS
        for p in UPSTREAM.glob(pattern)
        if (p.is_dir() and p != UPSTREAM / "codex" / "real" / "teich") or p.suffix == ".jsonl"
    }
    - {f.path for f in DECLARED}
)
CASES = [f.path for f in DECLARED] + STORES


@pytest.mark.parametrize("store", CASES)
def test_every_fixture_store_passes_the_row_checks(store: str, tmp_path: Path) -> None:
    declared = next((f for f in DECLARED if f.path == store), None)
    path = lay_out(declared, tmp_path / "store") if declared else DATA / store
    out = export(path, tmp_path / "out")
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["counts"]["trajectories"] > 0  # the store was read as its kind
    assert manifest["row_checks"] == dict.fromkeys(CHECKS, 0)
    problems, _ = validate_folder(out)
    assert not problems, problems[:5]
    # every pair and KTO row is one a trainer takes: a prompt, and model output on each side
    for p in table(out, "preferences"):
        assert p["prompt"] and _answers(p["chosen"]) and _answers(p["rejected"]), p["pair_id"]
    for k in table(out, "kto"):
        assert k["prompt"] and _answers(k["completion"]), k["kto_id"]


def _answers(side: list[dict[str, Any]]) -> bool:
    return any(m["role"] == "assistant" for m in side)


def _row(*messages: dict[str, Any], leaf: str = "l1") -> dict[str, Any]:
    return {"session_id": "s", "leaf_id": leaf, "window": 0, "messages": list(messages)}


def _m(role: str, content: str = "", **more: Any) -> dict[str, Any]:
    return {"role": role, "content": content, "tool_calls": None, "tool_call_id": None,
            "reasoning_content": None, "trainable": role == "assistant", **more}  # fmt: skip


def _call(cid: str) -> dict[str, Any]:
    return {"id": cid, "type": "function", "function": {"name": "read", "arguments": "{}"}}


def test_each_check_fires_on_rows_that_break_it() -> None:
    good = _row(_m("user", "Fix it."), _m("assistant", tool_calls=[_call("c1")]),
                _m("tool", "ok", tool_call_id="c1"), _m("assistant", "Fixed."))  # fmt: skip
    assert not list(sft_violations([good]))
    # the last message's calls are not unanswered: the path ended there
    assert not list(
        sft_violations([_row(_m("user", "Go."), _m("assistant", tool_calls=[_call("c")]))])
    )
    broken = {
        "empty_trainable": [_row(_m("user", "Hi."), _m("assistant"), _m("assistant", "Hello."))],
        "unanswered_call": [
            _row(
                _m("user", "Go."),
                _m("assistant", tool_calls=[_call("c9")]),
                _m("user", "Well?"),
                _m("assistant", "Done."),
            )
        ],
        "repeated_prompt": [
            _row(_m("user", "Look [image: a.png]"), _m("user", "Look"), _m("assistant", "A cat."))
        ],
        "trained_twice": [good, {**good, "window": 1}],
    }
    for check, rows in broken.items():
        assert {v.check for v in sft_violations(rows)} == {check}, check
    step = {"session_id": "s", "leaf_id": "l1", "prompt_tokens": 10, "is_copied_context": False,
            "extra": json.dumps({"openresponses": {"response": {"response_id": "r1"}}})}  # fmt: skip
    twice = [{**step, "step_id": 2}, {**step, "step_id": 3}]
    assert [v.check for v in steps_violations(twice)] == ["usage_twice"]
    assert not list(steps_violations([twice[0], {**twice[1], "leaf_id": "l2"}]))
    assert count([good], twice) == {**dict.fromkeys(CHECKS, 0), "usage_twice": 1}


def test_validate_names_each_violation_and_fails(tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    out = export(UPSTREAM / "pi" / "real" / "teich", tmp_path / "out")
    [part] = sorted((out / "data" / "sft").glob("*.parquet"))
    table = pq.read_table(part)
    rows = table.to_pylist()
    rows[0]["messages"].insert(1, _m("assistant"))  # an empty answer, trainable
    pq.write_table(type(table).from_pylist(rows, schema=table.schema), part)
    result = CliRunner().invoke(app, ["validate", str(out)])
    assert result.exit_code == 1
    assert "message 1: a trainable assistant message with no text" in result.output
