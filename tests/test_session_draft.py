"""The session builder (``SessionDraft``) and what it fixed: problems charged to the session
they belong to, and identities a converter meets that the cheap pass before the run missed."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from trajset.pipeline import ExportOptions, RunOptions, run_export
from trajset.pipeline.errors import SessionReadError
from trajset.pipeline.stores import SessionDraft, discover, identities
from trajset.pipeline.stores.draft import EPOCH, FORMAT, PAYLOAD
from trajset.schemas.session import Issue

from .fixture_stores import met
from .planting import leaks

UPSTREAM = Path(__file__).parent / "data" / "upstream"


def _draft() -> SessionDraft:
    return SessionDraft("s1", "/store/s1.jsonl", "toy", "toy", "1.0")


def test_a_draft_writes_the_header_and_numbers_entries_as_lines() -> None:
    d = _draft()
    d.members["cwd"] = "/srv/app"
    d.add("item", "e1", None, "2026-11-01T10:00:00Z", item=_text("user", "hi"))
    d.add("item", "e2", "e1", item=_text("assistant", "hello"))
    s = d.finish()
    assert s.header_raw == {
        "type": "session", "format": FORMAT, "id": "s1", "created_at": "2026-11-01T10:00:00Z",
        "payload": PAYLOAD, "harness": {"name": "toy", "version": "1.0"}, "cwd": "/srv/app",
    }  # fmt: skip
    assert [(e.id, e.line, e.raw["ts"]) for e in s.entries] == [
        ("e1", 2, "2026-11-01T10:00:00Z"),
        ("e2", 3, "2026-11-01T10:00:00Z"),  # no time of its own: the one stamped before
    ]
    assert s.source == "/store/s1.jsonl" and s.source_format == "toy"


def test_an_invalid_time_keeps_the_time_before_it() -> None:
    d = _draft()
    assert d.ts == EPOCH
    d.add("item", "e1", None, "2026-11-01T10:00:00Z", item=_text("user", "a"))
    d.add("item", "e2", "e1", "yesterday", item=_text("user", "b"))
    d.add("item", "e3", "e2", 1234, item=_text("user", "c"))
    assert [e["ts"] for e in d.entries] == ["2026-11-01T10:00:00Z"] * 3


def test_append_writes_a_linear_log_with_numbered_ids() -> None:
    d = _draft()
    assert d.append("item", None, item=_text("user", "a")) == "s1-0001"
    assert d.append("item", None, item=_text("assistant", "b")) == "s1-0002"
    assert [e["parent"] for e in d.entries] == [None, "s1-0001"]


def test_the_leaf_label_names_the_current_leaf_unless_it_is_the_last_entry() -> None:
    d = _draft()
    d.add("item", "a", None, item=_text("user", "q"))
    d.add("item", "b", "a", item=_text("assistant", "one"))
    d.add("item", "c", "a", item=_text("assistant", "two"))
    d.label_leaf("c")
    assert len(d.entries) == 3  # the last entry is found without a label
    d.label_leaf("b")
    assert d.last == {"type": "label", "id": "c:leaf", "parent": "c", "ts": EPOCH,
                      "target": "b", "label": "leaf"}  # fmt: skip
    assert d.finish().current_leaf() == "b"


def test_notes_become_the_sessions_issues_and_are_counted() -> None:
    d = _draft()
    d.add("item", "a", None, item=_text("user", "q"))
    d.issues.append(_issue())
    d.note(-5, "usage.input", 7, "a count")
    s = d.finish()
    assert [(i.kind, i.line, i.source) for i in s.issues] == [
        ("incomplete", None, "x"),
        ("out_of_range", 7, "/store/s1.jsonl"),
    ]
    assert "usage.input: -5 is not a count" in s.issues[1].message
    assert s.counts == {"values_out_of_range": 1}


def test_an_invalid_entry_is_a_conversion_error_naming_it() -> None:
    d = _draft()
    d.add("item", "a", None, item={"type": "message", "role": 5})
    with pytest.raises(SessionReadError, match=r"entry 'a'") as caught:
        d.finish()
    assert caught.value.session_id == "s1" and caught.value.source == "/store/s1.jsonl"


def test_identities_met_are_kept_once_in_order() -> None:
    d = _draft()
    for kind, value in [("workdir", "/srv/a"), ("branch", None), ("workdir", "/srv/a"),
                        ("branch", "feat/x"), ("user", "  ")]:  # fmt: skip
        d.meet(kind, value)
    d.add("item", "a", None, item=_text("user", "q"))
    assert d.finish().met == [("workdir", "/srv/a"), ("branch", "feat/x")]


def test_a_childs_value_out_of_range_is_the_childs_error_row(tmp_path: Path) -> None:
    """Found in review: OpenCode wrote every tree of a unit before finishing any session,
    and out-of-range notes travelled through a context variable, so a subagent child's
    ``tokens.input = -5`` was reported under its parent's session id."""
    store = shutil.copytree(UPSTREAM / "opencode" / "sqlite", tmp_path / "store")
    child, parent = "ses_394f5135fffedkCCnJHwRkl0ok", "ses_394f522ffffeCm04BUqfoQSP0W"
    db = sqlite3.connect(store / "opencode.db")
    with db:
        rows = db.execute("SELECT id, data FROM part WHERE session_id = ?", (child,)).fetchall()
        [(pid, data)] = [r for r in rows if json.loads(r[1]).get("type") == "step-finish"][:1]
        part = json.loads(data)
        part["tokens"]["input"] = -5
        db.execute("UPDATE part SET data = ? WHERE id = ?", (json.dumps(part), pid))
    db.close()
    run = run_export([store], tmp_path / "out", ExportOptions(), RunOptions(workers=1))
    [row] = [e for e in run.errors if e.kind == "out_of_range"]
    assert row.session_id == child != parent
    assert "input: -5 is not a count" in row.message


