"""The OpenCode reader against its fixtures and written databases (specs/opencode.md).

The fixture expectations are the rows of ``tests/data/upstream/opencode/SOURCE.md``.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from trajset.pipeline import ExportOptions, RunOptions, read_store, run_export
from trajset.pipeline.cli import app
from trajset.pipeline.stores import detect_kind, discover, load_unit, reader_for
from trajset.pipeline.stores.opencode.records import unwrapped
from trajset.schemas.session import Session

from .conftest import UPSTREAM, shown
from .exports import answers, export, table
from .opencode_db import OpenCodeDb, text, tool
from .round_trip import assert_round_trip
from .test_export_conformance import harbor_trajectory

OC = UPSTREAM / "opencode"
SQLITE, LEGACY = OC / "sqlite", OC / "legacy"
DB = SQLITE / "opencode.db"
CUT_PART = "prt_b98eb1725001LJSlkd3OdLsSNI.json"


def _sessions(store: Path) -> dict[str, Session]:
    return {s.header_raw["opencode:title"]: s for s in read_store(store)}


def _rows(sql: str, *args: Any) -> list[tuple[Any, ...]]:
    db = sqlite3.connect(f"{DB.resolve().as_uri()}?mode=ro&immutable=1", uri=True)
    try:
        return db.execute(sql, args).fetchall()
    finally:
        db.close()


def test_detection_units_and_the_default_location(tmp_path: Path) -> None:
    for path in (SQLITE, DB, LEGACY, LEGACY / "storage"):
        assert detect_kind(path) == "opencode", path
    wordfreq = "56a86b29df7e04f91b34f4597147578783f1d5d9"
    assert [u.key for u in discover([SQLITE])] == [  # a fork with its source, a subagent with
        f"{wordfreq} ses_394a2bd3fffeglkjhJVjlGE38T",  # its parent, each other session alone
        f"{wordfreq} ses_394be347fffeS7akXJOS8rqwRa",
        f"{wordfreq} ses_394f522ffffeCm04BUqfoQSP0W,ses_394f5135fffedkCCnJHwRkl0ok",
        f"{wordfreq} ses_3952c117fffeC61P4MEQsZkb6j,ses_395214877ffef7Q64mxmwLRS94",
        "global ses_0000d818fffevH8diISnzD4xHQ",
    ]
    [legacy] = discover([LEGACY])  # a fork and its source are read together
    assert legacy.key == "global ses_46714f21fffeyNfRCMCfNX90l7,ses_4670bca5fffePjWAQvLzY4V9qx"
    [where] = reader_for("opencode").locations
    assert where.resolve({"HOME": "/h"}) == Path("/h/.local/share/opencode")
    assert where.resolve({"HOME": "/h", "XDG_DATA_HOME": "/x"}) == Path("/x/opencode")
    assert sorted(p.name for p in SQLITE.iterdir()) == ["opencode.db", "storage"]  # none left


def test_the_database_fixture_as_its_source_md_says(tmp_path: Path) -> None:
    out = export(SQLITE, tmp_path / "out")
    manifest = json.loads((out / "manifest.json").read_text())
    c = manifest["counts"]
    assert (c["sessions_read"], c["trees"], c["trajectories"]) == (6, 6, 8)
    assert manifest["errors"] == 0
    pairs = table(out, "preferences")
    assert sorted((p["granularity"], p["kind"]) for p in pairs) == [("trajectory", "prompt"),
                                                                    ("turn", "prompt")]  # fmt: skip
    assert c["pairs_dropped_empty_side"] == 2  # the pending revert's: nothing chosen yet
    rows = table(out, "trajectories")
    by_session: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        by_session.setdefault(r["session_id"], []).append(r)
    forked = by_session["ses_3952c117fffeC61P4MEQsZkb6j"]
    [kept] = [r for r in forked if r["is_preferred"]]
    assert answers(kept)[-1].startswith("Added `--json`:") and len(forked) == 2
    [vet] = by_session["ses_0000d818fffevH8diISnzD4xHQ"]
    assert answers(vet)[-1].startswith("The `printf` analyzer")
    assert answers(vet)[0].startswith("By default `go vet`")  # ids wrapped: time decides


def test_a_fork_copy_is_merged_at_the_source_message_it_copied_last() -> None:
    s = _sessions(SQLITE)["Count words case-insensitively"]
    [fork] = s.forks()
    assert fork == "prt_c6ad41238001gsLhWzOvDcfjOb"  # the step-finish of S's 4th message
    assert s.header_raw["opencode:forks"][0]["copied"] == 4
    assert s.counts["opencode/copied_messages"] == 4
    assert "Count words case-insensitively (fork #1)" not in _sessions(SQLITE)


def test_a_pending_revert_is_a_fork_after_the_last_kept_part(tmp_path: Path) -> None:
    s = _sessions(SQLITE)["Remove the verbose flag"]
    [fork] = s.forks()
    assert s.by_id[fork].raw["item"]["type"] == "function_call_output"  # the edit call's
    assert s.current_leaf() == "ses_394a2bd3fffeglkjhJVjlGE38T:revert"
    out = export(SQLITE, tmp_path / "out")
    rows = [r for r in table(out, "trajectories") if r["session_id"] == s.id]
    [kept] = [r for r in rows if r["is_preferred"]]
    [undone] = [r for r in rows if not r["is_preferred"]]
    assert answers(kept)[-1] == "Removing the flag definition and its mention in the usage text."
    assert answers(undone)[-1].startswith("Removed `--verbose`;")
    assert undone["outcome_pass"] is False and undone["outcome_label"] == "opencode:undo"
    prompt = s.by_id["msg_c6b5d44b4001VfqOZ2lel3J5dn"].raw["item"]["content"]
    assert [p["type"] for p in prompt] == ["input_text", "input_image"]


def test_the_subagent_is_its_own_session_linked_from_the_task_call(tmp_path: Path) -> None:
    sessions = _sessions(SQLITE)
    child = sessions["Find input selection logic (@explore subagent)"]
    assert child.header.parent_session == "ses_394f522ffffeCm04BUqfoQSP0W"
    assert child.header.spawned_by == "toolu_01CzxX6Runp2PFC0D5vLCpaS"
    parent = sessions["Where input is read"]
    [link] = [e for e in parent.entries if e.type == "link"]
    assert (link.raw["session"], link.raw["call_id"]) == (child.id, child.header.spawned_by)
    out = export(SQLITE, tmp_path / "out")
    [doc] = (out / "atif").glob("ses_394f522ffffeCm04BUqfoQSP0W*.json")
    refs = [r for s in json.loads(doc.read_text())["steps"]
            for o in (s.get("observation") or {}).get("results", [])
            for r in o.get("subagent_trajectory_ref") or []]  # fmt: skip
    assert [r["session_id"] for r in refs] == [child.id]


def test_a_manual_compaction_is_one_compaction_entry_keeping_the_history() -> None:
    s = _sessions(SQLITE)["Package layout"]
    [c] = [e for e in s.entries if e.type == "compaction"]
    assert c.raw["first_kept"] == "config" and c.raw["tokens_before"] == 6350
    assert c.raw["summary"]["content"][0]["text"].startswith("## Goal")
    assert c.raw["usage"]["input_tokens"] == 6400
    assert c.raw["opencode:request"]["parts"][0] == {"id": "prt_c6b42b5e0002J0ZEPyDZhQYXn8",
                                                     "type": "compaction", "auto": False}  # fmt: skip
    assert len(s.leaves()) == 1


def test_usage_is_counted_once_per_step_finish(tmp_path: Path) -> None:
    """``Where input is read`` keeps tokens on its messages too: they are not added again."""
    out = export(SQLITE, tmp_path / "out")
    for sid in ("ses_394f522ffffeCm04BUqfoQSP0W", "ses_0000d818fffevH8diISnzD4xHQ"):
        want = 0
        for (data,) in _rows("SELECT data FROM part WHERE session_id = ?", sid):
            p = json.loads(data)
            if p["type"] == "step-finish":
                t = p["tokens"]
                want += t["input"] + t["cache"]["read"] + t["cache"]["write"]
        [row] = [r for r in table(out, "trajectories") if r["session_id"] == sid]
        assert row["total_prompt_tokens"] == want > 0


@pytest.mark.parametrize("store", [SQLITE, LEGACY], ids=["sqlite", "legacy"])
def test_every_tool_call_is_in_the_steps_and_every_document_validates(
    store: Path, tmp_path: Path
) -> None:
    out = export(store, tmp_path / "out")
    called = {c["tool_call_id"] for s in table(out, "steps") for c in s["tool_calls"] or []}
    recorded = {p["callID"] for f in store.rglob("*") for p in _parts(f) if p.get("type") == "tool"}
    assert recorded and recorded <= called
    for doc in (out / "atif").glob("*.json"):
        harbor_trajectory().model_validate_json(doc.read_text())


def _parts(f: Path) -> list[dict[str, Any]]:
    if f.name == "opencode.db":
        return [json.loads(d) for (d,) in _rows("SELECT data FROM part")]
    if f.suffix == ".json" and f.parent.parent.name == "part" and f.name != CUT_PART:
        return [json.loads(f.read_text())]
    return []


def test_the_legacy_json_store_as_its_source_md_says(tmp_path: Path) -> None:
    out = export(LEGACY, tmp_path / "out")
    rows = table(out, "trajectories")
    assert len(rows) == 2 and len(table(out, "preferences")) == 2
    [kept] = [r for r in rows if r["is_preferred"]]
    assert answers(kept)[-1] == ("Wrote `isodate.py` with `is_iso_date()` and two tests; "
                                 "`pytest` reports 2 passed.")  # fmt: skip
    assert answers(kept)[0].startswith("`^\\d{4}-(0[1-9]|1[0-2])")  # the cut answer's text
    [error] = _errors(out)
    assert error["kind"] == "truncated" and error["source"].endswith(CUT_PART)


def _errors(out: Path) -> list[dict[str, Any]]:
    import polars as pl

    return pl.read_parquet(out / "errors.parquet").to_dicts()


def test_a_session_in_the_database_and_the_json_files_is_read_once(tmp_path: Path) -> None:
    """An upgraded install: the JSON store beside the database, one session in both (its
    JSON copy edited, to show which is read) and two only in the JSON files."""
    home = shutil.copytree(SQLITE, tmp_path / "opencode")
    shutil.copytree(LEGACY / "storage", home / "storage", dirs_exist_ok=True)
    vet = "ses_0000d818fffevH8diISnzD4xHQ"
    storage = home / "storage"
    (storage / "session" / "global" / f"{vet}.json").write_text(json.dumps(
        {"id": vet, "projectID": "global", "directory": "/home/dev", "title": "go vet defaults",
         "version": "1.1.60", "time": {"created": 1786705510000, "updated": 1786708300000}}))  # fmt: skip
    for mid, data in _rows("SELECT id, data FROM message WHERE "
                                    "session_id = ?", vet):  # fmt: skip
        (storage / "message" / vet).mkdir(parents=True, exist_ok=True)
        (storage / "message" / vet / f"{mid}.json").write_text(data)
        for pid, pdata in _rows("SELECT id, data FROM part WHERE message_id = ?", mid):
            (storage / "part" / mid).mkdir(parents=True, exist_ok=True)
            (storage / "part" / mid / f"{pid}.json").write_text(pdata.replace("printf", "PRINTF"))
    out = export(home, tmp_path / "out")
    rows = table(out, "trajectories")
    assert sorted({r["session_id"] for r in rows}) == [vet, "ses_394a2bd3fffeglkjhJVjlGE38T",
        "ses_394be347fffeS7akXJOS8rqwRa", "ses_394f5135fffedkCCnJHwRkl0ok",
        "ses_394f522ffffeCm04BUqfoQSP0W", "ses_3952c117fffeC61P4MEQsZkb6j",
        "ses_46714f21fffeyNfRCMCfNX90l7"]  # fmt: skip
    [row] = [r for r in rows if r["session_id"] == vet]
    assert (
        answers(row)[-1].startswith("The `printf` analyzer") and row["total_prompt_tokens"] == 1520
    )
    counts = json.loads((out / "manifest.json").read_text())["counts"]
    assert counts["reader/opencode/json_copies_not_read"] == 1
    assert counts["reader/opencode/json_sessions_not_in_database"] == 2  # the legacy two
    [legacy] = [s for s in read_store(home) if s.id == "ses_46714f21fffeyNfRCMCfNX90l7"]
    assert legacy.header_raw["opencode:not_in_database"] is True


def test_a_truncated_file_or_a_malformed_row_is_one_error_row(tmp_path: Path) -> None:
    legacy = shutil.copytree(LEGACY, tmp_path / "legacy")
    [message] = (legacy / "storage" / "message").rglob("msg_b98ebaa20001PSM9Vd41TWGEWJ.json")
    message.write_text(message.read_text()[:40])
    run = run_export([legacy], tmp_path / "o1", ExportOptions(), RunOptions(workers=1))
    # the cut message's parts are orphans now, a row of their own
    assert sorted(e.kind for e in run.errors) == ["orphan_parts", "truncated", "truncated"]
    assert any(e.source == shown(message, legacy) for e in run.errors)
    assert run.counts["trajectories"] == 2
    data = shutil.copytree(SQLITE, tmp_path / "data")
    with sqlite3.connect(data / "opencode.db") as db:
        db.execute(
            "UPDATE part SET data = '{\"type\": \"te' WHERE id = 'prt_0000a2eb70018RtmV6yBL063nr'"
        )
    run = run_export([data], tmp_path / "o2", ExportOptions(), RunOptions(workers=1))
    [error] = run.errors
    assert error.kind == "truncated" and "prt_0000a2eb70018RtmV6yBL063nr" in error.message
    assert run.counts["trajectories"] == 8


WRITER = """
import json, os, sqlite3, sys
db = sqlite3.connect(sys.argv[1], timeout=0, isolation_level=None)  # timeout 0: never waits
sid = "ses_0000d818fffevH8diISnzD4xHQ"
print("started", flush=True)
i = 0
while not os.path.exists(sys.argv[2]):  # until the test says stop
    i += 1
    at = 1786710000000 + i * 1000
    u, a = f"msg_{(at * 4096) % 2**48:012x}w{i:013d}", f"msg_{(at * 4096 + 1) % 2**48:012x}w{i:013d}"
    db.execute("BEGIN IMMEDIATE")  # one transaction: the last turn replaced by the next one
    db.execute("DELETE FROM part WHERE message_id LIKE 'msg_%w%'")
    db.execute("DELETE FROM message WHERE id LIKE 'msg_%w%'")
    db.execute("INSERT INTO message VALUES (?,?,?,?,?)", (u, sid, at, at, json.dumps(
        {"role": "user", "time": {"created": at}, "agent": "build"})))
    db.execute("INSERT INTO part VALUES (?,?,?,?,?,?)", (f"prt_{i:012x}u{i:013d}", u, sid, at, at,
        json.dumps({"type": "text", "text": f"more {i}"})))
    db.execute("INSERT INTO message VALUES (?,?,?,?,?)", (a, sid, at + 1, at + 1, json.dumps(
        {"role": "assistant", "parentID": u, "time": {"created": at + 1}, "modelID": "m"})))
    db.execute("INSERT INTO part VALUES (?,?,?,?,?,?)", (f"prt_{i:012x}a{i:013d}", a, sid, at, at,
        json.dumps({"type": "text", "text": f"answer {i}"})))
    db.execute("COMMIT")
