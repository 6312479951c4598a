"""``identity_v1``: owners, participants, working folders, remotes and branches become
pseudonyms stable per export (issue: privacy for real stores, item 5).

The reader contract (``test_reader_contract.py``) checks every reader's fixtures: no value
of a field a reader declares reaches an output.  Here: what each kind matches, what is
left alone, numbering across sessions, units and worker counts, the manifest, resume.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import asdict
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from trajset.pipeline import ExportOptions, RunOptions, run_export
from trajset.pipeline.options import Mode, RunSettings
from trajset.redactors import Identity, Placeholders, Pseudonyms, build_redactor, selected_rules

from .builder import SessionBuilder
from .exports import data_files
from .planting import leaks

UPSTREAM = Path(__file__).parent / "data" / "upstream"
PEOPLE = [
    Identity("user", "alice"),
    Identity("user", "Alice Johnson"),
    Identity("workdir", "/workspace/alice/app"),
    Identity("repo", "https://github.com/acme/bluebird.git"),
    Identity("branch", "alice/login-fix"),
]


def _redact(text: str, people: list[Identity] = PEOPLE) -> str:
    return build_redactor(selected_rules(), identities=people).text(text, Placeholders())


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("cd /workspace/alice/app/src && ls", "cd workdir_1/src && ls"),
        ("/workspace/alice/app", "workdir_1"),
        (
            "alice asked Alice.Johnson, ALICE and alice_johnson",
            "user_1 asked user_2, user_1 and user_2",
        ),
        ("ping alice@", "ping user_1@"),
        ("git clone https://github.com/acme/bluebird.git", "git clone repo_1"),
        (
            "see https://github.com/acme/bluebird/pulls and acme/bluebird",
            "see repo_1/pulls and repo_1",
        ),
        ("git checkout alice/login-fix", "git checkout branch_1"),
        ("~/.claude/projects/-workspace-alice-app/s.jsonl", "~/.claude/projects/workdir_1/s.jsonl"),
        ("sessions/--workspace-alice-app--/s.jsonl", "sessions/workdir_1/s.jsonl"),
    ],
)
def test_every_mention_of_an_identity_becomes_its_pseudonym(text: str, expected: str) -> None:
    assert _redact(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "malice and palace, /workspace/alice/apps, /workspace/alice/app2",
        "Alicein wonderland; xalice",
        "branch alice/login-fixes and the main branch",
        "https://github.com/acme/bluebirds",
    ],
)
def test_text_that_only_looks_like_an_identity_is_left_alone(text: str) -> None:
    """The user ``alice`` is named in ``/workspace/alice/apps`` and ``alice/login-fixes``
    (``user_1/…``); nothing else in these strings is a mention."""
    assert _redact(text) == text.replace("alice/", "user_1/")


def test_values_that_name_no_one_are_not_pseudonymised() -> None:
    rule = Pseudonyms.of(
        [Identity("user", "root"), Identity("user", "al"), Identity("branch", "main"),
         Identity("branch", "conversations"),
         Identity("workdir", "/app"), Identity("workdir", "/home/alice/app"),
         Identity("workdir", "C:\\Users\\alice\\app"), Identity("workdir", "relative/dir"),
         Identity("kind-unknown", "alice")]
    )  # fmt: skip
    assert not rule.active and sum(rule.counts.values()) == 0


def test_numbering_is_per_kind_in_the_order_given_and_one_per_value() -> None:
    rule = Pseudonyms.of(
        [Identity("workdir", "/srv/b"), Identity("user", "bob"), Identity("user", "BOB"),
         Identity("workdir", "/srv/a/"), Identity("user", "carol")]
    )  # fmt: skip
    assert rule.counts == {"user": 2, "workdir": 2, "repo": 0, "branch": 0}
    assert [rule.pseudonym(v) for v in ("/srv/b", "Bob", "/srv/a", "carol")] == [
        "workdir_1", "user_1", "workdir_2", "user_2"
    ]  # fmt: skip


def _store(root: Path) -> Path:
    """Two units: sessions of one team with owners, a remote, a branch and a working folder."""
    store = root / "store"
    store.mkdir()
    codex = {"git": {"repository_url": "git@github.com:acme/bluebird.git", "branch": "alice/wip"}}
    for n, owner in enumerate(["alice", "bob"]):
        b = SessionBuilder(f"s-{n}", cwd=f"/workspace/{owner}/bluebird", hashes=False,
                           **{"einox:owner": owner, "codex:meta": codex})  # fmt: skip
        b.user(f"I am {owner}; clone git@github.com:acme/bluebird.git, branch alice/wip")
        b.respond(
            calls=[("c1", "bash", {"cmd": f"cd /workspace/{owner}/bluebird && git log"})],
            model="m",
        )
        b.tool_output("c1", "Author: alice <alice@corp.example> and bob")
        b.respond(text=f"Done, {owner}.", model="m")
        (store / f"s-{n}.jsonl").write_text(b.text())
    return store


def test_one_person_has_one_pseudonym_across_units_and_worker_counts(tmp_path: Path) -> None:
    store = _store(tmp_path)
    one_each = RunSettings(batch_mean_units=1)
    outs = []
    for workers in (1, 2):
        out = tmp_path / f"out-{workers}"
        run_export([store], out, ExportOptions(), RunOptions(workers=workers, settings=one_each))
        outs.append(out)
    assert data_files(outs[0]) == data_files(outs[1])
    assert not leaks(outs[0], ["alice", "bob", "/workspace", "acme/bluebird"], [], prefix=None)
    rows = pq.read_table(outs[0] / "data" / "steps").to_pylist()
    text = json.dumps(rows)
    assert "I am user_1" in text and "I am user_2" in text  # alice in s-0, bob in s-1
    assert "Author: user_1 <[REDACTED:email:1]> and user_2" in text  # in both sessions
    assert "cd workdir_1 && git log" in text and "cd workdir_2 && git log" in text
    assert "clone repo_1, branch branch_1" in text
    manifest = (outs[0] / "manifest.json").read_text()
    report = json.loads(manifest)["redaction"]
    assert report["identities"] == {"user": 2, "workdir": 2, "repo": 1, "branch": 1}
    assert "identity_v1" in report["rules"] and "alice" not in manifest


def test_no_redact_and_a_rule_list_without_it_keep_identities(tmp_path: Path) -> None:
    store = _store(tmp_path)
    out = tmp_path / "raw"
    run_export([store], out, ExportOptions(redact=False), RunOptions(workers=1))
    assert "/workspace/alice/bluebird" in json.dumps(
        pq.read_table(out / "data" / "steps").to_pylist()
    )


def test_einox_owners_and_participants_are_pseudonyms(tmp_path: Path) -> None:
    store = shutil.copytree(UPSTREAM / "einox" / "synthetic" / "data", tmp_path / "einox")
    path = next((store / "users" / "alice" / "sessions").glob("*/session.json"))
    record = json.loads(path.read_text())
    record["participants"] = [{"id": "u-carol", "name": "Carol Diaz", "role": "reviewer"}]
    record["title"] = "Review with Carol Diaz (u-carol) for alice"
    path.write_text(json.dumps(record, ensure_ascii=False, indent=2))
    out = tmp_path / "out"
    run = run_export([store], out, ExportOptions(), RunOptions(workers=1))
    assert not leaks(out, ["alice", "Carol", "u-carol"], run.errors, prefix=None)
    assert json.loads((out / "manifest.json").read_text())["redaction"]["identities"]["user"] == 3


def test_resume_after_a_new_identity_equals_a_fresh_export(tmp_path: Path) -> None:
    """A session added with a new owner renumbers every pseudonym after it: resume runs
    every batch again instead of keeping ones numbered the old way."""
    store = _store(tmp_path)
    (store / "s-1.jsonl").rename(store / "s-2.jsonl")
    out = tmp_path / "out"
    kept = RunOptions(workers=1, keep_state=True, settings=RunSettings(batch_mean_units=1))
    run_export([store], out, ExportOptions(), kept)
    b = SessionBuilder("s-0b", cwd="/workspace/dora/bluebird", hashes=False)
    b.user("dora here")
    b.respond(text="Hello dora.", model="m")
    (store / "s-1.jsonl").write_text(b.text())  # between the two: renumbers s-2's folder
    resume = RunOptions(workers=1, mode=Mode.resume, keep_state=True, settings=kept.settings)
    run = run_export([store], out, ExportOptions(), resume)
    assert run.counts["units_reused"] == 0
    fresh = tmp_path / "fresh"
    run_export([store], fresh, ExportOptions(), RunOptions(workers=1))
    assert data_files(out) == data_files(fresh)
    again = run_export([store], out, ExportOptions(), resume)  # nothing changed: all kept
    assert again.counts["units_reused"] == 3


def test_a_pseudonym_key_names_each_identity_alike_in_every_export(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from trajset.pipeline.errors import UsageError
    from trajset.pipeline.flags import FLAGS
    from trajset.pipeline.options import resolve
    from trajset.redactors.identities import key_id, keyed

    flags = {f.name: None for f in FLAGS}
    key = "a-long-random-key-0123456789"
    monkeypatch.setenv("PSEUDO", key)
    options, run = resolve({**flags, "pseudonym_key_env": "PSEUDO"}, None, 1)
    assert run.pseudonym_key == key and options.pseudonym_key_id == key_id(key)
    assert key not in repr(run) and key not in json.dumps(asdict(options))  # never stored
    assert options.redaction_version() != ExportOptions().redaction_version()
    alone = Pseudonyms.of([Identity("user", "alice")], key=key)
    beside = Pseudonyms.of([Identity("user", "bob"), Identity("user", "alice")], key=key)
    assert alone.pseudonym("alice") == beside.pseudonym("alice") == keyed(key, "user", "u:alice")
    assert Pseudonyms.of([Identity("user", "alice")]).pseudonym("alice") == "user_1"
    monkeypatch.setenv("PSEUDO", "short")
    with pytest.raises(UsageError, match="5 characters"):
        resolve({**flags, "pseudonym_key_env": "PSEUDO"}, None, 1)
    with pytest.raises(UsageError, match="not set"):
        resolve({**flags, "pseudonym_key_env": "UNSET_VARIABLE_X"}, None, 1)
    with pytest.raises(UsageError, match="pseudonym key"):  # an id without its key
        ExportOptions(pseudonym_key_id=key_id(key)).redactor([])