#: the folder and branch a Claude Code session moves to halfway (``_moved_claude_store``)
LATER = "/srv/acme-later/app", "feature/later-branch"


def _moved_claude_store(root: Path) -> Path:
    """A Claude Code project whose session moves halfway to another folder and branch."""
    project = root / "-srv-acme-app"
    src = UPSTREAM / "claude-code" / "synthetic-rewind" / "dag_compact_after_rewind.jsonl"
    lines = src.read_text(encoding="utf-8").splitlines()
    moved = []
    for n, line in enumerate(lines):
        record = json.loads(line)
        if n >= len(lines) // 2 and "cwd" in record:
            record["cwd"], record["gitBranch"] = LATER
        moved.append(json.dumps(record))
    project.mkdir(parents=True)
    (project / src.name).write_text("\n".join(moved) + "\n", encoding="utf-8")
    return root


def test_every_cwd_and_branch_of_a_claude_session_is_numbered(tmp_path: Path) -> None:
    """Found in review: the Claude Code reader declares each record's ``cwd`` and
    ``gitBranch`` an identity, but read only the first record that had one, so a session
    that moved on (``cd``, a new branch) wrote the later folder and branch verbatim."""
    store = _moved_claude_store(tmp_path / "store")
    units = discover([store])
    assert {("workdir", LATER[0]), ("branch", LATER[1])} <= {
        (i.kind, i.value) for i in identities(units)
    }
    run = run_export([store], tmp_path / "out", ExportOptions(), RunOptions(workers=1))
    assert not leaks(tmp_path / "out", list(LATER), run.errors, prefix=None)


def test_every_identity_a_converter_meets_was_read_before_the_run(tmp_path: Path) -> None:
    """The builder's record of identities (``Session.met``) is the oracle: what a reader met
    while converting a store must be among what its ``identities`` read cheaply, or the run
    could not number it (checked on the fixtures that hold identities of each kind, and on
    a Claude Code session that moves to another folder and branch halfway)."""
    stores = [
        _moved_claude_store(tmp_path / "moved"),
        UPSTREAM / "claude-code",
        UPSTREAM / "codex" / "real" / "codemie-code",
        UPSTREAM / "gemini-cli" / "synthetic" / "gemini-home",
        UPSTREAM / "pi" / "real" / "teich",
        UPSTREAM / "opencode" / "sqlite",
        UPSTREAM / "einox" / "synthetic" / "data",
        UPSTREAM / "suga" / "synthetic-export",
    ]
    for store in stores:
        units = discover([store])
        read = {(i.kind, i.value.strip()) for i in identities(units)}
        found = {(i.kind, i.value.strip()) for i in met(units)}
        assert found, store
        assert found <= read, (store, sorted(found - read)[:5])


def _text(role: str, text: str) -> dict[str, object]:
    kind = "output_text" if role == "assistant" else "input_text"
    return {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}


def _issue() -> Issue:
    return Issue("incomplete", None, "a gap", "x")
