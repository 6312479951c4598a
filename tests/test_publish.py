"""Publishing (through a recording Hub client) and a dataset folder that loads fresh every time."""

from __future__ import annotations

import json
import shutil
import sys
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet
import pytest
from typer.testing import CliRunner

from trajset.pipeline import ExportOptions, Mode, RunOptions, publish, run_export, sample_store
from trajset.pipeline.cli import app
from trajset.pipeline.errors import AbortRun
from trajset.pipeline.outputs.card import features
from trajset.pipeline.publish import PublishRefused, plan, upload
from trajset.pipeline.scan import scan_folder
from trajset.pipeline.tables import CONFIGS, TABLES
from trajset.redactors import GROUPS, build_redactor

from .conftest import session_file
from .hub_double import FolderHub

TOKEN = "hf_" + "Tk9" * 12


class RecordingHub:
    """A Hub client double: records every call; optionally fails the upload once."""

    def __init__(self, fail_upload: int = 0) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.fail_upload = fail_upload

    def create_repo(self, repo_id: str, **kw: Any) -> str:
        self.calls.append(("create_repo", {"repo_id": repo_id, **kw}))
        return repo_id

    def create_branch(self, repo_id: str, **kw: Any) -> None:
        self.calls.append(("create_branch", {"repo_id": repo_id, **kw}))

    def upload_folder(self, **kw: Any) -> str:
        if self.fail_upload:
            self.fail_upload -= 1
            raise ConnectionError(f"Max retries exceeded: /api/datasets/acme/x/commit/main {TOKEN}")
        files = sorted(
            p.relative_to(kw["folder_path"]).as_posix()
            for p in Path(kw["folder_path"]).rglob("*")
            if p.is_file() and ".trajset" not in p.relative_to(kw["folder_path"]).parts
        )
        self.calls.append(("upload_folder", {**kw, "files": files}))
        return "https://huggingface.co/datasets/acme/x/commit/abc"


@pytest.fixture(scope="module")
def exported(sample_export: Path) -> Path:
    return sample_export


def test_upload_sends_the_folder_in_one_commit_without_run_state(exported: Path) -> None:
    hub = RecordingHub()
    p = plan(exported, "acme/x", revision="v1")
    upload(p, hub)
    (_, repo), (_, branch), (_, commit) = hub.calls
    assert repo == {"repo_id": "acme/x", "repo_type": "dataset", "private": True, "exist_ok": True}
    assert branch["branch"] == "v1" and branch["repo_type"] == "dataset"
    assert commit["repo_id"] == "acme/x" and commit["revision"] == "v1" and not commit["create_pr"]
    assert (
        commit["commit_message"]
        == "trajset 0.1.0: 8 trajectories, 4 preference pairs from 6 sessions"
    )
    assert ".trajset" in " ".join(commit["ignore_patterns"])
    assert commit["files"] == [rel for rel, _ in p.files]
    assert "manifest.json" in commit["files"] and not any(".trajset" in f for f in commit["files"])


def test_a_failed_upload_is_one_line_and_a_rerun_completes(exported: Path) -> None:
    hub = RecordingHub(fail_upload=1)
    p = plan(exported, "acme/x", private=False)
    with pytest.raises(AbortRun, match="run the same command again") as info:
        upload(p, hub)
    assert "\n" not in str(info.value) and TOKEN not in str(info.value)
    upload(p, hub)
    assert [c for c, _ in hub.calls].count("upload_folder") == 1
    assert hub.calls[0][1]["private"] is False


