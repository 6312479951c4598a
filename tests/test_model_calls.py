"""One assistant message per model call, as the agent lived it, in real files of each version.

Where a store puts a model call's usage, calls and results differs by agent version; these
are the files (real ones where a permissive one exists, else written here from the upstream
shapes named in each test) whose boundaries earlier readers got wrong.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .conftest import UPSTREAM
from .exports import export, only_session, table

CODEX, GEMINI = UPSTREAM / "codex" / "real", UPSTREAM / "gemini-cli" / "real"


def _assistant(row: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in row["messages"] if m["role"] == "assistant"]


def _answered(row: dict[str, Any]) -> bool:
    """Every call is followed, before the next assistant message, by its tool message."""
    msgs = row["messages"]
    for i, m in enumerate(msgs):
        for call in m["tool_calls"] or []:
            after = []
            for x in msgs[i + 1 :]:
                if x["role"] == "assistant":
                    break
                after.append(x.get("tool_call_id"))
            if call["id"] not in after:
                return False
    return True


# --------------------------------------------------------------------------- Codex


def test_codex_047_writes_usage_before_the_calls_items(tmp_path: Path) -> None:
    """0.47: ``token_count``, then the call's ``reasoning`` and ``function_call`` items."""
    store = CODEX / "ai-sessions"
    out = export(store, tmp_path / "out")
    [row] = table(out, "sft")
    said = _assistant(row)
    assert len(said) == 21 and all(m["trainable"] for m in said)
    assert sum(bool(m["tool_calls"]) for m in said) == 18 and _answered(row)
    agent = [s for s in table(out, "steps") if s["source"] == "agent"]
    assert len(agent) == 21 and all(s["prompt_tokens"] is not None for s in agent)
    [file] = store.rglob("rollout-*.jsonl")
    lines = [json.loads(x) for x in file.read_text().splitlines()]
    counts = [x["payload"]["info"] for x in lines if x["payload"].get("type") == "token_count"]
    total = [i for i in counts if i][-1]["total_token_usage"]
    [t] = table(out, "trajectories")
    assert (t["total_prompt_tokens"], t["total_completion_tokens"], t["total_cached_tokens"]) == (
        total["input_tokens"], total["output_tokens"], total["cached_input_tokens"],
    )  # fmt: skip
    # the last answer keeps its own time, not the one of what followed it
    answer = next(x for x in lines if x["payload"].get("role") == "assistant")
    first_answer = next(s for s in agent if s["message"])
    assert first_answer["timestamp"].startswith(answer["timestamp"][:19])


def _rollout(tmp_path: Path, lines: list[dict[str, Any]]) -> Path:
    store = tmp_path / "sessions" / "2026" / "09" / "01"
    store.mkdir(parents=True)
    name = "rollout-2026-09-01T10-00-00-019f0000-0000-7000-8000-000000000001.jsonl"
    (store / name).write_text("".join(json.dumps(x) + "\n" for x in lines))
    return tmp_path / "sessions"


def _line(n: int, kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {"timestamp": f"2026-09-01T10:00:{n:02d}.000Z", "type": kind, "payload": payload}


def _usage(last: int, total: int) -> dict[str, Any]:
    def u(n: int) -> dict[str, int]:
        return {"input_tokens": n, "cached_input_tokens": 0, "output_tokens": 10,
                "reasoning_output_tokens": 0, "total_tokens": n + 10}  # fmt: skip

    return {
        "type": "token_count",
        "info": {"last_token_usage": u(last), "total_token_usage": u(total)},
    }


META = _line(0, "session_meta", {"id": "019f0000-0000-7000-8000-000000000001", "cwd": "/w",
                                 "cli_version": "0.146.0", "originator": "codex_cli_rs",
                                 "timestamp": "2026-09-01T10:00:00.000Z"})  # fmt: skip


def test_codex_0140_writes_usage_after_the_tool_outputs(tmp_path: Path) -> None:
    """0.140+: items, outputs, then ``token_count`` (``codex-rs/core/src/session/turn.rs``
    emits it once pending tools resolve); ``tool_search_call``/``tool_search_output``."""
    prompt = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Find the clock tool."}]}  # fmt: skip
    search = {"type": "tool_search_call", "call_id": "ts1", "status": "completed",
              "execution": "client", "arguments": {"query": "clock", "limit": 1}}  # fmt: skip
    found = {"type": "tool_search_output", "call_id": "ts1", "status": "completed", "execution": "client",
             "tools": [{"type": "function", "name": "now", "parameters": {"type": "object"}}]}  # fmt: skip
    call = {"type": "function_call", "call_id": "c1", "name": "now", "arguments": "{}"}
    output = {"type": "function_call_output", "call_id": "c1", "output": "10:00"}
    answer = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "It is 10:00."}]}  # fmt: skip
    store = _rollout(tmp_path, [
        META,
        _line(1, "event_msg", {"type": "task_started", "turn_id": "t1"}),
        _line(1, "event_msg", {"type": "user_message", "message": "Find the clock tool."}),
        _line(1, "response_item", prompt),
        _line(2, "response_item", search), _line(2, "response_item", found),
        _line(2, "event_msg", _usage(100, 100)),
        _line(3, "response_item", call), _line(3, "response_item", output),
        _line(3, "event_msg", _usage(150, 250)),
        _line(4, "response_item", answer), _line(4, "event_msg", _usage(160, 410)),
        _line(4, "event_msg", {"type": "task_complete", "turn_id": "t1"}),
    ])  # fmt: skip
    out = export(store, tmp_path / "out")
    [row] = table(out, "sft")
    assert [(m["role"], m["content"], [c["function"]["name"] for c in m["tool_calls"] or []])
            for m in row["messages"]] == [
        ("user", "Find the clock tool.", []),
        ("assistant", "", ["tool_search"]), ("tool", '[{"type":"function","name":"now","parameters":{"type":"object"}}]', []),
        ("assistant", "", ["now"]), ("tool", "10:00", []),
        ("assistant", "It is 10:00.", []),
    ]  # fmt: skip
    call = row["messages"][1]["tool_calls"][0]["function"]
    assert json.loads(call["arguments"]) == {"query": "clock", "limit": 1}
    agent = [s for s in table(out, "steps") if s["source"] == "agent"]
    assert [s["prompt_tokens"] for s in agent] == [100, 150, 160]


