"""One damaged input is one error row (issue: nothing lost without a row): the export
finishes, every other session is exported, and the damage is named."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from trajset.pipeline import ExportOptions, RunOptions, run_export
from trajset.pipeline.stores import READERS

from .fixture_stores import lay_out

TEXT_KEYS = ("text", "content", "message", "output", "prompt", "displayContent")


def _plant(value: Any, done: list[bool]) -> Any:
    """``value`` with `` \\ud83d end`` (half of an emoji) appended to its first text field."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if not done and k in TEXT_KEYS and isinstance(v, str) and len(v) > 3:
                v, done[:] = v + " \ud83d end", [True]
            out[k] = _plant(v, done)
        return out
    if isinstance(value, list):
        return [_plant(v, done) for v in value]
    return value


def plant_surrogate(store: Path) -> Path:
    """The first session file of ``store`` with a lone surrogate written as a JSON escape."""
    for f in sorted(p for p in store.rglob("*") if p.suffix in (".jsonl", ".json")):
        text = f.read_text(encoding="utf-8")
        done: list[bool] = []
        if f.suffix == ".json":
            f.write_text(json.dumps(_plant(json.loads(text), done)))
        else:
            lines = [json.dumps(_plant(json.loads(x), done)) if x.strip() and not done else x
                     for x in text.splitlines()]  # fmt: skip
            f.write_text("\n".join(lines) + "\n")
        if done:
            assert "\\ud83d" in f.read_text()
            return f
    raise AssertionError(f"no text field in {store}")


@pytest.mark.parametrize("redact", [True, False], ids=["redacted", "no-redact"])
@pytest.mark.parametrize("kind", ["claude-code", "codex", "gemini-cli", "pi"])
def test_a_lone_surrogate_is_one_row_and_the_session_is_exported(
    kind: str, redact: bool, tmp_path: Path
) -> None:
    fixture = READERS[kind].fixtures[0]
    clean = run_export([lay_out(fixture, tmp_path / "a")], tmp_path / "o1", ExportOptions(),
                       RunOptions(workers=1))  # fmt: skip
    store = lay_out(fixture, tmp_path / "b")
    plant_surrogate(store)
    run = run_export([store], tmp_path / "o2", ExportOptions(redact=redact), RunOptions(workers=1))
    rows = pq.read_table(tmp_path / "o2" / "errors.parquet").to_pylist()
    bad = [r for r in rows if r["kind"] == "bad_character"]
    assert len(bad) == 1 and "U+FFFD" in bad[0]["message"] and bad[0]["line"], rows
    assert re.search(r" in (header)?/", bad[0]["message"])  # the field
    assert run.counts["sessions_exported"] == clean.counts["sessions_exported"]
    assert run.counts["trajectories"] == clean.counts["trajectories"]


def _export(store: Path, out: Path) -> tuple[Any, dict[str, Any]]:
    run = run_export([store], out, ExportOptions(), RunOptions(workers=1))
    return run, json.loads((out / "manifest.json").read_text())


def test_a_folder_link_inside_a_store_is_not_read_twice(tmp_path: Path) -> None:
    """Gemini CLI's reader globbed ``chats/*/*`` through ``chats/again -> chats``: every
    session twice, one document overwritten."""
    fixture = READERS["gemini-cli"].fixtures[0]
    clean, _ = _export(lay_out(fixture, tmp_path / "a"), tmp_path / "o1")
    store = lay_out(fixture, tmp_path / "b")
    chats = next(store.rglob("chats"))
    (chats / "again").symlink_to(chats, target_is_directory=True)
    run, manifest = _export(store, tmp_path / "o2")
    assert run.counts["trajectories"] == clean.counts["trajectories"]
    assert run.counts["sessions_exported"] == clean.counts["sessions_exported"]
    rows = pq.read_table(tmp_path / "o2" / "data" / "trajectories").num_rows
    assert rows == clean.counts["trajectories"]
    assert [s["reason"] for s in manifest["skipped"] if s["path"].endswith("again")] == [
        "a link to a folder; not followed"
    ]


