"""A damaged value, line or file found by the held-out damaged stores (benchmarks/damaged.py)
is one error row naming it, and the rest of the store exports (issue: nothing lost without
a row)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from trajset.pipeline import ExportOptions, RunOptions, run_export
from trajset.pipeline.stores import READERS

from .fixture_stores import lay_out

Edit = Callable[[Path], None]


def _export(store: Path, out: Path) -> list[tuple[str, str]]:
    run = run_export([store], out, ExportOptions(), RunOptions(workers=1))
    assert not [e for e in run.errors if e.kind == "internal"], run.errors
    return [(e.kind, e.message) for e in run.errors]


def _line(path: Path, n: int, change: Callable[[dict], dict]) -> None:
    """Line ``n`` (1-based) of a JSON Lines file, changed."""
    lines = path.read_text().split("\n")
    lines[n - 1] = json.dumps(change(json.loads(lines[n - 1])))
    path.write_text("\n".join(lines))


def _set(key: str, value: object) -> Callable[[dict], dict]:
    return lambda d: {**d, key: value}


def _first(store: Path, pattern: str) -> Path:
    return sorted(p for p in store.rglob(pattern) if p.is_file())[0]


def _gemini_chat(store: Path) -> Path:
    return _first(store, "session-*.jsonl")


def _claude_cycle(store: Path) -> None:
    f = _first(store, "*.jsonl")
    recs = [json.loads(x) for x in f.read_text().splitlines() if x.strip()]
    root = next(i for i, r in enumerate(recs) if r.get("uuid") and r.get("parentUuid") is None)
    recs[root]["parentUuid"] = [r["uuid"] for r in recs if r.get("uuid")][-1]
    f.write_text("\n".join(json.dumps(r) for r in recs) + "\n")


def _codex_copy(store: Path) -> None:
    f = _first(store, "rollout-*.jsonl")
    shutil.copy(f, f.with_name(f.stem + "-copy.jsonl"))


def _pi_late_parent(store: Path) -> None:
    f = _first(store, "2026-01-03*.jsonl")  # two roots: the first made a child of the last
    lines = f.read_text().split("\n")
    last = json.loads([x for x in lines if x.strip()][-1])["id"]
    _line(f, 2, _set("parentId", last))


def _harbor_doc_surrogate(store: Path) -> None:
    f = _first(store, "trajectory.json")
    f.write_text(f.read_text().replace('"step_id"', '"x": "half \\ud83d", "step_id"', 1))


def _asf_surrogate(store: Path) -> None:
    f = _first(store, "*.jsonl")
    lines = f.read_text().split("\n")
    lines[1] = lines[1].replace('"id":', '"acme:note": "half \\ud83d", "id":', 1)
    f.write_text("\n".join(lines))


def _opencode_text(store: Path) -> None:
    for part in sorted(store.rglob("prt_*.json")):
        d = json.loads(part.read_text())
        if d.get("type") == "text":
            part.write_text(json.dumps({**d, "text": 12345}))
            return


def _harbor_started_at(store: Path) -> None:
    f = _first(store, "result.json")
    d = json.loads(f.read_text())
    if "trial_name" not in d:  # the job's own result: take a trial's
        f = sorted(p for p in store.rglob("result.json") if "trial_name" in p.read_text())[0]
        d = json.loads(f.read_text())
    f.write_text(json.dumps({**d, "started_at": 12345}))


def _einox_message(change: Callable[[dict], None]) -> Edit:
    def damage(store: Path) -> None:
        for f in sorted(store.rglob("session.json")):  # the first with a call
            d = json.loads(f.read_text())
            calls = [m for m in d.get("messages") or [] if m.get("tool_calls")]
            if calls:
                change(calls[0])
                f.write_text(json.dumps(d))
                return

    return damage


def _opencode_copy(store: Path) -> None:
    f = _first(store, "msg_*.json")
    shutil.copy(f, f.with_name(f.stem + "-copy.json"))


def _opencode_tokens(store: Path) -> None:
    for part in sorted(store.rglob("prt_*.json")):
        d = json.loads(part.read_text())
        if isinstance(d.get("tokens"), dict):
            part.write_text(json.dumps({**d, "tokens": 12345}))
            return


def _codex_output(store: Path) -> None:
    for f in sorted(store.rglob("rollout-*.jsonl")):
        for n, line in enumerate(f.read_text().split("\n"), 1):
            if '"function_call_output"' in line:
                _line(f, n, lambda d: {**d, "payload": {**d["payload"], "call_id": 7}})
                return


def _gemini_model(change: Callable[[dict], dict]) -> Edit:
    def damage(store: Path) -> None:
        f = _gemini_chat(store)
        n = next(i for i, x in enumerate(f.read_text().split("\n"), 1) if '"type": "gemini"' in x
                 or '"type":"gemini"' in x)  # fmt: skip
        _line(f, n, change)

    return damage


def _opencode_db_time(store: Path) -> None:
    import sqlite3

    con = sqlite3.connect(_first(store, "opencode.db"))
    con.execute(
        "UPDATE message SET time_created = 'noon' WHERE rowid = (SELECT min(rowid) FROM message)"
    )
    con.commit()
    con.close()


def _opencode_part_session(store: Path) -> None:
    import sqlite3

    con = sqlite3.connect(_first(store, "opencode.db"))
    con.execute("UPDATE part SET session_id = 7 WHERE rowid = (SELECT min(rowid) FROM part)")
    con.commit()
    con.close()


def _harbor_lock_digest(store: Path) -> None:
    f = sorted(p for p in store.rglob("lock.json") if "task" in json.loads(p.read_text()))[0]
    d = json.loads(f.read_text())
    f.write_text(json.dumps({**d, "task": {**d["task"], "digest": 12345}}))


def _einox_event_ts(store: Path) -> None:
    f = _first(store, "session.json")
    d = json.loads(f.read_text())
    d["events"][0]["ts"] = "noon"
    f.write_text(json.dumps(d))


def _opencode_legacy_time(store: Path) -> None:
    f = _first(store, "msg_*.json")
    f.write_text(json.dumps({**json.loads(f.read_text()), "time": 12345}))


def _pi_text(store: Path) -> None:
    f = _first(store, "branching.jsonl")
    for n, line in enumerate(f.read_text().split("\n"), 1):
        d = json.loads(line) if line.strip() else {}
        content = (d.get("message") or {}).get("content")
        if isinstance(content, list) and content and "text" in content[0]:
            content[0]["text"] = 12345
            _line(f, n, lambda _, d=d: d)
            return


#: (kind, fixture index, damage, the row's kind, words its message holds)
CASES: list[tuple[str, int, Edit, str, str]] = [
    ("gemini-cli", 1, lambda s: _line(_gemini_chat(s), 1, _set("sessionId", "id \ud83d")), "bad_character", "U+FFFD"),
    ("gemini-cli", 0, lambda s: _gemini_chat(s).write_bytes(b""), "empty", "empty"),
    ("gemini-cli", 0, lambda s: _line(_gemini_chat(s), 2, lambda d: {"$set": "x"}), "bad_line", "$set is a string"),
    ("gemini-cli", 0, lambda s: _line(_gemini_chat(s), 3, _set("content", 12345)), "bad_field", "content is a number"),
    ("claude-code", 0, lambda s: _line(_first(s, "*.jsonl"), 9, _set("type", "x \ud83d")), "bad_character", "U+FFFD"),
    ("claude-code", 0, _claude_cycle, "broken_link", "a cycle"),
    ("claude-code", 0, lambda s: _line(_first(s, "*.jsonl"), 9, _set("parentUuid", 12345)), "broken_link", "parentUuid is a number"),
    ("claude-code", 0, lambda s: _line(_first(s, "*.jsonl"), 9, _set("uuid", 12345)), "bad_field", "uuid is a number"),
    ("claude-code", 0, lambda s: _line(_first(s, "*.jsonl"), 9, _set("type", 12345)), "bad_line", "type is a number"),
    ("codex", 2, _codex_copy, "duplicate_session", "a copy"),
    ("pi", 2, _pi_late_parent, "broken_link", "written after it"),
    ("pi", 0, lambda s: _line(_first(s, "branching.jsonl"), 6, lambda d: {**d, "usage": {**d["usage"], "cacheRead": "7"}}), "bad_field", "is text, not a number"),
    ("harbor", 0, _harbor_doc_surrogate, "bad_character", "U+FFFD"),
    ("harbor", 0, _harbor_started_at, "bad_field", "started_at is a number"),
    ("agentsession", 1, _asf_surrogate, "bad_character", "U+FFFD"),
    ("opencode", 1, _opencode_text, "bad_field", "text is a number"),
    ("codex", 2, _codex_output, "bad_field", "whose call_id is a number"),
    ("gemini-cli", 0, _gemini_model(_set("thoughts", 12345)), "bad_field", "thoughts is a number"),
    ("gemini-cli", 0, _gemini_model(_set("content", [{"text": 5}])), "bad_field", "content[0].text is a number"),
    ("claude-code", 0, lambda s: _line(_first(s, "*.jsonl"), 9, lambda d: {**d, "message": {**d["message"], "content": [7]}}), "bad_field", "content block 0 is a number"),
    ("pi", 0, lambda s: _line(_first(s, "branching.jsonl"), 6, _set("timestamp", "yesterday")), "bad_field", "is no RFC 3339 time"),
    ("pi", 0, lambda s: _line(_first(s, "branching.jsonl"), 1, _set("cwd", 12345)), "bad_field", "cwd is a number"),
    ("claude-code", 0, lambda s: _line(_first(s, "*.jsonl"), 9, _set("timestamp", 12345)), "bad_field", "'12345' is no RFC 3339 time"),
    ("codex", 2, lambda s: _line(_first(s, "rollout-*.jsonl"), 5, _set("timestamp", "noon")), "bad_field", "'noon' is no RFC 3339 time"),
    ("einox", 0, _einox_event_ts, "bad_field", "events[0].ts is a string"),
    ("opencode", 1, _opencode_legacy_time, "bad_field", "time.created is null"),
    ("pi", 0, _pi_text, "bad_field", "content[0].text is a number"),
    ("opencode", 0, _opencode_db_time, "bad_field", "time_created is a string"),
    ("opencode", 0, _opencode_part_session, "bad_field", "is not its message's session"),
    ("harbor", 0, _harbor_lock_digest, "bad_field", "task.digest is a number"),
    ("opencode", 1, _opencode_copy, "duplicate_record", "the copy is left out"),
    ("opencode", 1, _opencode_tokens, "out_of_range", "tokens: 12345 is not an object"),
    ("einox", 0, _einox_message(lambda m: m.update(content=12345)), "bad_field", "content is a number"),
    ("einox", 0, _einox_message(lambda m: m["tool_calls"][0]["function"].update(arguments={"a": 1})), "bad_field", "arguments is an object"),
]  # fmt: skip


@pytest.mark.parametrize(("kind", "fixture", "damage", "rule", "words"), CASES,
                         ids=[f"{c[0]}-{c[3]}-{i}" for i, c in enumerate(CASES)])  # fmt: skip
def test_the_damage_is_one_row_and_the_rest_exports(
    kind: str, fixture: int, damage: Edit, rule: str, words: str, tmp_path: Path
) -> None:
    clean = run_export([lay_out(READERS[kind].fixtures[fixture], tmp_path / "a")],
                       tmp_path / "o1", ExportOptions(), RunOptions(workers=1))  # fmt: skip
    store = lay_out(READERS[kind].fixtures[fixture], tmp_path / "b")
    damage(store)
    rows = _export(store, tmp_path / "o2")
    assert [m for k, m in rows if k == rule and words in m], rows
    got = pq.read_table(tmp_path / "o2" / "data" / "trajectories").num_rows
    assert got >= clean.counts["trajectories"] - 1  # at most the damaged session's one


def test_a_record_type_with_half_an_emoji_is_written_to_the_manifest(tmp_path: Path) -> None:
    """A name a reader counts (an unknown record type) stands in the manifest; one with a
    lone surrogate once stopped the export there, after every session was written."""
    store = lay_out(READERS["codex"].fixtures[0], tmp_path / "a")
    _line(_first(store, "rollout-*.jsonl"), 3, _set("type", "new \ud83d"))
    _export(store, tmp_path / "o")
    text = (tmp_path / "o" / "manifest.json").read_text(encoding="utf-8")
    assert "\\ud83d" in text and json.loads(text)


def test_a_unit_whose_people_cannot_be_read_is_a_row_and_not_exported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pseudonyms are numbered before any unit is read: a unit whose identities fail cannot
    have its people replaced, so it is left out with a row, not exported unredacted."""
    store = lay_out(READERS["agentsession"].fixtures[1], tmp_path / "a")
    reader = type(READERS["agentsession"])

    def broken(self, unit):  # type: ignore[no-untyped-def]
        if unit.files[0].endswith("basic.jsonl"):
            raise RuntimeError("a reader bug")
        return []

    monkeypatch.setattr(reader, "identities", broken)
    run = run_export([store], tmp_path / "o", ExportOptions(), RunOptions(workers=1))
    [row] = [e for e in run.errors if "pseudonyms" in e.message]
    assert row.source.endswith("basic.jsonl") and "RuntimeError: a reader bug" in row.message
    basic = json.loads((store / "basic.jsonl").read_text().split("\n")[0])["id"]
    ids = pq.read_table(tmp_path / "o" / "data" / "trajectories").column("session_id")
    assert basic not in ids.to_pylist() and len(set(ids.to_pylist())) == 4


