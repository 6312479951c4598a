"""Finding sessions: files and folders (the jsonl store layout), the registry, unreadable units."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from trajset.pipeline import (
    ExportOptions,
    RunOptions,
    discover,
    read_session,
    run_export,
    sample_store,
)
from trajset.pipeline.errors import SessionReadError, UsageError
from trajset.pipeline.stores import READERS, detect_kind, registry

from .conftest import UPSTREAM, session_file

#: a Gemini CLI project's chats
GEMINI_CHATS = (
    UPSTREAM / "gemini-cli" / "synthetic" / "gemini-home" / "tmp" / "recipe-box" / "chats"
)


def test_folder_discovery_is_recursive_and_sorted() -> None:
    labels = [u.label for u in discover([sample_store()])]
    assert labels == sorted(labels) and len(labels) == 6
    assert all(Path(label).parent.parent == sample_store() for label in labels)


def test_missing_store_and_unknown_kind_are_usage_errors(tmp_path: Path) -> None:
    with pytest.raises(UsageError):
        discover([tmp_path / "nope"])
    with pytest.raises(UsageError, match="valid"):
        discover([sample_store()], kind="parquet")


def test_unreadable_units_are_accounted_for(agentsession_data: Path, tmp_path: Path) -> None:
    store = tmp_path / "store"
    store.mkdir()
    for n in ["basic", "corrupt-middle", "duplicate-id", "truncated", "bad-first-kept"]:
        (store / f"{n}.jsonl").write_bytes(session_file(n).read_bytes())
    run = run_export([store], tmp_path / "out", ExportOptions(), RunOptions(workers=1))
    c = run.counts
    assert c["sessions_read"] == 5 == c["sessions_exported"] + c["sessions_failed"]
    kinds = sorted(e.kind for e in run.errors)
    assert (
        kinds.count("bad_line") == 1 and kinds.count("duplicate_id") == 1 and "truncated" in kinds
    )
    assert "context" in kinds  # the bad-first-kept leaf
    lines = {e.kind: e.line for e in run.errors}
    assert lines["duplicate_id"] and lines["bad_line"]


def test_read_error_is_raised_for_an_unreadable_file(tmp_path: Path) -> None:
    with pytest.raises(SessionReadError) as info:
        read_session(tmp_path / "absent.jsonl")
    assert info.value.rule == "io"


def test_counts_that_do_not_add_up_are_an_internal_error_exit_1() -> None:
    from trajset.pipeline.cli.errors import exit_code
    from trajset.pipeline.errors import InvariantBroken
    from trajset.pipeline.run.ledger import Ledger

    ledger = Ledger()
    ledger.session_read(2)
    ledger.session_exported()
    with pytest.raises(
        InvariantBroken, match="sessions read \\(2\\) != exported \\(1\\)"
    ) as caught:
        ledger.check()
    assert exit_code(caught.value) == 1
    ledger.session_failed()
    ledger.check()


def test_a_session_files_fingerprint_is_of_the_bytes_its_reader_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No second read of a single-file unit for its fingerprint (``file_fingerprint`` is not
    called), and the manifest's fingerprints are those of the files."""
    import hashlib
    import json

    from trajset.pipeline import ExportOptions, RunOptions, run_export, sample_store
    from trajset.pipeline.stores import base

    store = tmp_path / "store"
    shutil.copytree(sample_store(), store)
    again: list[tuple[str, ...]] = []
    read_again = base.file_fingerprint
    monkeypatch.setattr(base, "file_fingerprint", lambda p: again.append(p) or read_again(p))
    out = tmp_path / "out"
    run_export([store], out, ExportOptions(), RunOptions(workers=1))
    assert not again
    files = sorted(store.rglob("*.jsonl"))
    inputs = json.loads((out / "manifest.json").read_text())["inputs"]
    assert {i["sha256"] for i in inputs} == {
        "sha256:" + hashlib.sha256(f.read_bytes()).hexdigest() for f in files
    }


def test_files_reached_through_links_are_known_by_their_real_paths(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Discovery tells the same file reached by several paths apart by its real path,
    resolving each folder once: through a linked folder (at any depth above the file), a
    linked file, a step back (``..``), a relative path, or none."""
    from trajset.pipeline.stores.regular import RealPaths

    real = tmp_path / "real" / "deep"
    (real / "er").mkdir(parents=True)
    (real / "a.jsonl").write_text("{}\n")
    (real / "er" / "c.jsonl").write_text("{}\n")
    (tmp_path / "via").symlink_to(tmp_path / "real", target_is_directory=True)
    (real / "b.jsonl").symlink_to(real / "a.jsonl")
    via = tmp_path / "via" / "deep"
    paths = [real / "a.jsonl", via / "a.jsonl", real / "b.jsonl", via / "b.jsonl",
             via / "missing", via / "er" / "c.jsonl", via / "er" / ".." / "a.jsonl",
             tmp_path / "via" / ".." / "real" / "deep" / "er" / "c.jsonl"]  # fmt: skip
    monkeypatch.chdir(tmp_path)
    paths += [Path("via/deep/er/c.jsonl"), Path("real/deep/a.jsonl"), Path("c.jsonl")]
    resolve = RealPaths()
    for _ in range(2):  # resolved, then from the folders remembered
        assert [resolve(str(p)) for p in paths] == [os.path.realpath(p) for p in paths]
    assert len({resolve(str(p)) for p in paths[:4]}) == 1


def test_a_file_two_readers_claim_goes_to_the_more_specific(tmp_path: Path) -> None:
    """A Gemini CLI chat's first line has a ``sessionId``, so the Claude Code reader claims
    it too (``Match.LAYOUT``); its ``projectHash`` is Gemini's own marker, which wins."""
    [chat] = sorted(GEMINI_CHATS.glob("*.jsonl"))[:1]
    one = Path(shutil.copy(chat, tmp_path / chat.name))
    claims = {k for k, r in READERS.items() if r.detect(one)}
    assert {"gemini-cli", "claude-code", "agentsession"} <= claims
    assert detect_kind(one) == "gemini-cli"


def test_two_kinds_that_claim_a_store_alike_are_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No order decides between equally specific readers: the user names the kind."""
    from .toy_reader import ToyReader, write_toy_store

    class Twin(ToyReader):
        kind = "toy-twin"

    monkeypatch.setattr(
        "trajset.pipeline.stores.READERS", registry(*READERS.values(), ToyReader(), Twin())
    )
    write_toy_store(tmp_path / "toys", 1)
    with pytest.raises(UsageError, match=r"each of toy, toy-twin; name its kind with --store"):
        detect_kind(tmp_path / "toys")
