"""The GitHub Copilot CLI reader against real 1.0.78 sessions and the synthetic home
(specs/copilot-cli.md).  Each case's expectations are the rows of
``tests/data/upstream/copilot-cli/SOURCE.md``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from typer.testing import CliRunner

from trajset.pipeline import ExportOptions, RunOptions, read_store, run_export
from trajset.pipeline.cli import app
from trajset.pipeline.stores import detect_kind, discover, reader_for
from trajset.schemas.session import Session

from .conftest import UPSTREAM
from .exports import answers, export, table
from .round_trip import assert_round_trip
from .test_export_conformance import harbor_trajectory

COPILOT = UPSTREAM / "copilot-cli"
REAL = COPILOT / "real" / "lantern"
HOME = COPILOT / "synthetic" / "home" / ".copilot"
STATE = HOME / "session-state"


def _sid(n: int) -> str:
    return f"1a2b3c4d-000{n}-4a00-8000-00000000a00{n}"


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return export(HOME, tmp_path_factory.mktemp("copilot") / "out")


@pytest.fixture(scope="module")
def real(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return export(REAL, tmp_path_factory.mktemp("copilot-real") / "out")


def _rows(out: Path, name: str, sid: str) -> list[dict[str, Any]]:
    return [r for r in table(out, name) if r["session_id"] == sid]


def _session(sid: str) -> Session:
    return next(s for s in read_store(HOME) if s.id == sid)


# --------------------------------------------------------------------------- where sessions are


def test_detection_of_every_layout() -> None:
    for path in (HOME, STATE, STATE / _sid(1), STATE / _sid(1) / "events.jsonl",
                 STATE / f"{_sid(5)}.jsonl", REAL,
                 next((HOME / "history-session-state").glob("*.json"))):  # fmt: skip
        assert detect_kind(path) == "copilot-cli", path
    units = discover([HOME])
    assert len(units) == 8  # a fork and its source are one unit
    [fork] = [u for u in units if len(u.files) == 2]
    assert [Path(f).parent.name for f in fork.files] == [_sid(1), _sid(2)]


def test_the_default_location_honours_copilot_home() -> None:
    [where] = reader_for("copilot-cli").locations
    assert where.resolve({"HOME": "/h"}) == Path("/h/.copilot")
    assert where.resolve({"HOME": "/h", "COPILOT_HOME": "/c"}) == Path("/c")


def test_the_synthetic_home_totals(out: Path) -> None:
    """8 sessions with trajectories (a fork joined to its source) and 2 subagents; 11
    trajectories, 2 pairs, 2 error rows; the command history is no session and no row."""
    rows = table(out, "trajectories")
    assert len(rows) == 11 and len({r["session_id"] for r in rows}) == 10
    assert len(table(out, "preferences")) == 2
    errors = pl.read_parquet(out / "errors.parquet")
    assert sorted(Path(s).parent.name for s in errors["source"]) == [_sid(7), _sid(9)]
    assert set(errors["kind"]) == {"truncated"}
    manifest = json.loads((out / "manifest.json").read_text())
    assert "command-history-state.json" in json.dumps(manifest.get("skipped", manifest))


# --------------------------------------------------------------------------- real 1.0.78


def test_each_real_session_is_one_trajectory_with_one_message_per_call(real: Path) -> None:
    rows = table(real, "trajectories")
    assert len(rows) == 3 and not table(real, "preferences")
    assert not pl.read_parquet(real / "errors.parquet").height
    [parallel] = [r for r in rows if r["session_id"].startswith("049410b4")]
    said = [m for m in parallel["messages"] if m["role"] == "assistant"]
    assert len(said) == 2 and said[0]["content"] == ""
    assert [c["id"] for c in said[0]["tool_calls"]] == ["call_fpjobf9a", "call_de798t9c"]
    assert parallel["total_completion_tokens"] == 978  # = session.shutdown's outputTokens
    assert parallel["n_failed_tool_calls"] == 2


def test_every_real_tool_call_is_in_steps_and_every_document_is_valid(real: Path) -> None:
    calls = set()
    for line in (REAL / "session-state").rglob("events.jsonl"):
        for e in map(json.loads, line.read_text(encoding="utf-8").splitlines()):
            if e["type"] == "assistant.message":
                calls |= {r["toolCallId"] for r in e["data"]["toolRequests"]}
    seen = {c["tool_call_id"] for r in table(real, "steps") for c in r["tool_calls"] or []}
    assert calls and calls <= seen
    harbor = harbor_trajectory()
    for doc in (real / "atif").glob("*.json"):
        harbor.model_validate_json(doc.read_text())


# --------------------------------------------------------------------------- /fork


def test_a_fork_copy_joins_its_source_as_one_tree(out: Path) -> None:
    rows = _rows(out, "trajectories", _sid(1))
    assert len(rows) == 2
    [kept] = [r for r in rows if r["is_preferred"]]
    assert answers(kept)[-1] == "Drafts now render into `_drafts/` instead of `_site/`."
    [left] = [r for r in rows if not r["is_preferred"]]
    assert answers(left)[-1] == "Drafts are now skipped unless `kiln build --drafts` is given."
    pairs = _rows(out, "preferences", _sid(1))
    assert {p["kind"] for p in pairs} == {"prompt"} and len(pairs) == 2
    s = _session(_sid(1))
    assert s.header_raw["copilot:forks"] == [_sid(2)] and len(s.forks()) == 1
    assert s.counts["responses"] == 4  # 2 before the fork, counted once, and 1 on each side
    assert not any(x.id == _sid(2) for x in read_store(HOME))


# --------------------------------------------------------------------------- subagents, compaction


def test_an_inline_subagent_is_its_own_session_linked_to_its_task_call(out: Path) -> None:
    [main] = _rows(out, "trajectories", _sid(3))
    assert answers(main)[-1].startswith("load() now resolves the path and raises ValueError")
    assert main["total_completion_tokens"] == 239
    child = f"{_sid(3)}:toolu_vrtx_01SynTask"
    [sub] = _rows(out, "trajectories", child)
    assert answers(sub)[-1].startswith("templates.py:13 joins the raw name")
    assert sub["total_completion_tokens"] == 51
    assert sub["messages"][0]["role"] == "user" and "templates" in sub["messages"][0]["content"]
    s = _session(child)
    assert s.header_raw["parent_session"] == _sid(3)
    assert s.header_raw["spawned_by"] == "toolu_vrtx_01SynTask"
    [link] = [e for e in _session(_sid(3)).entries if e.type == "link"]
    assert link.raw["session"] == child and link.raw["call_id"] == "toolu_vrtx_01SynTask"
    assert not _rows(out, "preferences", _sid(3))


def test_a_manual_compaction_is_a_compaction_of_the_path(out: Path) -> None:
    [k] = [e for e in _session(_sid(3)).entries if e.type == "compaction"]
    assert k.raw["tokens_before"] == 40210
    assert "path traversal" in k.raw["summary"]["content"][0]["text"]
    assert [r["window"] for r in _rows(out, "sft", _sid(3))] == [0, 1]


def test_an_old_subagent_marked_only_by_its_parent_call(out: Path) -> None:
    [main] = _rows(out, "trajectories", _sid(5))
    assert answers(main)[-1] == "kiln uses markdown-it-py (imported in kiln/render.py)."
    [sub] = _rows(out, "trajectories", f"{_sid(5)}:toolu_vrtx_01SynOldTask")
    assert answers(sub) == ["kiln imports markdown-it-py in kiln/render.py:3."]
    assert len(_session(_sid(5)).roots()) == 1  # parents naming unwritten events: no new roots


# --------------------------------------------------------------------------- what the model saw


def test_aborts_shell_commands_errors_and_chunks(out: Path) -> None:
    [row] = _rows(out, "trajectories", _sid(4))
    msgs = row["messages"]
    assert answers(row)[-1].startswith("images.py:22 converts to RGB without a background")
    assert row["total_completion_tokens"] == 142
    said = [m for m in msgs if m["role"] == "assistant"]
    [chunked] = [m for m in said if m["content"] == "Reading the thumbnail code."]
    assert [c["id"] for c in chunked["tool_calls"]] == ["call_synRead"]  # two chunks, one call
    calls = {c["id"] for m in said for c in m["tool_calls"] or []}
    assert "user-shell-syn-1" not in calls  # the user's own command: no call, no output
    assert "user-shell-syn-1" not in {m["tool_call_id"] for m in msgs}
    text = json.dumps([m for m in said])
    assert "500 Internal Server Error" not in text
    [cut] = [m for m in msgs if m["tool_call_id"] == "call_synWatch"]
    assert cut["content"] == "The execution of this tool, or a previous tool was interrupted."
    assert row["n_user_turns"] == 3  # the notification is no prompt
    assert "\u2028" in msgs[1]["content"]


def test_a_binary_asset_is_the_prompts_image() -> None:
    s = _session(_sid(4))
    [prompt] = [
        e for e in s.entries if e.raw.get("copilot:prompt_kind") and "PNG" in json.dumps(e.raw)
    ]
    parts = prompt.raw["item"]["content"]
    assert parts[1]["type"] == "input_image" and parts[1]["image_url"].startswith(
        "data:image/png;base64,iVBOR"
    )


def test_the_task_complete_is_an_outcome_that_does_not_pass(out: Path) -> None:
    [o] = _rows(out, "outcomes", _sid(4))
    assert o["kind"] == "copilot:task_complete" and o["pass"] is None


def test_the_legacy_json_session(out: Path) -> None:
    [row] = _rows(out, "trajectories", _sid(6))
    assert answers(row)[-1] == "kiln is MIT licensed (LICENSE, line 1)."
    assert any(
        c["id"] == "toolu_vrtx_01SynLegacy" for m in row["messages"] for c in m["tool_calls"] or []
    )


# --------------------------------------------------------------------------- damage


def test_nul_padding_a_recovered_line_and_a_cut_line(out: Path) -> None:
    for n in (7, 8, 9):
        [row] = _rows(out, "trajectories", _sid(n))
        assert answers(row)[-1] == "kiln 0.9.2", n
    assert _session(_sid(8)).counts["lines_recovered"] == 1 and not _session(_sid(8)).issues


# --------------------------------------------------------------------------- the commands


def test_convert_then_export_equals_exporting_the_store(tmp_path: Path, out: Path) -> None:
    assert assert_round_trip(HOME, out, tmp_path) == 11


def test_inspect_shows_the_fork_and_the_subagent() -> None:
    shown = CliRunner().invoke(app, ["inspect", str(HOME)]).output
    for line in ("fork ", "link ", "lines_recovered", "interrupted_calls"):
        assert line in shown, line


def test_an_unreadable_legacy_json_is_an_error_row(tmp_path: Path) -> None:
    folder = tmp_path / "history-session-state"
    folder.mkdir()
    (folder / "session_x_1.json").write_text('{"sessionId": "x", "chatMessages": [')
    run = run_export([tmp_path], tmp_path.parent / "o", ExportOptions(), RunOptions(workers=1))
    assert [e.kind for e in run.errors] == ["format"]


def test_a_file_without_its_start_line_keeps_its_first_event(tmp_path: Path) -> None:
    """The root then stands in for the missing start; the first event was once dropped as the
    root's duplicate id."""
    lines = (STATE / _sid(7) / "events.jsonl").read_bytes().rstrip(b"\0").splitlines()
    path = tmp_path / _sid(7) / "events.jsonl"
    path.parent.mkdir()
    path.write_bytes(b"\n".join(lines[1:]) + b"\n")
    reader = reader_for("copilot-cli")
    [s] = reader.load(reader.unit((str(path),)))
    assert isinstance(s, Session) and s.id == _sid(7)
    assert not [i for i in s.issues if i.kind == "duplicate_entry"]
    assert json.loads(lines[1])["id"] in {e.id for e in s.entries}
