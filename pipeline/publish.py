"""``trajset publish``: an export folder to a Hugging Face Hub dataset repository, safely.

Before anything is sent the folder is checked: ``validate`` must pass, the
export must be finished (its manifest is written last) and non-empty, and
redaction must have been on with the default rules and ``scan`` must find
nothing, unless ``--allow-unredacted``.  The repository is private by default;
the folder is uploaded in one commit, ``.trajset/`` never.  A large folder (more
than ``LARGE_FILES`` files or ``LARGE_BYTES`` bytes) goes through the Hub's resumable
large-folder upload where the library has one (``upload_large_folder``, huggingface_hub
0.25 to 1.x; from 2.0 ``upload_folder`` itself commits a large folder in parts and
resumes): several commits, its progress kept in the folder's ``.cache/huggingface/``, so
a re-run after a failure sends only what is missing.  The token comes
from where ``huggingface_hub`` finds it (``HF_TOKEN``, the login cache) and is
never printed.  ``HubClient`` is the seam: ``huggingface_hub.HfApi`` in use,
a recording double in tests.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from trajset.redactors import GROUPS, build_redactor

from .errors import AbortRun
from .outputs.card import loadable
from .outputs.validate import validate_folder
from .scan import scan_folder, second_opinion_of

IGNORE = [".trajset", ".trajset/*", ".trajset/**", ".cache/huggingface/**"]
#: run state and the Hub library's upload progress: never part of what is published
PRIVATE = (".trajset", ".cache")
#: a folder beyond either is sent in several commits (one commit this large fails or stalls)
LARGE_FILES, LARGE_BYTES = 10_000, 5 * 2**30


class PublishRefused(AbortRun):
    """The folder may not be published as it is (exit 1); the message says why and what to do."""

    kind = "publish"


class HubClient(Protocol):
    """The part of ``huggingface_hub.HfApi`` publishing uses."""

    def create_repo(
        self, repo_id: str, *, repo_type: str, private: bool, exist_ok: bool
    ) -> Any: ...

    def create_branch(
        self, repo_id: str, *, branch: str, repo_type: str, exist_ok: bool
    ) -> Any: ...

    def upload_folder(self, **kwargs: Any) -> Any: ...

    # and, where the library has it (0.25 to 1.x), ``upload_large_folder(**kwargs)``


def hub_client() -> HubClient:
    from huggingface_hub import HfApi

    return HfApi()  # type: ignore[return-value]


@dataclass
class Plan:
    """What would be sent: nothing is read from the network to make it."""

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

    @property
    def large(self) -> bool:
        """More than one commit should take (``limits``): sent in several, resumably."""
        most_files, most_bytes = self.limits
        return len(self.files) > most_files or sum(n for _, n in self.files) > most_bytes

    def lines(self, every_file: bool = False) -> list[str]:
        """The plan: the repo, the configs, then each folder's files and bytes (each file
        with ``every_file``)."""
        visibility = "private" if self.private else "public"
        out = [f"repo {self.repo_id} (dataset, {visibility}), revision {self.revision}"]
        out += [f"commit message: {self.message}", f"configs: {', '.join(self.configs)}"]
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
        return [*out, f"{len(self.files)} files, {total:,} bytes"]


def _manifest(directory: Path) -> dict[str, Any]:
    try:
        manifest: dict[str, Any] = json.loads(
            (directory / "manifest.json").read_text(encoding="utf-8")
        )
    except (OSError, ValueError):
        raise PublishRefused(
            f"{directory} has no readable manifest.json: the export is partial or did not finish; "
            "finish it with `trajset export ... --mode resume` first"
        ) from None
    return manifest


def check(
    directory: Path, allow_unredacted: bool, accept: frozenset[str] = frozenset()
) -> dict[str, Any]:
    """Refuse what must not leave; returns the manifest.  ``accept``: ids of detect-secrets
    findings someone looked at and found harmless."""
    manifest = _manifest(directory)
    problems, _ = validate_folder(directory)
    if problems:
        raise PublishRefused(
            f"validate found {len(problems)} problem(s) ({problems[0]}); run `trajset validate {directory}`"
        )
    if not manifest.get("counts", {}).get("trajectories"):
        raise PublishRefused(f"{directory} holds no trajectory; nothing to publish")
    if allow_unredacted:
        return manifest
    rules = set(manifest.get("redaction", {}).get("rules") or [])
    missing = sorted(set(GROUPS["default"]) - rules - {"secrets_v1"})
    if not manifest.get("options", {}).get("redact"):
        raise PublishRefused(
            "the export was made with --no-redact; export again, or pass --allow-unredacted"
        )
    if missing:
        raise PublishRefused(
            f"the export was made without default redaction rules ({', '.join(missing[:3])}); "
            "export again with them, or pass --allow-unredacted"
        )
    findings = scan_folder(directory, build_redactor(sorted(rules | set(GROUPS["default"]))))
    if findings:
        n = sum(sum(c.values()) for c in findings.values())
        rel, counts = next(iter(sorted(findings.items())))
        raise PublishRefused(
            f"scan finds {n} value(s) the redaction rules match in {len(findings)} file(s), "
            f"the first {counts.most_common(1)[0][0]} in {rel}: export again with this trajset "
            f"(`trajset export STORES --out {directory} --mode overwrite`); `trajset scan "
            f"{directory}` lists them all, and --allow-unredacted publishes anyway"
        )
    if second := second_opinion_of(directory, accept):
        f = second[0]
        raise PublishRefused(
            f"detect-secrets finds {len(second)} value(s) the redaction rules left, the first a "
            f"{f.rule} in {f.file} ({f.where}, id {f.id}): if it is a secret, export again with "
            f"`--secret VALUE` or `--secret-env NAME`; if it is none, publish with --accept "
            f"{f.id}; `trajset scan {directory}` lists them all"
        )
    return manifest


def plan(
    directory: Path, repo_id: str, *, private: bool = True, revision: str = "main",
    message: str = "", create_pr: bool = False, allow_unredacted: bool = False,
    limits: tuple[int, int] = (LARGE_FILES, LARGE_BYTES), accept: frozenset[str] = frozenset(),
) -> Plan:  # fmt: skip
    manifest = check(directory, allow_unredacted, accept)
    c = manifest.get("counts", {})
    default = (
        f"trajset {manifest.get('trajset_version', '')}: {c.get('trajectories', 0)} trajectories, "
        f"{c.get('pairs', 0)} preference pairs from {c.get('sessions_exported', 0)} sessions"
    )
    files = sorted(
        (p.relative_to(directory).as_posix(), p.stat().st_size)
        for p in directory.rglob("*")
        if p.is_file() and p.relative_to(directory).parts[0] not in PRIVATE
    )
    return Plan(
        directory,
        repo_id,
        private,
        revision,
        message or default,
        create_pr,
        files,
        loadable(manifest),
        limits,
    )


def upload(p: Plan, client: HubClient, progress: Callable[[str], None] = lambda _: None) -> Any:
    """Create the repository if missing, the branch if asked, and upload the folder: in one
    commit, or a large one in several (``Plan.large``) that a re-run resumes."""
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
            return large(
                repo_id=p.repo_id, folder_path=str(p.directory), repo_type="dataset",
                revision=p.revision, private=p.private, ignore_patterns=IGNORE,
            )  # fmt: skip
        progress(f"uploading {len(p.files)} files to {p.repo_id}")
        return client.upload_folder(
            repo_id=p.repo_id, folder_path=str(p.directory), repo_type="dataset",
            revision=p.revision, commit_message=p.message, ignore_patterns=IGNORE,
            create_pr=p.create_pr,
        )  # fmt: skip
    except Exception as exc:  # the library raises many kinds; none may carry the token
        first = (str(exc).splitlines() or [""])[0][:300]
        kept = (
            "the commits made so far stay on the Hub: run the same command again and only "
            "what is missing is sent"
            if p.large
            else "nothing partial is kept on the Hub by a failed commit: run the same command again"
        )
        raise AbortRun(
            f"the upload to {p.repo_id} failed ({type(exc).__name__}: {first}); {kept}"
        ) from None