class LargeFolderHub(RecordingHub):
    """A Hub client of huggingface_hub 0.25 to 1.x: ``upload_large_folder`` commits a file at
    a time and records each in the folder's ``.cache/huggingface/upload/`` with the library's
    own layout, skipping on a re-run what is recorded, as the library does; ``fail_after``
    commits, the first call fails."""

    def __init__(self, fail_after: int | None = None) -> None:
        super().__init__()
        self.fail_after = fail_after
        self.sent: list[str] = []

    def upload_large_folder(self, **kw: Any) -> None:
        from huggingface_hub._local_folder import get_local_upload_paths

        folder = Path(kw["folder_path"])
        self.calls.append(("upload_large_folder", kw))
        for p in sorted(folder.rglob("*")):
            rel = p.relative_to(folder).as_posix()
            if not p.is_file() or any(fnmatch(rel, pat) for pat in kw["ignore_patterns"]):
                continue
            done = get_local_upload_paths(folder, rel).metadata_path
            if done.exists():
                continue
            if self.fail_after is not None and len(self.sent) == self.fail_after:
                self.fail_after = None
                raise ConnectionError("Max retries exceeded with url: /api/datasets/acme/x/commit")
            self.sent.append(rel)
            done.write_text("committed")


def test_a_large_folder_is_sent_resumably_and_a_rerun_sends_only_what_is_missing(
    exported: Path, tmp_path: Path
) -> None:
    folder = shutil.copytree(exported, tmp_path / "ds")
    limits = (3, publish.LARGE_BYTES)  # a folder of more than three files is large
    p = plan(folder, "acme/x", revision="v2", limits=limits)
    assert p.large and "sent as a large folder" in " ".join(p.lines())
    hub = LargeFolderHub(fail_after=4)
    with pytest.raises(AbortRun, match="only what is missing is sent"):
        upload(p, hub)
    assert len(hub.sent) == 4
    again = plan(folder, "acme/x", revision="v2", limits=limits)  # the upload's records pass
    assert again.files == p.files
    upload(again, hub)
    assert sorted(hub.sent) == [rel for rel, _ in p.files]  # each file sent once
    calls = [kw for name, kw in hub.calls if name == "upload_large_folder"]
    assert len(calls) == 2 and calls[0] == calls[1]
    assert calls[0]["repo_type"] == "dataset" and calls[0]["revision"] == "v2"
    assert calls[0]["private"] is True and "upload_folder" not in [c for c, _ in hub.calls]
    assert scan_folder(folder, build_redactor(list(GROUPS["default"]))) == {}
    with pytest.raises(PublishRefused, match="--revision NAME"):
        upload(plan(folder, "acme/x", create_pr=True, limits=limits), hub)
    later = RecordingHub()  # huggingface_hub 2: upload_folder commits a large folder in parts
    upload(plan(folder, "acme/x", limits=limits), later)
    assert [c for c, _ in later.calls] == ["create_repo", "upload_folder"]


def test_refusals(exported: Path, tmp_path: Path) -> None:
    raw = tmp_path / "raw"
    run_export([sample_store()], raw, ExportOptions(redact=False), RunOptions(workers=1))
    with pytest.raises(PublishRefused, match="--no-redact"):
        plan(raw, "acme/x")
    assert plan(raw, "acme/x", allow_unredacted=True).files
    partial = tmp_path / "partial"
    shutil.copytree(exported, partial)
    (partial / "manifest.json").unlink()
    with pytest.raises(PublishRefused, match="partial or did not finish"):
        plan(partial, "acme/x")
    broken = tmp_path / "broken"
    shutil.copytree(exported, broken)
    shutil.rmtree(broken / "data" / "steps")
    with pytest.raises(PublishRefused, match="validate found"):
        plan(broken, "acme/x")
    empty = tmp_path / "empty"
    (tmp_path / "nothing").mkdir()
    (tmp_path / "nothing" / "e.jsonl").write_bytes(session_file("corrupt-middle").read_bytes())
    run_export([tmp_path / "nothing"], empty, ExportOptions(), RunOptions(workers=1))
    with pytest.raises(PublishRefused, match="no trajectory"):
        plan(empty, "acme/x")
    leaky = tmp_path / "leaky"
    shutil.copytree(exported, leaky)
    doc = next((leaky / "atif").glob("*.json"))
    doc.write_text(
        doc.read_text().replace(
            '"ATIF-v1.8"', '"ATIF-v1.8", "notes": "mail bob.smith@corp.example"', 1
        )
    )
    with pytest.raises(PublishRefused, match=r"scan finds 1 value\(s\).*email_v3 in atif/"):
        plan(leaky, "acme/x")