print("done", flush=True)
"""


def _turns(texts: list[str]) -> tuple[list[str], list[str]]:
    """The writer's turn numbers in what a path said: (asked, answered)."""
    return (
        [t.split()[1] for t in texts if t.startswith("more ")],
        [t.split()[1] for t in texts if t.startswith("answer ")],
    )


def test_a_live_database_exports_a_consistent_snapshot_and_never_blocks_the_writer(
    tmp_path: Path,
) -> None:
    """The writer replaces its turn in each transaction: a read that is not one snapshot sees
    a turn's messages without their parts, or none of them."""
    data = shutil.copytree(SQLITE, tmp_path / "opencode")
    with sqlite3.connect(data / "opencode.db") as db:
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    stop = tmp_path / "stop"
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(data / "opencode.db"), str(stop)],
                              stdout=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert writer.stdout is not None and writer.stdout.readline().strip() == "started"
        run = run_export([data], tmp_path / "out", ExportOptions(), RunOptions(workers=2))
        [unit] = [u for u in discover([data]) if u.key.startswith("global ")]
        for _ in range(60):
            [session] = load_unit(unit)
            assert isinstance(session, Session)
            said = [c.get("text", "") for e in session.entries if e.type == "item"
                    for c in e.raw["item"].get("content") or [] if isinstance(c, dict)]  # fmt: skip
            asked, answered = _turns(said)
            assert asked == answered and len(asked) == 1, (asked, answered)
    finally:
        stop.touch()
        rest, _ = writer.communicate(timeout=120)
    assert writer.returncode == 0 and rest.strip() == "done"  # never "database is locked"
    assert not run.errors
    [row] = [r for r in table(tmp_path / "out", "trajectories")
             if r["session_id"] == "ses_0000d818fffevH8diISnzD4xHQ"]  # fmt: skip
    asked, answered = _turns([m["content"] for m in row["messages"] if m["content"]])
    assert asked == answered and len(asked) == 1