@pytest.mark.parametrize("kind", ["gemini-cli", "pi", "claude-code", "agentsession"])
def test_a_file_link_out_of_the_store_is_not_read(kind: str, tmp_path: Path) -> None:
    """Pi once opened ``/etc/passwd`` through a link and reported it ``truncated``."""
    fixture = READERS[kind].fixtures[0]
    clean, _ = _export(lay_out(fixture, tmp_path / "a"), tmp_path / "o1")
    store = lay_out(fixture, tmp_path / "b")
    outside = tmp_path / "outside.jsonl"
    first = sorted(p for p in store.rglob("*.jsonl") if p.is_file())[0]
    outside.write_bytes(first.read_bytes())  # a session that would read, elsewhere
    link = first.with_name("zz-elsewhere" + first.name[2:] if kind == "gemini-cli" else
                           "zz-elsewhere.jsonl")  # fmt: skip
    link.symlink_to(outside)
    run, manifest = _export(store, tmp_path / "o2")
    assert run.counts["trajectories"] == clean.counts["trajectories"]
    reasons = [s["reason"] for s in manifest["skipped"] if "zz-elsewhere" in s["path"]]
    assert reasons == ["a link out of the store; not followed"]
    assert not any("zz-elsewhere" in i["source"] for i in manifest["inputs"])


@pytest.mark.parametrize("as_file", [True, False], ids=["file", "folder"])
def test_a_store_kind_that_names_another_kind_exits_2_naming_what_was_found(
    as_file: bool, tmp_path: Path
) -> None:
    """A Claude Code file exported with ``--store-kind codex`` wrote nothing and exited 0."""
    from typer.testing import CliRunner

    from trajset.pipeline.cli import app

    store = lay_out(READERS["claude-code"].fixtures[0], tmp_path / "cc")
    target = next(store.rglob("*.jsonl")) if as_file else store
    r = CliRunner().invoke(app, ["export", str(target), "--store-kind", "codex",
                                 "--out", str(tmp_path / "o")])  # fmt: skip
    assert r.exit_code == 2 and "holds claude-code sessions, not codex" in r.output, r.output
    assert "--store-kind claude-code" in r.output


def test_the_same_session_in_two_stores_is_exported_once(tmp_path: Path) -> None:
    """A Claude Code session whose file name is not its id, copied into two stores: two
    trajectory rows with one key and one document for both."""
    fixture = READERS["claude-code"].fixtures[0]
    clean, _ = _export(lay_out(fixture, tmp_path / "a"), tmp_path / "o1")
    stores = [lay_out(fixture, tmp_path / "s1" / "p").parent,
              lay_out(fixture, tmp_path / "s2" / "p").parent]  # fmt: skip
    run = run_export(stores, tmp_path / "o2", ExportOptions(), RunOptions(workers=1))
    assert run.counts["trajectories"] == clean.counts["trajectories"]
    [dup] = [e for e in run.errors if e.kind == "duplicate_session"]
    assert dup.source.startswith("s2/") and "already read from s1/" in dup.message


def test_a_copy_of_a_chat_beside_it_is_exported_once(tmp_path: Path) -> None:
    fixture = READERS["gemini-cli"].fixtures[0]
    clean, _ = _export(lay_out(fixture, tmp_path / "a"), tmp_path / "o1")
    store = lay_out(fixture, tmp_path / "b")
    chat = sorted(next(store.rglob("chats")).glob("session-*.jsonl"))[0]
    (chat.parent / (chat.stem + "-copy.jsonl")).write_bytes(chat.read_bytes())
    run, _ = _export(store, tmp_path / "o2")
    assert run.counts["trajectories"] == clean.counts["trajectories"]
    assert run.counts["sessions_exported"] == clean.counts["sessions_exported"]
    assert [e.kind for e in run.errors if e.kind == "duplicate_session"] == ["duplicate_session"]