DISCORD = "MTIzNDU2Nzg5MDEyMzQ1Njc4.GaBcDe.Zq8Lm2Np4Rs6Tv8Xw0Yb1Cd3Ef5"


@pytest.mark.parametrize(
    ("planted", "rule"),
    [
        # a token our rules have no pattern for: the second opinion is what catches it
        (f"bot {DISCORD} online", "Discord Bot Token"),
        # what detect-secrets flagged in a real Codex store and is harmless
        ("apiKey: 'ollama',", "Secret Keyword"),
    ],
)
def test_a_second_opinion_finding_is_named_refused_and_can_be_accepted(
    exported: Path, tmp_path: Path, planted: str, rule: str, runner: CliRunner
) -> None:
    folder = tmp_path / "second"
    shutil.copytree(exported, folder)
    card = folder / "README.md"
    card.write_text(card.read_text() + f"\n{planted}\n")
    line = len(card.read_text().splitlines())
    scanned = runner.invoke(app, ["scan", str(folder)])
    assert scanned.exit_code == 1
    found = [x for x in scanned.output.splitlines() if ": detect-secrets: " in x]
    assert len(found) == 1 and found[0].startswith(
        f"README.md: line {line}: detect-secrets: {rule}"
    )
    assert planted.split()[1] not in scanned.output  # never the value
    finding = found[0].rsplit("(id ", 1)[1].rstrip(")")
    with pytest.raises(PublishRefused, match=f"{rule} in README.md .*--accept {finding}"):
        plan(folder, "acme/x")
    assert plan(folder, "acme/x", accept=frozenset({finding})).files
    accepted = runner.invoke(app, ["scan", str(folder), "--accept", finding])
    assert accepted.exit_code == 0, accepted.output