def test_a_2x_database_is_refused_and_the_json_beside_it_is_read(tmp_path: Path) -> None:
    home = shutil.copytree(LEGACY, tmp_path / "opencode")
    with sqlite3.connect(home / "opencode.db") as db:
        db.execute("CREATE TABLE session_v2 (id TEXT PRIMARY KEY, fork_session_id TEXT)")
        db.execute("CREATE TABLE session_message (id TEXT, session_id TEXT, type TEXT, seq INT)")
    assert detect_kind(home) == "opencode"
    run = run_export([home], tmp_path / "out", ExportOptions(), RunOptions(workers=1))
    unsupported = [e for e in run.errors if e.kind == "unsupported"]
    assert len(unsupported) == 1 and "OpenCode 2.x" in unsupported[0].message
    assert run.counts["trajectories"] == 2  # the JSON sessions


def test_a_chain_of_forks_hangs_each_on_its_own_source(tmp_path: Path) -> None:
    oc = OpenCodeDb(tmp_path / "opencode")
    s = oc.session("Plan")
    p1 = oc.user(s, "Plan the parser.")
    oc.assistant(s, p1, text("Step one: tokens."))
    oc.assistant(s, oc.user(s, "Now the lexer."), text("Lexer first."))
    f1 = oc.fork(s, 2, "Plan (fork #1)")
    oc.assistant(f1, oc.user(f1, "Now the grammar."), text("Grammar first."))
    f2 = oc.fork(f1, 3, "Plan (fork #2)")  # f1's prompt copied, then a new answer to it
    oc.assistant(f2, "msg", text("Grammar, differently."))
    alone = oc.session("Plan (fork #3)")  # a title like a fork's, copies of nothing
    oc.assistant(alone, oc.user(alone, "Plan the parser."), text("Elsewhere."))
    sessions = {t.id: t for t in read_store(oc.folder)}
    assert set(sessions) == {s, alone}
    tree = sessions[s]
    assert [seg["source"] for seg in tree.header_raw["opencode:forks"]] == [s, f1]
    assert len(tree.leaves()) == 3 and len(tree.forks()) == 2
    rows = table(export(oc.folder, tmp_path / "out"), "trajectories")
    [kept] = [r for r in rows if r["session_id"] == s and r["is_preferred"]]
    assert answers(kept) == ["Step one: tokens.", "Grammar, differently."]


