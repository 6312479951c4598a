"""The README's exit-code table is what the commands print: each row's command is run in the
situation it names, and its exit code and message (``…`` for what varies) must match."""

from __future__ import annotations

import errno
import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from trajset.pipeline.cli import app
from trajset.pipeline.cli.errors import disk_full_message, interrupted_message

from .conftest import UPSTREAM, session_file

README = Path(__file__).resolve().parents[1] / "README.md"
HEADER = "| exit | when, for example | trajset prints |"
RUN = CliRunner()

Setup = Callable[[Path], tuple[list[str], dict[str, str]]]


def readme_rows() -> dict[str, tuple[int, str]]:
    """Each row of the table: its situation cell, mapped to exit code and printed message."""
    lines = README.read_text().split(HEADER, 1)[1].splitlines()[2:]
    rows: dict[str, tuple[int, str]] = {}
    for line in lines:
        if not line.startswith("|"):
            break
        code, when, prints = (c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1])
        rows[when] = (int(code), prints.strip("`").replace("\\|", "|"))
    return rows


def _ok(*args: str) -> None:
    result = RUN.invoke(app, list(args))
    assert result.exit_code == 0, result.output


def _cut_store(tmp: Path) -> Path:
    store = tmp / "store"
    store.mkdir()
    shutil.copy(session_file("truncated"), store)
    return store


def _places(tmp: Path) -> dict[str, str]:
    return {str(tmp / "store"): "STORE", str(tmp / "o"): "DIR", str(tmp / "f.jsonl"): "FILE"}


def _export(*extra: str, store: Callable[[Path], Path] = _cut_store) -> Setup:
    def setup(tmp: Path) -> tuple[list[str], dict[str, str]]:
        return ["export", str(store(tmp)), "--out", str(tmp / "o"), "-q", *extra], _places(tmp)

    return setup


def _claude(tmp: Path) -> Path:
    return UPSTREAM / "claude-code"


def _missing(tmp: Path) -> Path:
    return tmp / "store"


def _empty(tmp: Path) -> Path:
    (tmp / "store").mkdir()
    return tmp / "store"


def _into_previous(tmp: Path) -> tuple[list[str], dict[str, str]]:
    argv, places = _export()(tmp)
    _ok(*argv)
    return argv, places


def _into_own_files(tmp: Path) -> tuple[list[str], dict[str, str]]:
    (tmp / "o").mkdir()
    (tmp / "o" / "notes.txt").write_text("mine")
    return _export()(tmp)


def _resume_other(tmp: Path) -> tuple[list[str], dict[str, str]]:
    argv, places = _export()(tmp)
    _ok(*argv, "--keep-state")
    return [*argv, "--mode", "resume", "--prefer", "score"], places


def _verify_cut(tmp: Path) -> tuple[list[str], dict[str, str]]:
    return ["verify", str(_cut_store(tmp))], _places(tmp)


def _verify_changed(tmp: Path) -> tuple[list[str], dict[str, str]]:
    text = session_file("basic").read_text().replace("What is 2+2?", "What is 2+3?")
    (tmp / "f.jsonl").write_text(text)
    return ["verify", str(tmp / "f.jsonl")], _places(tmp)


def _validate_broken(tmp: Path) -> tuple[list[str], dict[str, str]]:
    _ok("export", "--out", str(tmp / "o"), "-q")
    doc = sorted((tmp / "o" / "atif").glob("*.json"))[0]
    doc.write_text(json.dumps({**json.loads(doc.read_text()), "schema_version": "ATIF-v9"}))
    return ["validate", str(tmp / "o")], _places(tmp)


def _scan_unredacted(tmp: Path) -> tuple[list[str], dict[str, str]]:
    _ok("export", "--out", str(tmp / "o"), "-q", "--no-redact")
    return ["scan", str(tmp / "o")], _places(tmp)


def _publish_unfinished(tmp: Path) -> tuple[list[str], dict[str, str]]:
    _ok("export", "--out", str(tmp / "o"), "-q")
    (tmp / "o" / "manifest.json").unlink()
    return ["publish", str(tmp / "o"), "acme/agent-sessions"], _places(tmp)


def _report_no_export(tmp: Path) -> tuple[list[str], dict[str, str]]:
    (tmp / "o").mkdir()
    return ["report", str(tmp / "o"), "--out", str(tmp / "report.html")], _places(tmp)


def _claude_store(tmp: Path) -> Path:
    return Path(shutil.copytree(UPSTREAM / "claude-code" / "teich", tmp / "store"))


