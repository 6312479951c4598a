"""Publishing a growing store: only new and changed rows and files are sent, rows load once.

Through the folder-backed Hub double (``hub_double.py``): a store of four sessions is
published; it grows by two sessions and one of its sessions gets another turn; the second
publish must send only those three sessions' rows and documents (and the generated card,
manifest and index), leave the others' files untouched, take the changed session's old rows
out, and leave a repository that ``load_dataset`` reads with every row once and whose card
counts what it holds.  Then a rule-set change, ``--prune`` and a repository no index describes.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from trajset.pipeline import ExportOptions, Mode, RunOptions, run_export
from trajset.pipeline.cli import app
from trajset.pipeline.publish import INDEX, PublishRefused, plan, upload
from trajset.pipeline.tables import CONFIGS
from trajset.redactors.identities import key_id

from .builder import SessionBuilder
from .hub_double import FolderHub

REPO = "acme/sessions"
KEY = "0f3c9a1e7b2d4c6f8a0b1c2d3e4f5a6b"  # a weekly publisher's --pseudonym-key-env value
#: what names a row of each table (with its content: a changed row is another row)
KEYS = {
    "trajectories": ("session_id", "leaf_id", "content_hash", "n_steps"),
    "sft": ("session_id", "leaf_id", "window", "n_messages"),
    "steps": ("session_id", "leaf_id", "step_id", "entry_id"),
    "preferences": ("pair_id", "session_id"),
    "kto": ("kto_id", "session_id"),
}


def _session(n: int, turns: int = 1) -> str:
    b = SessionBuilder(f"s-{n}", cwd=f"/work/p{n}", hashes=False)
    b.config(model="gpt-5", instructions="You are a careful coding agent.")
    for t in range(turns):
        b.user(f"Task {n}, step {t}: fix the failing test in src/mod{n}.py")
        b.respond(calls=[(f"c{t}", "bash", {"cmd": f"pytest -q tests/test_{n}.py"})], model="gpt-5")
        b.tool_output(f"c{t}", f"1 failed, {t} passed")
        b.respond(text=f"Fixed step {t} of task {n}.", model="gpt-5")
    return b.text()


def _store(root: Path, sessions: dict[int, int]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for old in root.glob("*.jsonl"):
        old.unlink()
    for n, turns in sessions.items():
        (root / f"s-{n}.jsonl").write_text(_session(n, turns))
    return root


def _export(store: Path, out: Path, key: str = KEY, **options: Any) -> Path:
    """The store exported with traces; identities named under ``key`` ("" numbers them)."""
    run = RunOptions(workers=1, mode=Mode.overwrite, pseudonym_key=key)
    keyed = key_id(key) if key else ""
    run_export([store], out, ExportOptions(traces=True, pseudonym_key_id=keyed, **options), run)
    return out


def _publish(hub: FolderHub, out: Path, **kw: Any) -> list[str]:
    """Publish; the data files the commit sent (card, manifest and index aside)."""
    upload(plan(out, REPO, client=hub, **kw), hub)
    generated = {"README.md", "manifest.json", INDEX}
    return [f for f in hub.commits[-1].added if f not in generated]


def _rows(repo: Path, config: str, cache: Path) -> list[dict[str, Any]]:
    from datasets import load_dataset

    rows: list[dict[str, Any]] = list(
        load_dataset(str(repo), config, split="train", cache_dir=str(cache))
    )
    return rows


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")


def test_a_grown_store_sends_only_new_and_changed_rows_and_loads_each_row_once(
    tmp_path: Path, offline: None
) -> None:
    hub, store = FolderHub(tmp_path / "hub"), tmp_path / "store"
    first = _export(_store(store, {1: 1, 2: 1, 3: 1, 4: 1}), tmp_path / "a")
    sent = _publish(hub, first)
    assert any(f.startswith("data/trajectories/") for f in sent)
    repo = hub.folder(REPO)
    before = {p.relative_to(repo).as_posix(): p.read_bytes() for p in repo.rglob("*")
              if p.is_file()}  # fmt: skip

    # two sessions more, and session 2 continued by a turn
    second = _export(_store(store, {1: 1, 2: 2, 3: 1, 4: 1, 5: 1, 6: 1}), tmp_path / "b")
    sent = _publish(hub, second)
    docs = sorted(f for f in sent if f.startswith(("atif/", "traces/")))
    assert {d.rsplit("/", 1)[1].split(".")[0].split("_")[0] for d in docs} == {"s-2", "s-5", "s-6"}
    shards = [f for f in sent if f.startswith("data/")]
    assert shards and all(pq.read_table(second / f if (second / f).exists() else repo / f)
                          for f in shards)  # fmt: skip
    new_rows = Counter(r["session_id"] for f in shards for r in pq.read_table(repo / f).to_pylist())
    old_shards = [f for f in shards if f in before]  # rewritten: s-2's old rows taken out
    assert set(new_rows) - {"s-1", "s-3", "s-4"} == {"s-2", "s-5", "s-6"}
    for f in shards:
        if f not in old_shards:  # a new shard holds only the new and changed sessions' rows
            assert {r["session_id"] for r in pq.read_table(repo / f).to_pylist()} <= {
                "s-2",
                "s-5",
                "s-6",
            }
    unchanged = [f for f in before if f.startswith("atif/s-1") or f.startswith("atif/s-3")]
    assert unchanged and not set(unchanged) & set(sent)

    # the repository loads as one dataset: each row once, the export's rows exactly
    for config, key in KEYS.items():
        mine = Counter(tuple(r[k] for k in key) for r in _local(second, config))
        if not mine:
            continue
        got = Counter(
            tuple(r[k] for k in key) for r in _rows(repo, config, tmp_path / "cache" / config)
        )
        assert got == mine and max(got.values()) == 1, config
    card = (repo / "README.md").read_text(encoding="utf-8")
    manifest = json.loads((repo / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["counts"]["trajectories"] == len(_local(second, "trajectories"))
    assert manifest["counts"]["sessions_exported"] == 6
    assert f"| trajectories | {manifest['counts']['trajectories']} |" in card
    assert "* agentsession: 6 session(s)" in card and "by `dana`" in card
    assert "(visibility unchanged)" in card  # a repository that existed keeps its own
    assert CliRunner().invoke(app, ["validate", str(repo)]).exit_code == 0


def _local(out: Path, table: str) -> list[dict[str, Any]]:
    return [r for f in sorted((out / "data" / table).glob("*.parquet"))
            for r in pq.read_table(f).to_pylist()]  # fmt: skip


def test_publishing_the_same_export_again_sends_no_data(tmp_path: Path) -> None:
    hub = FolderHub(tmp_path / "hub")
    out = _export(_store(tmp_path / "store", {1: 1, 2: 1}), tmp_path / "a")
    _publish(hub, out)
    assert _publish(hub, out) == [] and hub.commits[-1].deleted == []


def test_sessions_gone_from_the_store_stay_unless_pruned(tmp_path: Path) -> None:
    hub, store = FolderHub(tmp_path / "hub"), tmp_path / "store"
    _publish(hub, _export(_store(store, {1: 1, 2: 1, 3: 1}), tmp_path / "a"))
    smaller = _export(_store(store, {1: 1, 3: 1}), tmp_path / "b")
    assert _publish(hub, smaller) == []  # s-2 stays: nothing to send
    repo = hub.folder(REPO)
    assert {r["session_id"] for r in _local(repo, "trajectories")} == {"s-1", "s-2", "s-3"}
    _publish(hub, smaller, prune=True)
    assert {r["session_id"] for r in _local(repo, "trajectories")} == {"s-1", "s-3"}
    assert not list(repo.glob("atif/s-2*")) and not list(repo.glob("traces/*/s-2*"))
    assert "atif/s-2.json" in hub.commits[-1].deleted


def test_a_rule_set_change_never_leaves_rows_of_two_versions(tmp_path: Path) -> None:
    hub, store = FolderHub(tmp_path / "hub"), tmp_path / "store"
    _publish(hub, _export(_store(store, {1: 1, 2: 1}), tmp_path / "a"))
    # the store lost s-2; the rules changed (pii added): s-1 is re-exported, s-2 cannot be
    changed = _export(_store(store, {1: 1}), tmp_path / "b", redact_rules=_with_pii())
    with pytest.raises(PublishRefused, match=r"1 session\(s\) .*--prune"):
        plan(changed, REPO, client=hub)
    # with the store whole again, every session is re-exported under the new rules
    whole = _export(_store(store, {1: 1, 2: 1}), tmp_path / "c", redact_rules=_with_pii())
    _publish(hub, whole)
    repo = hub.folder(REPO)
    for table in CONFIGS:
        stamps = {r["redaction_version"] for r in _local(repo, table)}
        new = ExportOptions(redact_rules=_with_pii(), pseudonym_key_id=key_id(KEY))
        assert stamps <= {new.redaction_version()}, table
    # and the refused export publishes once the sessions it lacks are pruned
    _publish(hub, changed, prune=True)
    assert {r["session_id"] for r in _local(repo, "trajectories")} == {"s-1"}


def _with_pii() -> tuple[str, ...]:
    from trajset.redactors import selected_rules

    return tuple(selected_rules(["pii"]))


def test_a_repository_no_index_describes_is_replaced_only_when_pruned(tmp_path: Path) -> None:
    hub = FolderHub(tmp_path / "hub")
    out = _export(_store(tmp_path / "store", {1: 1}), tmp_path / "a")
    hub.create_repo(REPO, repo_type="dataset", private=True, exist_ok=True)
    legacy = hub.folder(REPO) / "data" / "trajectories" / "train-00000-of-00001.parquet"
    legacy.parent.mkdir(parents=True)
    legacy.write_bytes(b"PAR1 published by hand")
    with pytest.raises(PublishRefused, match=r"no trajset index describes .*--prune"):
        plan(out, REPO, client=hub)
    _publish(hub, out, prune=True)
    assert (hub.folder(REPO) / INDEX).exists()
    assert pq.read_table(legacy).num_rows == len(_local(out, "trajectories"))


def test_the_cli_publishes_through_the_client_and_prints_the_merge(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hub = FolderHub(tmp_path / "hub")
    monkeypatch.setattr(sys.modules["trajset.pipeline.cli.publish"], "hub_client", lambda: hub)
    out = _export(_store(tmp_path / "store", {1: 1, 2: 1}), tmp_path / "a")
    args = ["publish", str(out), REPO, "--license", "apache-2.0"]
    dry = CliRunner().invoke(app, [*args, "--dry-run"])
    assert dry.exit_code == 0, dry.output
    assert "merge: 2 session(s) of the export, 0 kept" in dry.output and not hub.commits
    done = CliRunner().invoke(app, args)
    assert done.exit_code == 0, done.output
    card = (hub.folder(REPO) / "README.md").read_text(encoding="utf-8")
    assert "license: apache-2.0" in card and "under the licence `apache-2.0`" in card
    assert f"`{REPO}` (private) by `dana`" in card and hub.private[REPO] is True


def test_numbered_pseudonyms_resend_what_a_new_identity_renumbers_and_never_duplicate(
    tmp_path: Path,
) -> None:
    """Without a key, identities are numbered per export: a session whose working folder's
    number moves is sent again (its rows replace the old ones, never beside them)."""
    hub, store = FolderHub(tmp_path / "hub"), tmp_path / "store"
    _publish(hub, _export(_store(store, {2: 1, 3: 1}), tmp_path / "a", key=""))
    grown = _export(_store(store, {1: 1, 2: 1, 3: 1}), tmp_path / "b", key="")  # p1 comes first
    sent = _publish(hub, grown)
    assert "atif/s-2.json" in sent  # workdir_1 became workdir_2
    repo = hub.folder(REPO)
    keys = Counter((r["session_id"], r["leaf_id"]) for r in _local(repo, "trajectories"))
    assert keys == Counter((r["session_id"], r["leaf_id"]) for r in _local(grown, "trajectories"))


def test_keyed_pseudonyms_are_stable_and_name_no_one(tmp_path: Path) -> None:
    a = _export(_store(tmp_path / "s1", {2: 1}), tmp_path / "a")
    b = _export(_store(tmp_path / "s2", {1: 1, 2: 1}), tmp_path / "b")
    assert (a / "atif" / "s-2.json").read_bytes() == (b / "atif" / "s-2.json").read_bytes()
    text = (a / "atif" / "s-2.json").read_text(encoding="utf-8")
    assert "/work/p2" not in text and "workdir_" in text and "workdir_1" not in text
    other = _export(_store(tmp_path / "s3", {2: 1}), tmp_path / "c", key="another-key-0123456789")
    assert (other / "atif" / "s-2.json").read_bytes() != (a / "atif" / "s-2.json").read_bytes()