def test_rejections_aborts_errors_and_an_undo_to_a_prompt(tmp_path: Path) -> None:
    oc = OpenCodeDb(tmp_path / "opencode")
    s = oc.session("Edge cases")
    p1 = oc.user(s, "Delete the build folder.")
    refused = "Error: The user rejected permission to use this specific tool call with the following feedback: use git clean instead"
    oc.assistant(s, p1, tool("bash", "toolu_1", "error", error=refused, time={"start": 1}),
                 error={"name": "MessageAbortedError", "data": {"message": "aborted"}},
                 finish=False)  # fmt: skip
    p2 = oc.user(s, "Try again with git clean.")
    a2 = oc.assistant(s, p2, tool("bash", "toolu_2", "running"), finish=False,
                 error={"name": "APIError", "data": {"message": "overloaded"}})  # fmt: skip
    p3 = oc.user(s, "Are you there?")
    oc.assistant(s, p3, text("Yes."))
    with oc.connect() as db:
        db.execute("UPDATE session SET revert = ? WHERE id = ?",
                   (json.dumps({"messageID": p3, "snapshot": "abc"}), s))  # fmt: skip
    [session] = read_store(oc.folder)
    [decision] = [e for e in session.entries if e.type == "decision"]
    assert (decision.raw["verdict"], decision.raw["reason"]) == ("reject", "use git clean instead")
    [run] = [e for e in session.entries if e.type == "run"]
    assert (run.raw["reason"], run.raw["run_id"]) == ("aborted", p1)
    fails = [e.raw for e in session.entries if e.type == "outcome"]
    assert [(o["label"], o["pass"]) for o in fails] == [("opencode:error", False)] * 2 + [
        ("opencode:undo", False)]  # fmt: skip
    statuses = [e.raw["status"] for e in session.entries if e.type == "response"]
    assert statuses == ["cancelled", "failed", "completed"]
    assert session.forks() == [f"{a2}:outcome"]  # the undo goes back to before the prompt
    out = export(oc.folder, tmp_path / "out")
    [kept] = [r for r in table(out, "trajectories") if r["is_preferred"]]
    assert "Are you there?" not in json.dumps(kept["messages"])


