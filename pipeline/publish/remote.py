"""What a repository holds now: its files and its publish index (read, never written here)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from .index import GENERATED, INDEX, Item, read_index

if TYPE_CHECKING:
    from .upload import HubClient

#: folders of an export's data: a repository holding files there and no index was not
#: published by an incremental trajset (or was edited by hand)
DATA_FOLDERS = ("data/", "atif/", "traces/", "errors.parquet")


@dataclass
class Remote:
    """A repository revision's files and index (``items`` None: it has none)."""

    repo_id: str
    revision: str
    paths: list[str] = field(default_factory=list)
    items: list[Item] | None = None
    client: HubClient | None = None
    cache: Path | None = None

    def fetch(self, path: str) -> Path:
        """The repository's file, downloaded into the cache folder."""
        assert self.client is not None and self.cache is not None
        got = self.client.hf_hub_download(
            self.repo_id, path, repo_type="dataset", revision=self.revision, local_dir=self.cache
        )
        return Path(got)

    @property
    def unindexed(self) -> list[str]:
        """Data files the index does not describe (all of them when there is no index)."""
        known = {i.path for i in self.items or []}
        return [p for p in self.paths if p.startswith(DATA_FOLDERS) and p not in known]

    @property
    def extra(self) -> list[str]:
        """Files that are neither data nor generated (``.gitattributes``, a hand-written file)."""
        return [p for p in self.paths if not p.startswith(DATA_FOLDERS) and p not in GENERATED]


def read_remote(client: HubClient, repo_id: str, revision: str, cache: Path) -> Remote:
    """The revision's files and index; a repository or branch that does not exist yet is
    empty (a new branch starts from ``main``, so its state is read there)."""
    from huggingface_hub.errors import RepositoryNotFoundError, RevisionNotFoundError

    for rev in dict.fromkeys([revision, "main"]):
        try:
            paths = sorted(client.list_repo_files(repo_id, repo_type="dataset", revision=rev))
        except RevisionNotFoundError:
            continue
        except RepositoryNotFoundError:
            return Remote(repo_id, revision)
        remote = Remote(repo_id, rev, paths, None, client, cache)
        if INDEX in paths:
            remote.items = read_index(remote.fetch(INDEX))
        return remote
    return Remote(repo_id, revision)
