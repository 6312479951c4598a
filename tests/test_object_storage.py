"""``--out`` as an fsspec URL, against an S3-compatible server (moto's) on 127.0.0.1: the
export reads back equal to a local one, the manifest goes last, and a folder whose upload
did not finish is never taken for a finished export."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.request import Request, urlopen

import pytest
from typer.testing import CliRunner

from trajset.pipeline.cli import app
from trajset.pipeline.outputs import remote

from .exports import data_files

s3fs = pytest.importorskip("s3fs", reason="pip install 'trajset[s3]'")
server = pytest.importorskip("moto.server", reason="pip install 'moto[server]'")

URL = "s3://datasets/sessions/v1"


@pytest.fixture
def bucket(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """An empty bucket on an S3-compatible server that listens on loopback only (moto keeps
    its buckets in the process, so they are reset first)."""
    moto = server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    moto.start()
    host, port = moto.get_host_and_port()
    for k, v in {
        "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1", "AWS_ENDPOINT_URL": f"http://{host}:{port}",
        "AWS_EC2_METADATA_DISABLED": "true",
    }.items():  # fmt: skip
        monkeypatch.setenv(k, v)
    urlopen(Request(f"http://{host}:{port}/moto-api/reset", method="POST")).close()
    s3fs.S3FileSystem.clear_instance_cache()
    s3fs.S3FileSystem().mkdir("datasets")
    try:
        yield URL
    finally:
        s3fs.S3FileSystem.clear_instance_cache()
        moto.stop()


def _export(out: str, *more: str) -> Any:
    result = CliRunner().invoke(app, ["export", "--out", out, "-q", *more])
    assert result.exit_code == 0, result.output
    return result


def test_an_export_to_s3_reads_back_equal_to_a_local_export(bucket: str, tmp_path: Path) -> None:
    stage = tmp_path / "stage"
    _export(bucket, "--stage", str(stage))
    _export(str(tmp_path / "local"))
    assert not stage.exists()  # removed once copied up
    at = remote.existing(bucket)
    assert "manifest.json" in at and "README.md" in at and not [f for f in at if ".trajset" in f]
    down = remote.download(bucket, tmp_path / "down")
    assert data_files(down) == data_files(tmp_path / "local")
    from datasets import load_dataset

    cache = str(tmp_path / "cache")
    for config in ("sft", "preferences"):
        got = load_dataset(str(down), config, split="train", cache_dir=cache)
        want = load_dataset(str(tmp_path / "local"), config, split="train", cache_dir=cache)
        assert got.to_list() == want.to_list() and got.num_rows > 0
    refused = CliRunner().invoke(app, ["export", "--out", bucket, "-q"])
    assert refused.exit_code == 2 and "is not empty; --mode overwrite" in refused.output
    shown = CliRunner().invoke(app, ["publish", bucket, "acme/x", "--dry-run"])
    assert shown.exit_code == 0 and "dry run: nothing was sent" in shown.output, shown.output


class Failing:
    """An fsspec filesystem that records the writes and deletes, and fails the first ``put``
    of several files after copying half of them (a connection lost mid-upload)."""

    def __init__(self, fs: Any) -> None:
        self.fs, self.log, self.failed = fs, [], False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.fs, name)

    def put(self, lpaths: list[str], rpaths: list[str]) -> None:
        if not self.failed:
            self.failed = True
            half = len(lpaths) // 2
            self.fs.put(lpaths[:half], rpaths[:half])
            raise ConnectionError("connection reset by peer")
        self.log += [("put", r.rsplit("/", 1)[-1]) for r in rpaths]
        self.fs.put(lpaths, rpaths)

    def put_file(self, lpath: str, rpath: str) -> None:
        self.log.append(("put", rpath.rsplit("/", 1)[-1]))
        self.fs.put_file(lpath, rpath)

    def rm_file(self, path: str) -> None:
        self.log.append(("rm", path.rsplit("/", 1)[-1]))
        self.fs.rm_file(path)


def test_a_replaced_export_is_unfinished_until_its_manifest_goes_last(
    bucket: str, tmp_path: Path
) -> None:
    _export(bucket)
    stage = tmp_path / "stage"
    _export(str(stage), "--no-redact")  # a different export, staged by hand
    fs = Failing(remote.filesystem(bucket)[0])
    with pytest.raises(remote.AbortRun, match=r"connection reset by peer.*--mode resume"):
        remote.upload(stage, bucket, fs=fs)
    assert fs.log == [("rm", "manifest.json")]  # the old export stopped being finished first
    with pytest.raises(remote.UsageError, match="no finished export"):
        remote.download(bucket, tmp_path / "half")
    refused = CliRunner().invoke(app, ["publish", bucket, "acme/x", "--dry-run"])
    assert refused.exit_code == 2 and "no finished export" in refused.output
    fs.log.clear()
    remote.upload(stage, bucket, fs=fs)
    assert fs.log[-2:] == [("put", "README.md"), ("put", "manifest.json")]
    assert data_files(remote.download(bucket, tmp_path / "down")) == data_files(stage)


def test_a_file_url_a_stage_without_a_url_and_a_cluster_without_a_stage(tmp_path: Path) -> None:
    url = (tmp_path / "shared" / "v1").as_uri()
    _export(url, "--stage", str(tmp_path / "stage"), "--keep-state")
    assert (tmp_path / "stage" / "manifest.json").exists()  # --keep-state keeps the stage
    assert data_files(tmp_path / "shared" / "v1") == data_files(tmp_path / "stage")
    wrong = CliRunner().invoke(app, ["export", "--out", str(tmp_path / "o"), "--stage", "x"])
    assert wrong.exit_code == 2 and "--stage is where an export to an --out URL" in wrong.output
    assert remote.is_url("s3://b/p") and remote.is_url("file:///x") and not remote.is_url("a/b")
    cluster = ["export", "--out", "s3://b/p", "--executor", "ray", "--ray-address", "h:6379"]
    refused = CliRunner().invoke(app, cluster)
    assert refused.exit_code == 2 and "give --stage, a folder every node sees" in refused.output