def _disk_full(tmp: Path) -> tuple[list[str], dict[str, str]]:
    """A full disk itself is filled in ``test_reliability``; here, the line the CLI prints."""
    (tmp / "o").mkdir()
    (tmp / "o" / "part").write_bytes(b"x" * 10)
    argv = ["export", str(tmp / "store"), "--out", str(tmp / "o")]
    return ["--disk-full", *argv], _places(tmp)


def _interrupted(tmp: Path) -> tuple[list[str], dict[str, str]]:
    """Ctrl-C itself is sent in ``test_first_hour``; here, the line the CLI prints for it."""
    argv = ["export", str(tmp / "store"), "--out", str(tmp / "o")]
    return ["--interrupted", *argv], _places(tmp)


SETUPS: dict[str, Setup] = {
    "`trajset export STORE --out DIR`, an input cut short": _export(),
    '`trajset export STORE --out DIR --where "outcome_score >= 0.5"`, a store without outcomes':
        _export("--where", "outcome_score >= 0.5", store=_claude),
    "`trajset verify STORE`, a last line cut short": _verify_cut,
    "`trajset export STORE --out DIR --strict`, an input cut short": _export("--strict"),
    "`trajset export STORE --out DIR`, DIR a previous export": _into_previous,
    "`trajset export STORE --out DIR`, DIR holding your own files": _into_own_files,
    "`trajset verify FILE`, a request changed after its response": _verify_changed,
    "`trajset validate DIR`, a document that breaks ATIF": _validate_broken,
    "`trajset export STORE --out DIR`, the disk full": _disk_full,
    "`trajset scan DIR`, an export written with `--no-redact`": _scan_unredacted,
    "`trajset publish DIR acme/agent-sessions`, an export that did not finish":
        _publish_unfinished,
    "`trajset export STORE --out DIR --mode resume --prefer score`, begun without it":
        _resume_other,
    '`trajset export STORE --out DIR --where "outcome_pass && n_tool_calls > 1"`':
        _export("--where", "outcome_pass && n_tool_calls > 1"),
    "`trajset export STORE --out DIR --where 'outcome_label == \"thumbs_up\"'`":
        _export("--where", 'outcome_label == "thumbs_up"'),
    "`trajset export STORE --out DIR --prefer bogus`": _export("--prefer", "bogus"),
    "`trajset export STORE --out DIR`, STORE missing": _export(store=_missing),
    "`trajset export STORE --out DIR`, STORE holding no session file": _export(store=_empty),
    "`trajset export STORE --out DIR --store-kind codex`, STORE a Claude Code store":
        _export("--store-kind", "codex", store=_claude_store),
    "`trajset report DIR --out report.html`, DIR no export": _report_no_export,
    "Ctrl-C during `trajset export STORE --out DIR`": _interrupted,
}  # fmt: skip


def test_every_row_of_the_table_has_its_situation() -> None:
    assert list(readme_rows()) == list(SETUPS)


def printed(argv: list[str], places: dict[str, str]) -> tuple[int, str]:
    """Exit code and output of ``argv`` with the test's paths put back as placeholders."""
    if argv[0] == "--interrupted":
        code, out = 130, f"trajset: {interrupted_message(argv[1:])}"
    elif argv[0] == "--disk-full":
        full = OSError(errno.ENOSPC, "No space left on device")
        code, out = 1, f"trajset: {disk_full_message(full, argv[4], argv[1:])}"
    else:
        result = RUN.invoke(app, argv)
        code, out = result.exit_code, result.output
    for real in sorted(places, key=len, reverse=True):
        out = out.replace(real, places[real])
    return code, out


def in_order(message: str, output: str) -> bool:
    """Whether ``output`` holds ``message`` with each ``…`` standing for any text on one line."""
    pattern = ".*?".join(re.escape(piece) for piece in message.split("…"))
    return re.search(pattern, output) is not None


@pytest.mark.parametrize("when", list(SETUPS))
def test_the_command_prints_what_the_table_says(when: str, tmp_path: Path) -> None:
    code, message = readme_rows()[when]
    argv, places = SETUPS[when](tmp_path)
    got_code, output = printed(argv, places)
    assert got_code == code, output
    assert in_order(message, output), f"README says:\n{message}\nthe command prints:\n{output}"


def test_a_changed_message_breaks_the_match() -> None:
    message = readme_rows()["`trajset export STORE --out DIR --prefer bogus`"][1]
    assert in_order(message, f"x\n{message}\n")
    assert not in_order(message, message.replace("valid", "allowed"))
    assert not in_order("a … b", "a\nb")
