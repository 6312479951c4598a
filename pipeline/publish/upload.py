"""The plan of a publish (what is sent, what is deleted) and its upload.

The files to send are staged in ``DIR/.trajset/publish/stage/`` (hard links to the
export's files where they go as they are; rewritten shards, new shards, the index, the
manifest and the card written there), so the upload sends exactly that folder and
nothing of the export is changed.  One commit sends it and deletes what the merge
retired (``upload_folder`` with ``delete_patterns``); a large one goes through the Hub's
resumable large-folder upload where the library has one (``upload_large_folder``,
huggingface_hub 0.25 to 1.x; from 2.0 ``upload_folder`` itself commits a large folder in
parts and resumes), its progress kept in the stage's ``.cache/huggingface/``, then one
commit deletes.  Re-running the same command after a failure stages the same files and
sends what is missing.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ..errors import AbortRun
from ..outputs.card import loadable
from ..outputs.manifest import write_manifest
from .checks import PublishRefused, check
from .index import INDEX, folder_items, write_index
from .merge import merge
from .record import Publication, card_text, merged_manifest, record_of
from .remote import Remote, read_remote

IGNORE = [".trajset", ".trajset/*", ".trajset/**", ".cache/huggingface/**"]
#: a folder beyond either is sent in several commits (one commit this large fails or stalls)
LARGE_FILES, LARGE_BYTES = 10_000, 5 * 2**30
#: where a publish stages what it sends, inside the export's run-state folder
STAGE = Path(".trajset") / "publish"


class HubClient(Protocol):
    """The part of ``huggingface_hub.HfApi`` publishing uses."""

    def create_repo(
        self, repo_id: str, *, repo_type: str, private: bool, exist_ok: bool
    ) -> Any: ...

    def create_branch(
        self, repo_id: str, *, branch: str, repo_type: str, exist_ok: bool
    ) -> Any: ...

    def upload_folder(self, **kwargs: Any) -> Any: ...

    def list_repo_files(self, repo_id: str, *, repo_type: str, revision: str) -> list[str]: ...

    def hf_hub_download(self, repo_id: str, filename: str, **kwargs: Any) -> str: ...

    # and, where the library has them: ``upload_large_folder(**kwargs)`` (0.25 to 1.x),
    # ``create_commit(repo_id, operations, **kwargs)``, ``whoami()``


def hub_client() -> HubClient:
    from huggingface_hub import HfApi

    return HfApi()  # type: ignore[return-value]


@dataclass
class Plan:
    """What would be sent and deleted, and the counts of the merge."""

    directory: Path
    repo_id: str
    private: bool
    revision: str
    message: str
    create_pr: bool = False
    files: list[tuple[str, int]] = field(default_factory=list)
    configs: list[str] = field(default_factory=list)
    #: the most files and bytes one commit takes
    limits: tuple[int, int] = (LARGE_FILES, LARGE_BYTES)
    #: repository files the publish deletes (retired rows' emptied shards, gone documents)
    deletes: list[str] = field(default_factory=list)
    #: the folder holding exactly what is sent
    stage: Path = Path()
    summary: dict[str, Any] = field(default_factory=dict)

    @property
    def large(self) -> bool:
        """More than one commit should take (``limits``): sent in several, resumably."""
        most_files, most_bytes = self.limits
        return len(self.files) > most_files or sum(n for _, n in self.files) > most_bytes

    def lines(self, every_file: bool = False) -> list[str]:
        """The plan: the repo, the configs, the merge, then each folder's files and bytes
        (each file with ``every_file``), then what is deleted."""
        visibility = "private" if self.private else "public"
        out = [f"repo {self.repo_id} (dataset, {visibility}), revision {self.revision}"]
        out += [f"commit message: {self.message}", f"configs: {', '.join(self.configs)}"]
        if self.summary:
            s = self.summary
            out.append(
                f"merge: {s['sessions_in_export']} session(s) of the export, "
                f"{s['sessions_kept']} kept from earlier publishes; rows sent {s['rows_sent']}, "
                f"taken out {s['rows_removed']}"
            )
        if self.large:
            out.append("sent as a large folder: several commits; a re-run sends what is missing")
        if every_file:
            out += [f"  {size:>12,}  {rel}" for rel, size in self.files]
        else:
            folders: dict[str, list[int]] = {}
            for rel, size in self.files:
                folder = rel.rsplit("/", 1)[0] + "/" if "/" in rel else rel
                folders.setdefault(folder, []).append(size)
            out += [f"  {sum(sizes):>12,}  {folder} ({len(sizes)} file(s))"
                    for folder, sizes in folders.items()]  # fmt: skip
        total = sum(size for _, size in self.files)
        out.append(f"{len(self.files)} files, {total:,} bytes")
        if self.deletes:
            out += [f"  deleted  {rel}" for rel in self.deletes] if every_file else []
            out.append(f"{len(self.deletes)} file(s) deleted from the repository")
        return out


def plan(
    directory: Path, repo_id: str, *, private: bool = True, revision: str = "main",
    message: str = "", create_pr: bool = False, allow_unredacted: bool = False,
    limits: tuple[int, int] = (LARGE_FILES, LARGE_BYTES), accept: frozenset[str] = frozenset(),
    client: HubClient | None = None, prune: bool = False, license_id: str = "",
) -> Plan:  # fmt: skip
    """Check the folder, read what ``repo_id`` holds (nothing without a ``client``), merge,
    and stage what is to be sent (see the module docstring)."""
    manifest = check(directory, allow_unredacted, accept)
    version = (manifest.get("redaction") or {}).get("version") or "none"
    work = directory / STAGE
    remote = read(client, repo_id, revision, work / "remote")
    stage = _fresh_stage(work, f"{repo_id}@{revision}")
    deletes = _unindexed(remote, prune, directory)
    local = folder_items(directory, version)
    merged = merge(directory, stage, local, remote.items or [], prune=prune, version=version,
                   fetch=remote.fetch, repo_id=repo_id)  # fmt: skip
    summary = {
        "sessions_in_export": len({i.session_id for i in local if i.kind == "row"}),
        "sessions_kept": merged.sessions_kept,
        "rows_sent": sum(merged.rows_added.values()),
        "rows_removed": sum(merged.rows_removed.values()),
    }
    who = _publisher(client)
    scan = "allowed unredacted (--allow-unredacted)" if allow_unredacted else "nothing found"
    visibility = private if not remote.paths else None  # an existing repository keeps its own
    publication = Publication(repo_id, who, visibility, license_id or _license(manifest), scan)
    record = record_of(publication, manifest, merged.items, summary)
    full = merged_manifest(manifest, merged.items, record)
    outcomes = _outcomes(directory, stage, merged.items, remote)
    _write_generated(stage, full, record["license"], outcomes, work, merged.items)
    c = full["counts"]
    default = (
        f"trajset {manifest.get('trajset_version', '')}: {c.get('trajectories', 0)} trajectories, "
        f"{c.get('pairs', 0)} preference pairs from {c.get('sessions_exported', 0)} sessions"
    )
    files = sorted(
        (p.relative_to(stage).as_posix(), p.stat().st_size)
        for p in stage.rglob("*")
        if p.is_file() and p.relative_to(stage).parts[0] != ".cache"
    )
    return Plan(directory, repo_id, private, revision, message or default, create_pr, files,
                loadable(full), limits, sorted({*deletes, *merged.deleted}), stage,
                summary)  # fmt: skip


#: a Hub access token as the library prints it in an error (a URL, a header)
TOKEN_RE = re.compile(r"hf_[A-Za-z0-9]{8,}")


def one_line(exc: Exception) -> str:
    """The error's kind and first line, shortened, with any token in it masked: a library's
    message may carry one (a URL, a header), and it is never printed."""
    first = (str(exc).splitlines() or [""])[0][:300]
    token = os.environ.get("HF_TOKEN") or ""
    if len(token) >= 8:
        first = first.replace(token, "***")
    return f"{type(exc).__name__}: {TOKEN_RE.sub('hf_***', first)}"


def read(client: HubClient | None, repo_id: str, revision: str, cache: Path) -> Remote:
    """What the repository holds; a failure to read it is one line and exit 1."""
    if client is None:
        return Remote(repo_id, revision)
    try:
        return read_remote(client, repo_id, revision, cache)
    except Exception as exc:  # the library raises many kinds
        raise AbortRun(
            f"could not read what {repo_id} holds ({one_line(exc)}); nothing was "
            "sent: check the network and the token (HF_TOKEN, `huggingface-cli login`), then "
            "run the same command again"
        ) from None


def _unindexed(remote: Remote, prune: bool, directory: Path) -> list[str]:
    """Data files no index describes: refused, or deleted with ``prune``."""
    found = remote.unindexed
    if found and not prune:
        raise PublishRefused(
            f"{remote.repo_id} holds {len(found)} data file(s) no trajset index describes (the "
            f"first {found[0]}): it was published before incremental publishing, or edited by "
            f"hand, so its rows cannot be matched. `trajset publish {directory} "
            f"{remote.repo_id} --prune` replaces its data with this export"
        )
    return found


def _fresh_stage(work: Path, target: str) -> Path:
    """An empty stage, keeping the large-folder upload's progress when it was for the same
    repository and revision (so a re-run sends only what is missing)."""
    stage = work / "stage"
    marker = work / "target"
    same = marker.exists() and marker.read_text(encoding="utf-8") == target
    if stage.exists():
        for child in stage.iterdir():
            if child.name == ".cache" and same:
                continue
            shutil.rmtree(child) if child.is_dir() else child.unlink()
    stage.mkdir(parents=True, exist_ok=True)
    marker.write_text(target, encoding="utf-8")
    return stage


def _publisher(client: HubClient | None) -> str:
    who = getattr(client, "whoami", None)
    if who is None:
        return "unknown"
    try:
        return str(who().get("name") or "unknown")
    except Exception:  # no token (a dry run), or the Hub did not answer: said so in the card
        return "unknown"


def _license(manifest: dict[str, Any]) -> str:
    return str((manifest.get("options") or {}).get("license") or "other")


def _outcomes(directory: Path, stage: Path, items: list[Any], remote: Remote) -> list[Path]:
    """The merged repository's outcomes shards, where they are: staged, in the export, or
    downloaded from the repository."""
    out = []
    for i in sorted((i for i in items if i.kind == "shard" and i.table == "outcomes"),
                    key=lambda i: i.path):  # fmt: skip
        for here in (stage / i.path, directory / i.path):
            if here.is_file():
                out.append(here)
                break
        else:
            out.append(remote.fetch(i.path))
    return out


def _write_generated(
    stage: Path, manifest: dict[str, Any], license_id: str, outcomes: list[Path], work: Path,
    items: list[Any],
) -> None:  # fmt: skip
    write_manifest(stage, manifest)
    (stage / "README.md").write_text(
        card_text(manifest, license_id, outcomes, work), encoding="utf-8"
    )
    write_index(stage / INDEX, items)


def upload(p: Plan, client: HubClient, progress: Callable[[str], None] = lambda _: None) -> Any:
    """Create the repository if missing, the branch if asked, and send the stage: in one
    commit with the deletions, or a large one in several (``Plan.large``) that a re-run
    resumes, then one that deletes."""
    large = getattr(client, "upload_large_folder", None) if p.large else None
    if large is not None and p.create_pr:
        raise PublishRefused(
            f"{len(p.files):,} files are sent in several commits, which one pull request "
            "cannot take; publish to a branch (--revision NAME) and open the PR from it"
        )
    try:
        client.create_repo(p.repo_id, repo_type="dataset", private=p.private, exist_ok=True)
        if p.revision != "main" and not p.create_pr:
            client.create_branch(p.repo_id, branch=p.revision, repo_type="dataset", exist_ok=True)
        if large is not None:
            progress(f"uploading {len(p.files)} files to {p.repo_id} as a large folder")
            result = large(
                repo_id=p.repo_id, folder_path=str(p.stage), repo_type="dataset",
                revision=p.revision, private=p.private, ignore_patterns=IGNORE,
            )  # fmt: skip
            return _delete(p, client) or result
        progress(f"uploading {len(p.files)} files to {p.repo_id}")
        return client.upload_folder(
            repo_id=p.repo_id, folder_path=str(p.stage), repo_type="dataset",
            revision=p.revision, commit_message=p.message, ignore_patterns=IGNORE,
            create_pr=p.create_pr, delete_patterns=[glob.escape(d) for d in p.deletes] or None,
        )  # fmt: skip
    except PublishRefused:
        raise
    except Exception as exc:  # the library raises many kinds
        kept = (
            "the commits made so far stay on the Hub: run the same command again and only "
            "what is missing is sent"
            if p.large
            else "nothing partial is kept on the Hub by a failed commit: run the same command again"
        )
        raise AbortRun(f"the upload to {p.repo_id} failed ({one_line(exc)}); {kept}") from None


def _delete(p: Plan, client: HubClient) -> Any:
    """One commit deleting what a large folder's merge retired (None when nothing is)."""
    if not p.deletes:
        return None
    from huggingface_hub import CommitOperationDelete

    commit = getattr(client, "create_commit", None)
    if commit is None:
        raise PublishRefused("this huggingface_hub cannot delete files; upgrade it")
    ops = [CommitOperationDelete(path_in_repo=d) for d in p.deletes]
    return commit(p.repo_id, ops, commit_message=p.message + " (deletions)",
                  repo_type="dataset", revision=p.revision)  # fmt: skip
