"""``trajset sources``, ``export --all-local``, several stores of several kinds in one export,
and typed reader options on the command line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from trajset.pipeline import ExportOptions, RunOptions, run_export, sample_store
from trajset.pipeline.cli import app
from trajset.pipeline.sources import local_sources
from trajset.pipeline.stores import READERS, Location, option_help

from .fixture_stores import fixtures, lay_out

UPSTREAM = Path(__file__).parent / "data" / "upstream"
#: the store kinds with a default location, each laid out by ``_home``
LOCAL = {k for k, r in READERS.items() if r.locations}


def _home(root: Path) -> Path:
    """A home folder with a store of each kind that has a default location, laid out there."""
    shutil.copytree(UPSTREAM / "claude-code" / "teich", root / ".claude" / "projects" / "-p")
    shutil.copytree(sample_store(), root / ".agent" / "sessions")
    shutil.copytree(UPSTREAM / "einox" / "synthetic" / "data" / "users", root / ".agent" / "users")
    shutil.copytree(UPSTREAM / "codex" / "synthetic" / "rollback", root / ".codex")
    shutil.copytree(UPSTREAM / "gemini-cli" / "synthetic" / "gemini-home", root / ".gemini")
    shutil.copytree(UPSTREAM / "pi" / "synthetic" / "sessions", root / ".pi" / "agent" / "sessions")
    shutil.copytree(UPSTREAM / "opencode" / "sqlite", root / ".local" / "share" / "opencode")
    shutil.copytree(UPSTREAM / "qwen-code" / "synthetic" / "home" / ".qwen", root / ".qwen")
    shutil.copytree(UPSTREAM / "copilot-cli" / "real" / "lantern", root / ".copilot")
    shutil.copytree(UPSTREAM / "cursor" / "synthetic" / "home" / ".cursor", root / ".cursor")
    return root


def test_every_reader_with_a_default_location_is_found_under_home(tmp_path: Path) -> None:
    home = _home(tmp_path / "home")
    found = {s.kind: s for s in local_sources({"HOME": str(home)})}
    assert set(found) == LOCAL, "lay out a store of each kind with a location in _home"
    assert found["agentsession"].sessions == 6 and found["agentsession"].bytes > 0
    assert found["claude-code"].path == home / ".claude" / "projects"
    assert all(s.sessions > 0 and not s.problem for s in found.values())


def test_a_location_honours_its_environment_variable(tmp_path: Path) -> None:
    claude = Location("~/.claude", env="CLAUDE_CONFIG_DIR", below="projects")
    assert claude.resolve({"HOME": "/h"}) == Path("/h/.claude/projects")
    assert claude.resolve({"HOME": "/h", "CLAUDE_CONFIG_DIR": "/c"}) == Path("/c/projects")
    assert claude.resolve({}) is None  # no home, no variable: nowhere to look
    assert Location("/srv/x").resolve({}) == Path("/srv/x")


def test_sources_lists_each_store_and_export_all_local_exports_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = _home(tmp_path / "home")
    monkeypatch.setenv("HOME", str(home))
    for moved in ("CLAUDE_CONFIG_DIR", "XDG_DATA_HOME"):
        monkeypatch.delenv(moved, raising=False)
    listed = CliRunner().invoke(app, ["sources", "--json"])
    assert listed.exit_code == 0, listed.output
    rows = [json.loads(line) for line in listed.stdout.splitlines()]
    assert {r["kind"] for r in rows} == LOCAL
    out = tmp_path / "out"
    run = CliRunner().invoke(app, ["export", "--all-local", "--out", str(out), "--quiet"])
    assert run.exit_code == 0, run.output
    formats = {r["source_format"] for r in pq.read_table(out / "data" / "trajectories").to_pylist()}
    assert formats == LOCAL


def test_all_local_with_nothing_found_says_where_it_looked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "empty"))
    for moved in ("CLAUDE_CONFIG_DIR", "XDG_DATA_HOME"):
        monkeypatch.delenv(moved, raising=False)
    run = CliRunner().invoke(app, ["export", "--all-local", "--out", str(tmp_path / "o")])
    assert run.exit_code == 2
    assert "found no store" in run.output and "~/.claude" in run.output


def test_stores_of_several_kinds_export_in_one_run(tmp_path: Path) -> None:
    stores = [lay_out(fx[0], tmp_path / kind) for kind, fx in fixtures().items()]  # one a kind
    out = tmp_path / "out"
    run = run_export(stores, out, ExportOptions(), RunOptions(workers=2))
    rows = pq.read_table(out / "data" / "trajectories").to_pylist()
    kinds = {k for k in READERS if k != "agentsession-sqlite"}  # (its rows say agentsession)
    assert {r["source_format"] for r in rows} == kinds
    c = run.counts
    assert c["sessions_read"] == c["sessions_exported"] + c["sessions_failed"]


def test_an_unknown_or_mistyped_reader_option_exits_2_naming_the_valid_ones(tmp_path: Path) -> None:
    einox = str(UPSTREAM / "einox" / "synthetic" / "data")
    typo = CliRunner().invoke(
        app, ["export", einox, "--out", str(tmp_path / "a"), "--reader-option", "keep_trunacted=1"]
    )
    assert typo.exit_code == 2
    assert (
        "keep_trunacted" in typo.output and "valid: einox: keep_truncated=true|false" in typo.output
    )
    wrong = CliRunner().invoke(
        app,
        ["export", einox, "--out", str(tmp_path / "b"), "--reader-option", "keep_truncated=maybe"],
    )
    assert wrong.exit_code == 2 and "takes true or false" in wrong.output
    other = CliRunner().invoke(  # an option of another kind than the run's stores
        app, ["export", einox, "--out", str(tmp_path / "c"), "--reader-option", "follow_symlinks=1"]
    )
    assert other.exit_code == 2 and "not an option of the einox reader" in other.output
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_a_typed_reader_option_reaches_the_reader(tmp_path: Path) -> None:
    """keep_truncated=true keeps einox's placeholders (the option is typed: "yes" works too)."""
    store = UPSTREAM / "einox" / "synthetic" / "data"
    run_export(
        [store], tmp_path / "kept", ExportOptions(reader_options=(("keep_truncated", "yes"),))
    )
    docs = "".join(p.read_text() for p in (tmp_path / "kept" / "atif").glob("*.json"))
    assert "persisted-output" in docs


def test_export_help_and_the_readme_list_every_reader_option() -> None:
    result = CliRunner().invoke(app, ["export", "--help"], env={"COLUMNS": "400"})
    readme = (Path(__file__).parents[1] / "README.md").read_text(encoding="utf-8")
    for line in option_help():
        kind, _, described = line.partition(": ")
        name = described.split("=", 1)[0]
        assert name in result.output
        assert f"`{name}=" in readme and f"| `{kind}` |" in readme