def test_ids_are_unwrapped_near_their_message_time() -> None:
    before = 2**36 - 10  # ms just before the 2026-08-14 wrap, and just after
    old, new = f"prt_{(before * 4096) % 2**48:012x}x", f"prt_{((before + 20) * 4096) % 2**48:012x}x"
    assert new < old and unwrapped(new, before) > unwrapped(old, before)
    assert unwrapped("prt_nothex", before) == -1


def test_inspect_convert_and_the_round_trip(tmp_path: Path) -> None:
    shown = CliRunner().invoke(app, ["inspect", str(SQLITE)]).output
    assert "fork " in shown and "opencode/forks_merged" in shown
    for store in (SQLITE, LEGACY):
        out = export(store, tmp_path / store.name)
        assert assert_round_trip(store, out, tmp_path / f"rt-{store.name}") == len(
            list((out / "atif").glob("*.json"))
        )


def test_every_unit_loads_without_an_error() -> None:
    for unit in discover([SQLITE]):
        assert all(isinstance(s, Session) for s in load_unit(unit))


def test_the_data_folders_other_contents_are_one_skipped_row_each(tmp_path: Path) -> None:
    """Snapshots (bare git repositories), logs and diffs are named once each, not walked."""
    home = shutil.copytree(SQLITE, tmp_path / "opencode")
    objects = home / "snapshot" / "56a86b29" / "objects"
    for i in range(40):
        (objects / f"{i:02x}").mkdir(parents=True)
        (objects / f"{i:02x}" / "0123456789").write_bytes(b"x")
    (home / "log").mkdir()
    (home / "log" / "2026-02-17.log").write_text("INFO started\n")
    (home / "auth.json").write_text("{}")
    out = export(home, tmp_path / "out")
    skipped = json.loads((out / "manifest.json").read_text())["skipped"]
    assert [(Path(s["path"]).relative_to(home.name).as_posix(), s["reason"]) for s in skipped] == [
        ("auth.json", "not a session file of this store"),
        ("log", "OpenCode's logs, not sessions; not read"),
        ("snapshot", "OpenCode's file snapshots (git repositories), not sessions; not read"),
        ("storage/session_diff", "OpenCode's per-session diffs, not sessions; not read"),
    ]


