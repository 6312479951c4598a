"""Nothing is trainable that the model did not produce: a response that did not complete
(errored, aborted, interrupted) and Claude Code's own API-error notices stay in the ATIF
documents and ``steps`` with their status, and are never a trainable ``sft`` message; the
ones the agent never sent to the model again (Pi's errored and aborted answers, Claude
Code's notices) are not in the training context at all."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from trajset.pipeline import ExportOptions, RunOptions, run_export

SID = "0199a1b2-7777-7000-8000-000000000001"


def _line(**record: Any) -> str:
    return json.dumps(record)


def _pi_store(root: Path) -> Path:
    """A Pi session: a prompt, an aborted response, a retry that errors after two partial
    tool calls, and a third that answers."""
    project = root / "--srv-app--"
    project.mkdir(parents=True)
    use = {"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0,
           "cost": {"total": 0.001}}  # fmt: skip
    ts = "2026-01-03T18:20:{:02d}.000Z"
    lines = [
        _line(type="session", version=3, id=SID, timestamp=ts.format(0), cwd="/srv/app"),
        _line(type="message", id="u1", parentId=None, timestamp=ts.format(1),
              message={"role": "user", "content": [{"type": "text", "text": "Fix the bug."}]}),
        _line(type="message", id="a1", parentId="u1", timestamp=ts.format(2),
              message={"role": "assistant", "content": [{"type": "text", "text": "Let me"}],
                       "model": "m", "usage": use, "stopReason": "aborted"}),
        _line(type="message", id="a2", parentId="a1", timestamp=ts.format(3),
              message={"role": "assistant", "model": "m", "usage": use, "stopReason": "error",
                       "errorMessage": "overloaded",
                       "content": [{"type": "toolCall", "id": f"c{i}", "name": "read",
                                    "arguments": {"path": "a.py"}} for i in (1, 2)]}),
        _line(type="message", id="a3", parentId="a2", timestamp=ts.format(4),
              message={"role": "assistant", "content": [{"type": "text", "text": "Fixed."}],
                       "model": "m", "usage": use, "stopReason": "stop"}),
    ]  # fmt: skip
    (project / f"2026-01-03T18-20-00-000Z_{SID}.jsonl").write_text("\n".join(lines) + "\n")
    return root


def _claude_store(root: Path) -> Path:
    """A Claude Code session whose first answer is the CLI's own API-error notice."""
    project = root / "-srv-app"
    project.mkdir(parents=True)
    common = {"isSidechain": False, "userType": "external", "cwd": "/srv/app",
              "sessionId": SID, "version": "2.1.0"}  # fmt: skip

    def rec(kind: str, uuid: str, parent: str | None, n: int, message: Any, **more: Any) -> str:
        ts = f"2025-07-01T10:0{n}:00.000Z"
        return _line(type=kind, timestamp=ts, parentUuid=parent, uuid=uuid, message=message,
                     **common, **more)  # fmt: skip

    def said(mid: str, model: str, text: str) -> dict[str, Any]:
        return {"id": mid, "type": "message", "role": "assistant", "model": model,
                "content": [{"type": "text", "text": text}],
                "usage": {"input_tokens": 10, "output_tokens": 5}}  # fmt: skip

    notice = "API Error: 529 Overloaded"
    lines = [
        rec("user", "u1", None, 0, {"role": "user", "content": "Fix the bug."}),
        rec("assistant", "a1", "u1", 1, said("m1", "<synthetic>", notice),
            isApiErrorMessage=True),
        rec("user", "u2", "a1", 2, {"role": "user", "content": "Try again."}),
        rec("assistant", "a2", "u2", 3, said("m2", "claude-sonnet-4", "Fixed."),
            requestId="req_2"),
    ]  # fmt: skip
    (project / f"{SID}.jsonl").write_text("\n".join(lines) + "\n")
    return root


def _export(store: Path, out: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    run_export([store], out, ExportOptions(redact=False), RunOptions(workers=1))
    sft = pq.read_table(out / "data" / "sft").to_pylist()
    steps = pq.read_table(out / "data" / "steps").to_pylist()
    return sft, steps


def test_pis_aborted_and_errored_responses_are_not_trained_on(tmp_path: Path) -> None:
    sft, steps = _export(_pi_store(tmp_path / "store"), tmp_path / "out")
    [row] = sft
    # transform-messages.ts skips both when it builds the next request: the retry's context
    # is the prompt alone
    assert [(m["role"], m["content"], m["trainable"]) for m in row["messages"]] == [
        ("user", "Fix the bug.", False),
        ("assistant", "Fixed.", True),
    ]
    agent = [s for s in steps if s["source"] == "agent"]
    extras = [json.loads(s["extra"]) for s in agent]
    assert [x.get("status") for x in extras] == ["incomplete", "failed", None]  # kept, with why
    assert [x.get("not_resent") for x in extras] == ["aborted", "error", None]
    assert [len(s["tool_calls"]) for s in agent] == [0, 2, 0]
    responses = [json.loads(s["extra"])["openresponses"]["response"] for s in agent]
    assert [r["pi:stop_reason"] for r in responses] == ["aborted", "error", "stop"]


def test_claude_codes_api_error_notice_is_no_answer(tmp_path: Path) -> None:
    sft, steps = _export(_claude_store(tmp_path / "store"), tmp_path / "out")
    [row] = sft
    assert [(m["role"], m["content"], m["trainable"]) for m in row["messages"]] == [
        ("user", "Fix the bug.", False),
        ("user", "Try again.", False),
        ("assistant", "Fixed.", True),
    ]
    [notice] = [s for s in steps if s["message"] == "API Error: 529 Overloaded"]
    extra = json.loads(notice["extra"])
    assert extra["status"] == "failed" and extra["error"]["message"].startswith("API Error")
    assert extra["not_resent"] == "api_error"
    assert [s["model_name"] for s in steps if s["source"] == "agent"] == [
        "<synthetic>",
        "claude-sonnet-4",
    ]