def _claude_project(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A project folder of two real sessions, named as Claude Code names them."""
    folder = tmp_path / "projects" / "-work-app"
    folder.mkdir(parents=True)
    up = Path(__file__).parent / "data" / "upstream" / "claude-code"
    a = folder / "614b8d50-097f-4e36-aee0-1fdd053335e7.jsonl"
    b = folder / "0b6e1a2c-3d4f-4a5b-8c9d-0e1f2a3b4c5d.jsonl"
    a.write_bytes((up / "teich" / "example_claude_code.jsonl").read_bytes())
    b.write_bytes((up / "synthetic-rewind" / "dag_compact_after_rewind.jsonl").read_bytes())
    return folder.parent, a, b


def _edit_first(path: Path, kind: str, edit: Any) -> None:
    lines = path.read_text().splitlines()
    for n, line in enumerate(lines):
        d = json.loads(line)
        if d.get("type") == kind:
            lines[n] = json.dumps(edit(d))
            break
    path.write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize(
    ("damage", "kind", "rows", "exported"),
    [
        # an internal AttributeError lost the whole project folder
        ("message_string", "bad_field", 1, 2),
        # a TypeError in one tree's conversion: that session's row, the other one exported
        ("content_number", "internal", 1, 1),
        ("bom", None, 0, 2),  # "not a session file of this store"
        ("empty", "empty", 1, 2),  # a third file, empty: skipped without a row
        # its tool output was gone from every table without a row
        ("uuid_missing", "bad_field", 1, 2),
    ],
)
def test_a_damaged_claude_session_costs_itself_at_most(
    damage: str, kind: str | None, rows: int, exported: int, tmp_path: Path
) -> None:
    store, a, _ = _claude_project(tmp_path)
    if damage == "message_string":
        _edit_first(a, "assistant", lambda d: {**d, "message": "a string"})
    elif damage == "content_number":
        _edit_first(a, "assistant", lambda d: {**d, "message": {**d["message"], "content": 42}})
    elif damage == "uuid_missing":
        _edit_first(a, "user", lambda d: {k: v for k, v in d.items() if k != "uuid"})
    elif damage == "bom":
        a.write_bytes(b"\xef\xbb\xbf" + a.read_bytes())
    else:
        (a.parent / "9f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a.jsonl").write_bytes(b"")
    run, manifest = _export(store, tmp_path / "out")
    found = [e for e in run.errors if e.kind == kind] if kind else run.errors
    assert len(found) == rows and len(run.errors) == rows, run.errors
    assert run.counts["sessions_exported"] == exported
    assert not [s for s in manifest["skipped"] if s["path"].endswith(".jsonl")]


def test_a_line_that_is_no_object_is_an_issue_and_a_bom_loses_no_line() -> None:
    from trajset.pipeline.stores.jsonl import objects

    found, issues = objects(b'\xef\xbb\xbf{"a": 1}\n42\n"x"\n{"b": 2}\n', "s.jsonl")
    assert [i for i, _ in found] == [1, 4]
    assert [(i.kind, i.line) for i in issues] == [("bad_line", 2), ("bad_line", 3)]
    assert "line 2 holds a number, not an object" in issues[0].message


def test_a_table_that_repeats_its_ids_costs_linear_work(tmp_path: Path) -> None:
    """An OpenCode ``part`` table without its key, every row twice: the run took minutes
    and gigabytes (killed at 16.6 GB); now the rows repeated are one row each and the
    export is that of the store without them."""
    import sqlite3
    import time

    store = lay_out(READERS["opencode"].fixtures[0], tmp_path / "a")
    clean, _ = _export(store, tmp_path / "o1")
    db = next(store.rglob("opencode.db"))
    with sqlite3.connect(db) as c:
        c.executescript(
            "CREATE TABLE p2 AS SELECT * FROM part; DROP TABLE part; CREATE TABLE part (id text,"
            " message_id text, session_id text, time_created integer, time_updated integer, "
            "data text); INSERT INTO part SELECT * FROM p2; INSERT INTO part SELECT * FROM p2;"
            " DROP TABLE p2;"
        )
        parts = c.execute("SELECT count(DISTINCT id) FROM part").fetchone()[0]
    started = time.perf_counter()
    run, _ = _export(store, tmp_path / "o2")
    assert time.perf_counter() - started < 30  # it took minutes
    assert [e.kind for e in run.errors] == ["duplicate_record"] * parts
    for folder in ("atif", "data"):
        a = {p.relative_to(tmp_path / "o1"): p.read_bytes()
             for p in (tmp_path / "o1" / folder).rglob("*") if p.is_file()}  # fmt: skip
        b = {p.relative_to(tmp_path / "o2"): p.read_bytes()
             for p in (tmp_path / "o2" / folder).rglob("*") if p.is_file()}  # fmt: skip
        assert a == b
    assert run.counts["trajectories"] == clean.counts["trajectories"]


def test_a_converted_tree_with_a_repeated_id_or_a_cycle_is_read_in_one_pass() -> None:
    from trajset.pipeline.stores import SessionDraft

    d = SessionDraft("s1", "x.jsonl", "toy", "toy", "1", ts="2026-01-01T00:00:00Z")
    a = d.add("custom", "a", None, "2026-01-01T00:00:01Z", ns="toy", data={})
    d.add("custom", "b", a, "2026-01-01T00:00:02Z", ns="toy", data={})
    d.add("custom", "b", a, "2026-01-01T00:00:03Z", ns="toy", data={})  # repeated
    d.add("custom", "c", "d", "2026-01-01T00:00:04Z", ns="toy", data={})  # a cycle: c <-> d
    d.add("custom", "d", "c", "2026-01-01T00:00:05Z", ns="toy", data={})
    s = d.finish()
    assert [e.id for e in s.entries] == ["a", "b", "c", "d"]
    assert [(e.id, e.parent) for e in s.entries][2:] == [("c", None), ("d", "c")]
    assert sorted(i.kind for i in s.issues) == ["broken_link", "duplicate_entry"]


def test_a_cut_last_line_of_a_suga_export_costs_only_that_line(tmp_path: Path) -> None:
    """It gave 0 trajectories, the intact session included."""
    fixture = READERS["suga"].fixtures[0]
    clean, _ = _export(lay_out(fixture, tmp_path / "a"), tmp_path / "o1")
    store = lay_out(fixture, tmp_path / "b")
    entries = store / "entries.jsonl"
    entries.write_bytes(entries.read_bytes().rstrip(b"\n")[:-20])
    run, _ = _export(store, tmp_path / "o2")
    assert run.counts["trajectories"] == clean.counts["trajectories"] > 0
    assert run.counts["sessions_exported"] == clean.counts["sessions_exported"]
    [cut] = [e for e in run.errors if e.kind == "truncated"]
    assert cut.source.endswith("entries.jsonl") and cut.line


def test_a_codex_call_without_its_call_id_costs_only_that_call(tmp_path: Path) -> None:
    """One ``function_call`` without ``call_id`` rejected its whole session (every
    trajectory failed ATIF validation)."""
    src = Path(__file__).parent / "data/upstream/codex/real/teich/example_codex_session.jsonl"
    clean = run_export([src], tmp_path / "o1", ExportOptions(), RunOptions(workers=1))
    lines = src.read_text().splitlines()
    for n, line in enumerate(lines):
        d = json.loads(line)
        if isinstance(d.get("payload"), dict) and d["payload"].get("type") == "function_call":
            del d["payload"]["call_id"]
            lines[n] = json.dumps(d)
            break
    damaged = tmp_path / src.name
    damaged.write_text("\n".join(lines) + "\n")
    run = run_export([damaged], tmp_path / "o2", ExportOptions(), RunOptions(workers=1))
    assert run.counts["trajectories"] == clean.counts["trajectories"] > 0
    [row] = run.errors
    assert (row.kind, row.line) == ("bad_field", n + 1) and "without a call_id" in row.message


def _content_42(store: Path, kind: str) -> None:
    """The first user message's content set to a number."""
    for f in sorted(p for p in store.rglob("*.jsonl") if p.is_file()):
        lines = f.read_text().splitlines()
        for n, line in enumerate(lines):
            d = json.loads(line)
            user = (kind == "pi" and d.get("type") == "message"
                    and d["message"].get("role") == "user") or (
                    kind == "gemini-cli" and d.get("type") == "user" and "content" in d)  # fmt: skip
            if user:
                (d["message"] if kind == "pi" else d)["content"] = 42
                lines[n] = json.dumps(d)
                f.write_text("\n".join(lines) + "\n")
                return
    raise AssertionError(f"no user message in {store}")


@pytest.mark.parametrize("kind", ["pi", "gemini-cli"])
def test_a_content_of_the_wrong_type_is_a_row_and_read_as_its_text(
    kind: str, tmp_path: Path
) -> None:
    """A user message whose content is ``42`` was dropped without a row."""
    fixture = READERS[kind].fixtures[0]
    clean, _ = _export(lay_out(fixture, tmp_path / "a"), tmp_path / "o1")
    store = lay_out(fixture, tmp_path / "b")
    _content_42(store, kind)
    run, _ = _export(store, tmp_path / "o2")
    assert run.counts["trajectories"] == clean.counts["trajectories"]
    [row] = run.errors
    assert row.kind == "bad_field" and "content is a number, read as its text" in row.message
    docs = "".join(p.read_text() for p in (tmp_path / "o2" / "atif").glob("*.json"))
    assert '"message": "42"' in docs


@pytest.mark.parametrize("damage", ["role_number", "message_missing"])
def test_an_opencode_message_of_a_wrong_role_or_gone_is_a_row(damage: str, tmp_path: Path) -> None:
    """A ``role: 5`` message and the parts of a message the database no longer holds were
    kept out of every step without a row."""
    import sqlite3

    store = lay_out(READERS["opencode"].fixtures[0], tmp_path / "a")
    db = next(store.rglob("opencode.db"))
    with sqlite3.connect(db) as c:
        c.execute("PRAGMA foreign_keys=OFF")
        mid, data = c.execute(
            'SELECT id, data FROM message WHERE data LIKE \'%"role":"user"%\' ORDER BY id'
        ).fetchone()
        if damage == "role_number":
            c.execute("UPDATE message SET data = ? WHERE id = ?",
                      (json.dumps({**json.loads(data), "role": 5}), mid))  # fmt: skip
        else:
            c.execute("DELETE FROM message WHERE id = ?", (mid,))
    run, _ = _export(store, tmp_path / "o")
    kinds = [e.kind for e in run.errors]
    assert kinds == (["bad_field"] if damage == "role_number" else ["orphan_parts"]), run.errors


def test_a_folder_mixing_kinds_exports_each_file_by_its_own_kind(tmp_path: Path) -> None:
    """Two Agent Session Format files beside a stray Claude Code file: detection picked
    Claude Code and the two sessions were only listed as skipped."""
    from .conftest import session_file

    store = tmp_path / "mixed"
    store.mkdir()
    for name in ("basic", "branch"):
        (store / f"{name}.jsonl").write_bytes(session_file(name).read_bytes())
    claude = Path(__file__).parent / "data/upstream/claude-code/teich/example_claude_code.jsonl"
    (store / "614b8d50-097f-4e36-aee0-1fdd053335e7.jsonl").write_bytes(claude.read_bytes())
    run, manifest = _export(store, tmp_path / "o")
    assert run.counts["sessions_exported"] == 3 and not manifest["skipped"]
    kinds = {
        r["source_format"]
        for r in pq.read_table(tmp_path / "o" / "data" / "trajectories").to_pylist()
    }
    assert kinds == {"agentsession", "claude-code"}


@pytest.mark.parametrize("content", [b"", b"not a database at all"], ids=["empty", "garbage"])
def test_an_empty_or_damaged_opencode_database_is_a_row(content: bytes, tmp_path: Path) -> None:
    """It exited 2 with "holds no session file trajset recognises"."""
    store = tmp_path / "opencode"
    store.mkdir()
    (store / "opencode.db").write_bytes(content)
    run = run_export([store], tmp_path / "o", ExportOptions(), RunOptions(workers=1))
    [row] = run.errors
    assert row.source.endswith("opencode.db") and row.kind in ("format", "io"), row
