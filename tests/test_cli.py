"""The command line through typer's CliRunner: help, exit codes, inspect, verify, export."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from trajset.pipeline.cli import app

from .conftest import session_file

COMMANDS = sorted(typer.main.get_command(app).commands)  # type: ignore[attr-defined]


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help_with_an_example(runner: CliRunner, command: str) -> None:
    result = runner.invoke(app, [command, "--help"])
    assert result.exit_code == 0
    assert "Example: trajset " + command in " ".join(result.output.split())


def test_the_command_list_is_the_documented_one() -> None:
    assert set(COMMANDS) >= {
        "export",
        "inspect",
        "verify",
        "validate",
        "convert",
        "publish",
        "schema",
    }


def test_top_level_help_and_version(runner: CliRunner) -> None:
    assert runner.invoke(app, ["--help"]).exit_code == 0
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0 and result.output.startswith("trajset ")


def test_inspect_shows_forks_leaves_and_truncation(runner: CliRunner) -> None:
    result = runner.invoke(app, ["inspect"])
    assert result.exit_code == 0, result.output
    assert "fork      c0000001 -> i0000001, i0000003" in result.output
    assert "truncated line 7" in result.output
    assert (
        result.output.strip().splitlines()[-1]
        == "6 sessions, 0 unreadable, 73 entries, 2 forks, 8 leaves, 1 truncated"
    )


def test_inspect_json_lines(runner: CliRunner, agentsession_data: Path) -> None:
    result = runner.invoke(app, ["inspect", "--json", str(session_file("branch"))])
    rep = json.loads(result.output.splitlines()[0])
    assert rep["forks"] == [{"entry_id": "r0000001", "children": ["i0000003", "b0000001"]}]
    assert rep["leaves"] == ["r0000002", "n0000001"]


def test_inspect_reports_an_unreadable_file_without_a_traceback(
    runner: CliRunner, agentsession_data: Path
) -> None:
    result = runner.invoke(app, ["inspect", str(session_file("corrupt-middle"))])
    assert result.exit_code == 0
    assert "UNREADABLE" in result.output and "Traceback" not in result.output


def test_verify_passes_on_a_good_session(runner: CliRunner, agentsession_data: Path) -> None:
    result = runner.invoke(app, ["verify", str(session_file("runs"))])
    assert result.exit_code == 0, result.output
    assert result.output.strip().splitlines() == [
        "1 session(s), 2 response(s): 2 verified, 0 without a recorded hash, 0 problem(s), "
        "0 warning(s)"
    ]  # one line per problem and the total; --verbose adds a line per response
    verbose = runner.invoke(app, ["verify", str(session_file("runs")), "--verbose"])
    assert verbose.output.count(": ok") == 2


def test_verify_exits_1_naming_session_and_entry(
    runner: CliRunner, agentsession_data: Path, tmp_path: Path
) -> None:
    bad = tmp_path / "tampered.jsonl"
    bad.write_text(session_file("basic").read_text().replace("What is 2+2?", "What is 2+3?"))
    result = runner.invoke(app, ["verify", str(bad)])
    assert result.exit_code == 1
    assert "session 01995b2a-0000-7000-8000-000000000001 entry r0000001: MISMATCH" in result.output


def test_verify_warns_on_truncation_and_fails_on_record_rules(
    runner: CliRunner, agentsession_data: Path, tmp_path: Path
) -> None:
    """A cut last line is no mismatch (export keeps the lines before it): a warning, exit 0.
    The bundled sample store, which holds one such file on purpose, verifies."""
    cut = runner.invoke(app, ["verify", str(session_file("truncated"))])
    assert (
        cut.exit_code == 0 and "truncated last line" in cut.output and "1 warning(s)" in cut.output
    )
    sample = runner.invoke(app, ["verify"])
    assert sample.exit_code == 0 and "no hash recorded" not in sample.output
    assert len(sample.output.strip().splitlines()) <= 3
    bad = tmp_path / "runs.jsonl"
    bad.write_text(
        session_file("runs").read_text().replace('"reason":"input_required"', '"reason":"done"')
    )
    result = runner.invoke(app, ["verify", str(bad)])
    assert result.exit_code == 1 and "run run-1" in result.output


def test_verify_of_unreadable_file_is_one_line(runner: CliRunner, agentsession_data: Path) -> None:
    result = runner.invoke(app, ["verify", str(session_file("duplicate-id"))])
    assert result.exit_code == 1
    assert "duplicate entry id" in result.output and "Traceback" not in result.output


def test_export_usage_errors_exit_2(runner: CliRunner, tmp_path: Path) -> None:
    out = str(tmp_path / "o")
    assert runner.invoke(app, ["export", "--out", out, "--prefer", "bogus"]).exit_code == 2
    assert runner.invoke(app, ["export", "--out", out, "--executor", "spark"]).exit_code == 2
    assert runner.invoke(app, ["export", str(tmp_path / "missing"), "--out", out]).exit_code == 2


def test_export_refuses_a_non_empty_folder_unless_told(runner: CliRunner, tmp_path: Path) -> None:
    out = tmp_path / "o"
    assert runner.invoke(app, ["export", "--out", str(out), "--quiet"]).exit_code == 0
    again = runner.invoke(app, ["export", "--out", str(out), "--quiet"])
    assert again.exit_code == 1 and "--mode overwrite" in again.output
    assert (
        runner.invoke(
            app, ["export", "--out", str(out), "--quiet", "--mode", "overwrite"]
        ).exit_code
        == 0
    )
    (out / "mine.txt").write_text("keep me")
    refused = runner.invoke(app, ["export", "--out", str(out), "--quiet", "--mode", "overwrite"])
    assert refused.exit_code == 1 and (out / "mine.txt").exists()


def test_strict_turns_a_bad_input_into_exit_1(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(app, ["export", "--out", str(tmp_path / "o"), "--strict", "--quiet"])
    assert result.exit_code == 1 and "truncated" in result.output


def test_schema_atif(runner: CliRunner) -> None:
    result = runner.invoke(app, ["schema", "atif"])
    assert result.exit_code == 0 and "Trajectory" in json.loads(result.output)["$defs"]