def _data(out: Path) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes()
            for d in ("atif", "data") for p in sorted((out / d).rglob("*")) if p.is_file()}  # fmt: skip


@pytest.mark.parametrize("where", ["job", "trial"])
def test_a_copied_harbor_job_or_trial_is_exported_once(where: str, tmp_path: Path) -> None:
    """A job copied beside itself (its subagents' sessions too) or a trial copied in its job
    was six branches of one task with their pairs twice; each copy is now a row."""
    fixture = READERS["harbor"].fixtures[1]  # golden-terminus-2: trials with subagents
    alone = lay_out(fixture, tmp_path / "a")
    run_export([alone], tmp_path / "o1", ExportOptions(), RunOptions(workers=1))
    store = lay_out(fixture, tmp_path / "b")
    job = next(
        p for p in store.rglob("*") if (p / "config.json").is_file() and p.name[:4] == "2025"
    )
    if where == "job":
        shutil.copytree(job, job.with_name(job.name + "-copy"))
    else:
        trial = next(p for p in sorted(job.iterdir()) if (p / "agent").is_dir())
        shutil.copytree(trial, trial.with_name(trial.name + "x"))
    rows = _export(store, tmp_path / "o2")
    assert rows and {k for k, _ in rows} == {"duplicate_session"}, rows
    assert _data(tmp_path / "o2") == _data(tmp_path / "o1")