def test_a_message_time_beyond_year_9999_is_noted_and_the_session_exports(
    tmp_path: Path,
) -> None:
    """A creation time no timestamp holds was written as 1970 without a word."""
    store = shutil.copytree(SQLITE, tmp_path / "store")
    [(mid, sid)] = _rows("SELECT id, session_id FROM message ORDER BY id LIMIT 1")
    db = sqlite3.connect(store / "opencode.db")
    with db:
        db.execute("UPDATE message SET time_created = ? WHERE id = ?", (10**17, mid))
    db.close()
    run = run_export([store], tmp_path / "out", ExportOptions(), RunOptions(workers=1))
    [row] = [e for e in run.errors if e.kind == "out_of_range"]
    assert row.session_id == sid and f"time of {mid}" in row.message
    assert "100000000000000000 is not a time in years 1 to 9999" in row.message
    assert run.counts["reader/values_out_of_range"] == 1
    assert sid in {r["session_id"] for r in table(tmp_path / "out", "trajectories")}


def test_each_model_call_is_one_assistant_message_with_its_usage(tmp_path: Path) -> None:
    """Found in issue 62: a step's tool output was written before its ``step-finish``, so each
    model call that called tools became two assistant messages: the calls without usage, then
    an empty, trainable one holding the usage (6 of 23 trainable messages in this database).
    A step's results now follow its response."""
    out = export(SQLITE, tmp_path / "out")
    said = [
        m
        for r in table(out, "sft")
        for m in r["messages"]
        if m["role"] == "assistant" and m["trainable"]
    ]
    assert said and all(m["content"] or m["tool_calls"] or m["reasoning_content"] for m in said)
    steps = {(s["session_id"], s["entry_id"]): s for s in table(out, "steps")}
    calls = [s for s in steps.values() if s["source"] == "agent" and s["tool_calls"]]
    bare = [s["session_id"] for s in calls if not s["prompt_tokens"]]
    # but one: the pending /undo inside a model call keeps what ran before the undone part
    # (the edit and its result); the call's usage is on the undone branch's response
    assert len(calls) > 8 and bare == ["ses_394a2bd3fffeglkjhJVjlGE38T"]
    assert not [s for s in steps.values() if s["source"] == "agent" and not s["message"]
                and not s["tool_calls"] and not s["reasoning_content"]]  # fmt: skip