def test_codex_desktop_image_prompt_is_one_message(tmp_path: Path) -> None:
    """Desktop 0.104: the prompt's item wraps its image in ``<image>``/``</image>`` text parts,
    its ``user_message`` event carries the image without them (and here comes first, before
    ``task_started``, as 0.146 writes it)."""
    png = "data:image/png;base64,iVBORw0KGgo="
    item = {"type": "message", "role": "user", "content": [
        {"type": "input_text", "text": "What is on this screen?"}, {"type": "input_text", "text": "<image>"},
        {"type": "input_image", "image_url": png}, {"type": "input_text", "text": "</image>"}]}  # fmt: skip
    answer = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "A login form."}]}  # fmt: skip
    store = _rollout(tmp_path, [
        META,
        _line(1, "event_msg", {"type": "user_message", "message": "What is on this screen?", "images": [png]}),
        _line(1, "event_msg", {"type": "task_started", "turn_id": "t1"}),
        _line(1, "response_item", item),
        _line(2, "response_item", answer), _line(2, "event_msg", _usage(90, 90)),
        _line(2, "event_msg", {"type": "task_complete", "turn_id": "t1"}),
    ])  # fmt: skip
    out = export(store, tmp_path / "out")
    [row] = table(out, "sft")
    users = [m["content"] for m in row["messages"] if m["role"] == "user"]
    assert len(users) == 1 and users[0].startswith("What is on this screen?<image>[image: ")
    assert row["n_user_turns"] == 1


def test_codex_0146_records_that_are_no_model_output_stay_extensions(tmp_path: Path) -> None:
    store = CODEX / "agent-sessions"
    kinds = {e.type for e in only_session(store).entries}
    assert {"codex:world_state", "codex:inter_agent_communication_metadata",
            "codex:thread_settings_applied", "codex:sub_agent_activity"} <= kinds  # fmt: skip
    # a message between agents is delivered to the thread, not said by its model
    delivered = [e.raw for e in only_session(store).entries if e.type == "item"
                 and e.raw["item"].get("type") == "codex:agent_message"]  # fmt: skip
    assert delivered and all("response" not in e for e in delivered)
    out = export(store, tmp_path / "out")
    said = [m for r in table(out, "sft") for m in _assistant(r) if m["trainable"]]
    assert said and all(m["content"] or m["tool_calls"] or m["reasoning_content"] for m in said)


def test_a_codex_call_the_rollout_never_answers_gets_the_output_codex_sends(tmp_path: Path) -> None:
    """Codex puts an ``aborted`` output after each call without one before its next request
    (``ensure_call_outputs_present``); a call at the end of the path stays as it is."""
    out = export(UPSTREAM / "codex" / "upstream-synthetic" / "codemie-code" / "turn-spawn-skill.jsonl",
                 tmp_path / "out")  # fmt: skip
    [row] = table(out, "sft")
    shape = [
        (m["role"], m["content"], [c["id"] for c in m["tool_calls"] or []]) for m in row["messages"]
    ]
    assert shape[3:] == [("assistant", "", ["call_spawn1"]), ("tool", "aborted", []),
                         ("assistant", "", ["call_wait1"])]  # fmt: skip


# --------------------------------------------------------------------------- Gemini CLI


