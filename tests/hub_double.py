"""A Hub double backed by folders: each repository revision is a folder, each commit recorded.

It answers the calls ``trajset publish`` makes of ``huggingface_hub.HfApi`` with the same
signatures and errors (a missing repository or revision raises the library's own
``RepositoryNotFoundError`` / ``RevisionNotFoundError``), applies ``upload_folder`` with
its ``ignore_patterns`` and ``delete_patterns`` as the library does (``.gitattributes`` is
never deleted), and keeps what each commit added and deleted, so a test can say exactly
which files a publish sent.  No network.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

from huggingface_hub.errors import RepositoryNotFoundError, RevisionNotFoundError


def _error(kind: type[Exception], message: str) -> Exception:
    """The library's error without an HTTP response (its constructor asks for one)."""
    e = kind.__new__(kind)
    Exception.__init__(e, message)
    return e


@dataclass
class Commit:
    repo_id: str
    revision: str
    message: str
    added: list[str]
    deleted: list[str]


@dataclass
class FolderHub:
    root: Path
    user: str = "dana"
    commits: list[Commit] = field(default_factory=list)
    private: dict[str, bool] = field(default_factory=dict)

    def folder(self, repo_id: str, revision: str = "main") -> Path:
        return self.root / repo_id.replace("/", "--") / revision

    def whoami(self) -> dict[str, Any]:
        return {"name": self.user}

    def create_repo(self, repo_id: str, *, repo_type: str, private: bool, exist_ok: bool) -> str:
        assert repo_type == "dataset"
        main = self.folder(repo_id)
        if not main.exists():
            main.mkdir(parents=True)
            (main / ".gitattributes").write_text("*.parquet filter=lfs diff=lfs merge=lfs -text\n")
            self.private[repo_id] = private
        return repo_id

    def create_branch(self, repo_id: str, *, branch: str, repo_type: str, exist_ok: bool) -> None:
        if not self.folder(repo_id, branch).exists():
            shutil.copytree(self.folder(repo_id), self.folder(repo_id, branch))

    def list_repo_files(self, repo_id: str, *, repo_type: str, revision: str) -> list[str]:
        if not self.folder(repo_id).exists():
            raise _error(RepositoryNotFoundError, f"404: {repo_id}")
        here = self.folder(repo_id, revision)
        if not here.exists():
            raise _error(RevisionNotFoundError, f"404: {repo_id}@{revision}")
        return sorted(p.relative_to(here).as_posix() for p in here.rglob("*") if p.is_file())

    def hf_hub_download(
        self, repo_id: str, filename: str, *, repo_type: str, revision: str, local_dir: Any
    ) -> str:
        source = self.folder(repo_id, revision) / filename
        target = Path(local_dir) / filename
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
        return str(target)

    def upload_folder(self, **kw: Any) -> str:
        stage, repo = Path(kw["folder_path"]), self.folder(kw["repo_id"], kw["revision"])
        ignore = kw.get("ignore_patterns") or []
        added = sorted(
            rel
            for p in stage.rglob("*")
            if p.is_file()
            and not any(fnmatch(rel := p.relative_to(stage).as_posix(), pat) for pat in ignore)
        )
        deleted = sorted(
            rel
            for rel in self.list_repo_files(
                kw["repo_id"], repo_type="dataset", revision=kw["revision"]
            )
            if rel != ".gitattributes"
            and rel not in added
            and any(fnmatch(rel, pat) for pat in kw.get("delete_patterns") or [])
        )
        for rel in deleted:
            (repo / rel).unlink()
        for rel in added:
            (repo / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(stage / rel, repo / rel)
        self.commits.append(
            Commit(kw["repo_id"], kw["revision"], kw["commit_message"], added, deleted)
        )
        return f"https://huggingface.co/datasets/{kw['repo_id']}/commit/{len(self.commits)}"