def test_read_store_says_what_did_not_read(tmp_path: Path) -> None:
    """The notebook reader dropped the sessions that did not read without a word."""
    from trajset.pipeline import read_store

    store = lay_out(READERS["agentsession"].fixtures[1], tmp_path / "a")
    (store / "runs.jsonl").write_text('{"type": "session"}\n')
    with pytest.warns(UserWarning, match="1 session"):
        assert len(read_store(store)) == 4
    errors: list[Exception] = []
    assert len(read_store(store, errors=errors)) == 4
    assert len(errors) == 1 and "runs.jsonl" in str(getattr(errors[0], "source", ""))


def test_a_pi_parent_cycle_is_broken_once(tmp_path: Path) -> None:
    """A cycle of parentIds (the root made the child of a later entry) shattered the session
    into one-entry trees: 12 trajectories and 22 pairs.  Now the cycle is broken at its
    earliest entry, one row, and the session exports as it did."""
    fixture = READERS["pi"].fixtures[2]
    clean = run_export([lay_out(fixture, tmp_path / "a")], tmp_path / "o1", ExportOptions(),
                       RunOptions(workers=1))  # fmt: skip
    store = lay_out(fixture, tmp_path / "b")
    f = _first(store, "2026-03-02T09-12*.jsonl")
    _line(f, 2, _set("parentId", json.loads(f.read_text().split("\n")[6])["id"]))
    rows = _export(store, tmp_path / "o2")
    assert [k for k, m in rows if "a cycle" in m] == ["broken_link"], rows
    run = pq.read_table(tmp_path / "o2" / "data" / "trajectories").num_rows
    assert run == clean.counts["trajectories"]


