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