def test_a_116_message_of_two_steps_with_a_patch_part_is_two_model_calls(tmp_path: Path) -> None:
    """OpenCode 1.16 writes one assistant message per turn: ``step-start``, the call, its
    ``step-finish {tokens}``, the step's ``patch`` (the files it changed), then the next
    step. No permissive real 1.16 database exists; this one follows those upstream shapes
    (``packages/opencode/src/session/processor.ts``). Two model calls, each one assistant
    message with its usage; the patch is bookkeeping, no message."""
    oc = OpenCodeDb(tmp_path / "opencode")
    s = oc.session("Rename")
    p = oc.user(s, "Rename main.py to app.py.")
    finish = {"type": "step-finish", "reason": "tool-calls", "cost": 0.002,
              "tokens": {"input": 120, "output": 12, "reasoning": 0, "cache": {"read": 0, "write": 0}}}  # fmt: skip
    done = {**finish, "reason": "stop", "tokens": {**finish["tokens"], "input": 160}}
    patch = {"type": "patch", "hash": "4b825dc6", "files": ["/home/dev/wordfreq/app.py"]}
    oc.assistant(s, p, tool("bash", "toolu_9", output="", metadata={"exit": 0}), finish,
                 patch, {"type": "step-start"}, text("Renamed."), done, finish=False)  # fmt: skip
    out = export(oc.folder, tmp_path / "out")
    [row] = table(out, "sft")
    assert [(m["role"], m["content"], m["trainable"]) for m in row["messages"]] == [
        ("user", "Rename main.py to app.py.", False),
        ("assistant", "", True), ("tool", "", False),
        ("assistant", "Renamed.", True),
    ]  # fmt: skip
    agent = [x for x in table(out, "steps") if x["source"] == "agent"]
    assert [x["prompt_tokens"] for x in agent] == [120, 160]
