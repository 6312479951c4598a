"""``export --traces``: a trace per session that reads back as the Hub viewer's formats.

Claude Code, Codex and Pi sessions are copied in their agent's own shape (the viewer
reads those files as they are): ``datasets``' own agent-trace detection must name the
harness and session, and trajset's reader must read the copy back to the same tree.
Every other kind is STS: each line must read back as the documented schema
(``schemas/sts.py``).  Planted secrets are the reader contract's test (traces on).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from trajset.pipeline import ExportOptions, RunOptions, run_export, sample_store
from trajset.pipeline.outputs.traces import NATIVE
from trajset.pipeline.outputs.traces.check import trace_problems
from trajset.pipeline.stores import discover, load_unit
from trajset.schemas.session import Session
from trajset.schemas.sts import StsEnvelope, StsHeader, validate_line

from .exports import data_files
from .fixture_stores import fixtures, lay_out

FIXTURES = fixtures()
KINDS = sorted(FIXTURES)


def _export(kind: str, tmp_path: Path) -> Path:
    stores = [lay_out(f, tmp_path / f"{kind}-{i}") for i, f in enumerate(FIXTURES[kind])]
    out = tmp_path / "out"
    run_export(stores, out, ExportOptions(traces=True, store_kind=kind), RunOptions(workers=1))
    return out


def _first(path: Path) -> dict[str, object]:
    value: dict[str, object] = json.loads(path.read_bytes().splitlines()[0])
    return value


@pytest.mark.parametrize("kind", KINDS)
def test_every_kind_writes_traces_the_viewer_reads(kind: str, tmp_path: Path) -> None:
    out = _export(kind, tmp_path)
    traces = sorted((out / "traces").glob("*/*.jsonl"))  # a folder per source format
    assert traces, kind
    documents = {p.stem for p in (out / "atif").glob("*.json")}
    roles: set[str] = set()
    for path in traces:
        assert trace_problems(path) == [], path
        name = path.stem if path.stem in documents else re.sub(r"~\d+$", "", path.stem)
        assert name in documents  # named after its main document (a joined fork's file: ~n)
        stamp = _first(path)["trajset"]
        fmt = path.parent.name
        assert isinstance(stamp, dict) and stamp["source_format"] == fmt
        assert stamp["shape"] == ("native" if fmt in NATIVE else "sts")
        if fmt in NATIVE:
            continue
        lines = path.read_bytes().splitlines()
        header = StsHeader.model_validate(json.loads(lines[0]))
        assert header.id == stamp["session_id"] and header.harness == fmt
        messages = [StsEnvelope.model_validate(json.loads(x)).message for x in lines[1:]]
        roles.update(m.role for m in messages)
        called = {c.id for m in messages for c in m.toolCalls or []}
        assert {m.toolCallId for m in messages if m.toolCallId} <= called | {""}
    assert kind in NATIVE or "assistant" in roles


@pytest.mark.parametrize("kind", sorted(NATIVE))
def test_a_native_trace_is_the_agents_own_file_and_reads_back_alike(
    kind: str, tmp_path: Path
) -> None:
    from datasets.packaged_modules.json.json import parse_traces_info

    out = _export(kind, tmp_path)
    for path in sorted((out / "traces" / kind).glob("*.jsonl")):
        text = path.read_text(encoding="utf-8").splitlines()
        harness, session_id, *_ = parse_traces_info(text)
        assert harness == NATIVE[kind], path  # the viewer's own detection
        assert session_id
    # the copy of a one-file session reads back to the same tree as the store file
    store = lay_out(FIXTURES[kind][0], tmp_path / "again")
    originals = _sessions(store, kind)
    for sid, original in originals.items():
        if len(original.files) != 1:
            continue
        copies = list((out / "traces" / kind).glob("*.jsonl"))
        mine = [p for p in copies if _first(p)["trajset"]["session_id"] == sid]  # type: ignore[index]
        if not mine:
            continue
        copy = _sessions(mine[0], kind).get(sid)
        assert copy is not None and len(copy.entries) == len(original.entries), sid
        assert [len(copy.children(e.id)) for e in copy.entries] == [
            len(original.children(e.id)) for e in original.entries
        ]  # every fork kept


def _sessions(path: Path, kind: str) -> dict[str, Session]:
    return {
        s.id: s
        for u in discover([path], kind)
        for s in load_unit(u)
        if isinstance(s, Session) and not s.header.parent_session
    }


def test_sts_lines_are_checked_against_the_documented_schema() -> None:
    header = {"type": "session", "harness": "my-agent", "id": "abc123", "name": "t", "x": 1}
    assert validate_line(json.dumps(header), first=True) is None
    call = {"id": "t1", "function": {"name": "get_time", "arguments": "{}"}}
    good = {"type": "message", "message": {"role": "assistant", "content": "", "toolCalls": [call]}}
    assert validate_line(json.dumps(good), first=False) is None
    bad_args = {**call, "function": {"name": "f", "arguments": {"a": 1}}}  # an object, not text
    for wrong in (
        {"type": "message", "message": {"role": "robot", "content": ""}},
        {"type": "message", "message": {"role": "user"}},
        {
            "type": "message",
            "message": {"role": "assistant", "content": "", "toolCalls": [bad_args]},
        },
        {"type": "message", "message": {"role": "tool", "content": "", "timestamp": "noon"}},
    ):
        assert validate_line(json.dumps(wrong), first=False), wrong
    assert validate_line(json.dumps({"type": "session", "id": "x"}), first=True)  # no harness


def test_the_card_tags_traces_only_when_they_are_there(tmp_path: Path) -> None:
    plain, traced = tmp_path / "plain", tmp_path / "traced"
    run_export([sample_store()], plain, ExportOptions(), RunOptions(workers=1))
    run_export([sample_store()], traced, ExportOptions(traces=True), RunOptions(workers=1))
    card = (plain / "README.md").read_text(encoding="utf-8")
    assert "agent-traces" not in card and "### Traces" not in card
    card = (traced / "README.md").read_text(encoding="utf-8")
    assert "- agent-traces" in card and "### Traces" in card  # the recipe: test_recipes
    assert len(list((traced / "traces").glob("*/*.jsonl"))) == 6
    assert data_files(traced) == data_files(plain)  # traces change no data file


def test_validate_names_a_trace_that_does_not_read_back(tmp_path: Path) -> None:
    stamp = {"session_id": "x", "source_format": "pi", "shape": "native"}
    cases = {
        "empty.jsonl": ("", "empty trace"),
        "unnamed.jsonl": ('{"type": "session"}\n', ":1: the first line names no trajset"),
        "native.jsonl": (json.dumps({"type": "session", "trajset": stamp}) + "\n[1]\n", ":2: not a"),
        "sts.jsonl": (
            json.dumps({"type": "session", "harness": "h", "id": "x",
                        "trajset": {**stamp, "shape": "sts"}}) + "\n"
            + json.dumps({"type": "message", "message": {"role": "robot", "content": ""}}) + "\n",
            ":2: 1 validation error",
        ),
    }  # fmt: skip
    for name, (text, says) in cases.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
        problems = trace_problems(tmp_path / name)
        assert len(problems) == 1 and says in problems[0], (name, problems)