def _paths(value: object, at: tuple = ()) -> list[tuple]:  # type: ignore[type-arg]
    items = (
        value.items()
        if isinstance(value, dict)
        else enumerate(value)
        if isinstance(value, list)
        else []
    )
    out = []
    for k, v in items:  # every member below the free-form ones (arguments, extra, metrics)
        if k not in ("arguments", "extra", "metrics"):
            out += [(*at, k), *_paths(v, (*at, k))]
    return out


@pytest.mark.slow
def test_any_member_of_a_harbor_step_of_another_type_costs_that_member(tmp_path: Path) -> None:
    """A step member of another type (a ``tool_calls`` of 5) was an ``internal`` error that
    lost every trial of the task; every member path of a step, set to each other type, now
    costs at most its own value: no internal row, and every trial of the task exported."""
    fixture = READERS["harbor"].fixtures[0]
    doc_path = "word-freq__J8kd2Lm/agent/trajectory.json"
    step = json.loads((lay_out(fixture, tmp_path / "x") / doc_path).read_text())["steps"][1]
    broken = []
    for n, path in enumerate(_paths(step)):
        for value in (5, "x", [5], {"a": 5}):
            store = lay_out(fixture, tmp_path / f"s{n}-{type(value).__name__}")
            doc = json.loads((store / doc_path).read_text())
            holder = doc["steps"][1]
            for k in path[:-1]:
                holder = holder[k]
            holder[path[-1]] = value
            (store / doc_path).write_text(json.dumps(doc))
            run = run_export(
                [store], store.with_suffix(".out"), ExportOptions(), RunOptions(workers=1)
            )
            if any(e.kind == "internal" for e in run.errors) or run.counts["trajectories"] < 3:
                broken.append((path, value, [e.message[:80] for e in run.errors]))
    assert broken == []