def test_dry_run_prints_the_plan_and_never_the_token(
    exported: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    hub = FolderHub(tmp_path / "hub")  # the plan reads what the repository holds: none yet
    monkeypatch.setattr(sys.modules["trajset.pipeline.cli.publish"], "hub_client", lambda: hub)
    result = CliRunner().invoke(app, ["publish", str(exported), "acme/x", "--dry-run", "--public"])
    assert result.exit_code == 0, result.output
    out = result.output
    assert (
        "repo acme/x (dataset, public), revision main" in out and "dry run: nothing was sent" in out
    )
    assert "manifest.json" in out and ".trajset" not in out and TOKEN not in out
    refused = CliRunner().invoke(app, ["publish", str(exported / "atif"), "acme/x", "--dry-run"])
    assert refused.exit_code == 1 and TOKEN not in refused.output
    assert not hub.commits


def test_a_repository_that_cannot_be_read_is_one_line_and_nothing_is_sent(
    exported: Path, tmp_path: Path
) -> None:
    class Down(FolderHub):
        def list_repo_files(self, repo_id: str, **kw: Any) -> list[str]:
            raise ConnectionError(f"Max retries exceeded with url: /api/datasets/{repo_id} {TOKEN}")

    with pytest.raises(AbortRun, match="nothing was sent") as info:
        plan(exported, "acme/x", client=Down(tmp_path / "hub"))
    assert "\n" not in str(info.value) and TOKEN not in str(info.value)


# --------------------------------------------------------------------------- the folder itself


def _load(folder: Path, config: str, cache: Path) -> Any:
    from datasets import load_dataset

    return load_dataset(str(folder), config, split="train", cache_dir=str(cache))


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")


def test_folders_of_the_same_name_load_their_own_rows(tmp_path: Path, offline: None) -> None:
    a, b, cache = tmp_path / "x" / "ds", tmp_path / "y" / "ds", tmp_path / "cache"
    run_export([sample_store()], a, ExportOptions(), RunOptions(workers=1))
    run_export([session_file("basic")], b, ExportOptions(), RunOptions(workers=1))
    assert _load(a, "trajectories", cache).num_rows == 8
    assert _load(b, "trajectories", cache).num_rows == 1
    run_export(
        [session_file("branch")], a, ExportOptions(), RunOptions(workers=1, mode=Mode.overwrite)
    )
    assert _load(a, "trajectories", cache).num_rows == 2  # the re-export, not the cached rows


def test_a_store_without_forks_or_outcomes_loads_every_config_of_its_card(
    tmp_path: Path, offline: None
) -> None:
    from huggingface_hub import DatasetCard

    out = tmp_path / "ds"
    run_export([session_file("basic")], out, ExportOptions(), RunOptions(workers=1))
    card = DatasetCard.load(out / "README.md")
    configs = [c["config_name"] for c in card.data.to_dict()["configs"]]
    assert "preferences" not in configs and "trajectories" in configs
    assert "not configs, since `datasets` cannot load an empty split" in card.text
    for config in configs:
        assert _load(out, config, tmp_path / "cache").num_rows > 0
    infos = {i["config_name"]: i for i in card.data.to_dict()["dataset_info"]}
    assert set(infos) == set(configs) and set(configs) <= set(CONFIGS)
    assert all(
        i["splits"][0]["num_examples"] > 0 and i["download_checksums"] for i in infos.values()
    )
    assert CliRunner().invoke(app, ["validate", str(out)]).exit_code == 0
    assert json.loads((out / "manifest.json").read_text())["tables"]["preferences"]["rows"] == 0


@pytest.mark.parametrize("name", list(TABLES))
def test_card_features_are_what_datasets_derives_from_the_schema(name: str) -> None:
    from datasets import Features

    table = TABLES[name]
    ours = features(table.schema, table.json_fields)
    # the fields a trainer reads as objects are JSON columns to datasets (its Json() feature)
    schema = _json_typed(table.schema, table.json_fields)
    assert ours == Features.from_arrow_schema(schema)._to_yaml_list()
    assert Features._from_yaml_list(ours) == Features.from_arrow_schema(schema)  # reads back


def _json_typed(schema: pa.Schema, names: frozenset[str]) -> pa.Schema:
    def typed(t: pa.DataType) -> pa.DataType:
        if pa.types.is_struct(t):
            return pa.struct([retyped(f) for f in t])
        if pa.types.is_list(t):
            return pa.list_(typed(t.value_type))
        return t

    def retyped(f: pa.Field) -> pa.Field:
        if f.name in names and f.type == pa.string():
            return f.with_type(pa.json_())
        return f.with_type(typed(f.type))

    return pa.schema([retyped(f) for f in schema])


def test_a_type_without_a_card_dtype_is_named() -> None:
    with pytest.raises(TypeError, match="date32"):
        features(pa.schema([("day", pa.date32())]))


def test_a_second_opinion_finding_in_a_table_names_its_row_and_column(tmp_path: Path) -> None:
    from trajset.pipeline.second_opinion import second_opinion

    table = tmp_path / "data" / "t.parquet"
    table.parent.mkdir()
    rows = [{"message": "hello", "extra": "{}"}, {"message": f"bot {DISCORD}", "extra": "{}"},
            {"message": "x", "extra": json.dumps({"note": DISCORD})}]  # fmt: skip
    pa.parquet.write_table(pa.Table.from_pylist(rows), table)
    first, second = second_opinion(tmp_path, [table])
    assert (first.file, first.where, first.rule) == ("data/t.parquet", "row 1 message",
                                                     "Discord Bot Token")  # fmt: skip
    assert second.where == "row 2 extra" and second.id == first.id  # one id per value
    assert (tmp_path / ".trajset" / "finding-salt").exists()