def test_gemini_calls_appended_to_one_record_are_their_own_model_calls(tmp_path: Path) -> None:
    """``recordToolCalls`` appends a call made without new thoughts to the last ``gemini``
    record: record ``1c56e562`` holds a read, then (10 s later) a write that copies what was
    read, then another read."""
    store = GEMINI / "codemie-5b959dae"
    out = export(store, tmp_path / "out")
    [row] = table(out, "sft")
    msgs = row["messages"]
    start = next(i for i, m in enumerate(msgs) if m["content"].startswith("Make a copy of"))
    names = [(m["role"], [c["function"]["name"] for c in m["tool_calls"] or []])
             for m in msgs[start + 1 : start + 7]]  # fmt: skip
    assert names == [("assistant", ["read_file"]), ("tool", []), ("assistant", ["write_file"]),
                     ("tool", []), ("assistant", ["read_file"]), ("tool", [])]  # fmt: skip
    assert _answered(row)
    [file] = store.rglob("*.json")
    records = json.loads(file.read_text())["messages"]
    agent = [s for s in table(out, "steps") if s["source"] == "agent"]
    # a model call per gemini record, and the two calls appended to 1c56e562
    assert len(agent) == sum(r["type"] == "gemini" for r in records) + 2 == 13
    # usage: each record's own, once; the appended calls' was given to no record
    [t] = table(out, "trajectories")
    assert t["total_prompt_tokens"] == sum(r["tokens"]["input"] for r in records if r.get("tokens"))
    first = next(s for s in agent if "read_file-1764625691235" in s["extra"])
    assert first["prompt_tokens"] == 11826


def test_a_function_response_written_as_a_user_record_is_a_tool_message(tmp_path: Path) -> None:
    out = export(GEMINI / "vct-d6f69999", tmp_path / "out")
    [row] = table(out, "sft")
    [tool] = [m for m in row["messages"] if m["role"] == "tool"]
    assert tool["content"].startswith("--- ") and "[Function Response" not in tool["content"]
    assert row["n_user_turns"] == 1  # the person typed one prompt


# --------------------------------------------------------------------------- Pi


def test_pi_answers_calls_a_user_message_interrupted_as_pi_does(tmp_path: Path) -> None:
    """``transform-messages.ts`` sends ``No result provided`` (an error) for each call that
    a user message or the next answer left without a result."""
    sid = "0199a1b2-8888-7000-8000-000000000001"
    project = tmp_path / "store" / "--srv-app--"
    project.mkdir(parents=True)
    ts = "2026-01-03T18:20:{:02d}.000Z"

    def msg(mid: str, parent: str | None, n: int, **m: Any) -> str:
        return json.dumps(
            {
                "type": "message",
                "id": mid,
                "parentId": parent,
                "timestamp": ts.format(n),
                "message": m,
            }
        )

    lines = [
        json.dumps({"type": "session", "version": 3, "id": sid, "timestamp": ts.format(0), "cwd": "/srv/app"}),
        msg("u1", None, 1, role="user", content=[{"type": "text", "text": "Run it."}]),
        msg("a1", "u1", 2, role="assistant", model="m", stopReason="toolUse",
            content=[{"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "make"}}]),
        msg("u2", "a1", 3, role="user", content=[{"type": "text", "text": "Stop, where were we?"}]),
        msg("a2", "u2", 4, role="assistant", model="m", stopReason="stop", content=[{"type": "text", "text": "At the build."}]),
    ]  # fmt: skip
    (project / f"2026-01-03T18-20-00-000Z_{sid}.jsonl").write_text("\n".join(lines) + "\n")
    out = export(tmp_path / "store", tmp_path / "out")
    [row] = table(out, "sft")
    assert [(m["role"], m["content"]) for m in row["messages"]] == [
        ("user", "Run it."), ("assistant", ""), ("tool", "No result provided"),
        ("user", "Stop, where were we?"), ("assistant", "At the build."),
    ]  # fmt: skip
    [t] = table(out, "trajectories")
    assert t["n_failed_tool_calls"] == 1


# --------------------------------------------------------------------------- totals


def test_a_paths_totals_are_the_stores_own_across_compactions(tmp_path: Path) -> None:
    """A trajectory's totals count every model call on its path, every context window and
    the compactions' summarising calls included: a Codex rollout's last
    ``total_token_usage``, the sum of a real Pi session's responses (two compactions)."""
    codex = UPSTREAM / "codex" / "synthetic" / "compacted"
    [file] = codex.rglob("rollout-*.jsonl")
    counts = [json.loads(x)["payload"] for x in file.read_text().splitlines()]
    total = [p["info"] for p in counts if p.get("type") == "token_count" and p.get("info")][-1]
    want = total["total_token_usage"]
    [t] = table(export(codex, tmp_path / "codex"), "trajectories")
    assert (t["total_prompt_tokens"], t["total_completion_tokens"], t["total_cached_tokens"]) == (
        want["input_tokens"], want["output_tokens"], want["cached_input_tokens"],
    )  # fmt: skip
    pi = UPSTREAM / "pi" / "real" / "pi-mono"
    [file] = pi.rglob("*.jsonl")
    said = [json.loads(x).get("message") or {} for x in file.read_text().splitlines()]
    usage = [m["usage"] for m in said if m.get("role") == "assistant" and m.get("usage")]
    [t] = table(export(pi, tmp_path / "pi"), "trajectories")
    assert t["total_prompt_tokens"] == sum(
        u["input"] + u["cacheRead"] + u["cacheWrite"] for u in usage
    )
    assert t["total_completion_tokens"] == sum(u["output"] for u in usage)
    assert t["total_cost_usd"] == pytest.approx(sum(u["cost"]["total"] for u in usage))
