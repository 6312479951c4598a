"""The store-reader seam: what a reader of one store kind provides, and the work unit.

A ``StoreReader`` recognises a path as its kind of store, cuts the store
into work units (the files that must be read together), loads a unit into
``Session`` trees (raising ``UnitFailed`` when it cannot), fingerprints a
unit's inputs and names the sessions a unit holds without loading it (so
links to subsessions can be resolved).  A new store kind is one module with
such a class, one line in ``READERS`` and one test file.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from trajset.schemas.entries import validate_entry
from trajset.schemas.session import Entry, Issue, Session, validate_header

from ..errors import SessionReadError, UnitFailed

JSON = Any


@dataclass(frozen=True)
class Unit:
    """The files one worker reads together.

    ``key`` selects inside a store (a database session, an owner); ``name`` is
    where the unit lives when that is not its first file (an owner's folder);
    ``options`` are the reader options (``--reader-option NAME=VALUE``).
    """

    kind: str  # the READERS name of the store kind
    files: tuple[str, ...]
    key: str = ""
    name: str = ""
    options: tuple[tuple[str, str], ...] = ()

    @property
    def label(self) -> str:
        """Where the unit comes from, for messages and errors."""
        if self.name:
            return self.name
        return f"{self.files[0]}#{self.key}" if self.key else self.files[0]


#: what loading a unit gives: its sessions, and an error for each session that did not read
Loaded = list[Session | UnitFailed]


class StoreReader(Protocol):
    """One store kind (see the module docstring)."""

    def detect(self, path: Path) -> bool:
        """True when ``path`` is a store of this kind (asked in ``READERS`` order)."""
        ...

    def units(self, path: Path, options: tuple[tuple[str, str], ...] = ()) -> list[Unit]:
        """Every work unit of the store at ``path``, in a stable order, carrying ``options``."""
        ...

    def load(self, unit: Unit) -> Loaded:
        """The sessions of ``unit`` (an error in place of each one that does not read);
        ``UnitFailed`` when the whole unit cannot be read, ``UnitSkipped`` when it holds
        no sessions by design."""
        ...

    def session_ids(self, unit: Unit) -> list[str]:
        """The ids of the sessions ``unit`` holds, read cheaply (headers only); [] if unknown."""
        ...

    def inputs(self, unit: Unit) -> tuple[str, ...] | None:
        """Every file whose bytes the unit's result depends on (its files and what they
        refer to), in a stable order: fingerprinted for resume, and the files not listed
        by any unit are reported as skipped.  None when the unit has no files of its own
        (rows of a shared database)."""
        ...


def file_fingerprint(paths: tuple[str, ...]) -> tuple[str, int]:
    """SHA-256 over the files' bytes in order, and their total size; ("", 0) if one is
    unreadable.  Read in blocks, so a large file costs no memory."""
    digest = hashlib.sha256()
    size = 0
    for p in paths:
        if not Path(p).is_file():
            return "", 0
        try:
            with open(p, "rb") as fh:
                while block := fh.read(1 << 20):
                    digest.update(block)
                    size += len(block)
        except OSError:
            return "", 0
    return "sha256:" + digest.hexdigest(), size


def read_input(path: Path) -> bytes:
    """A store file's bytes; ``SessionReadError`` (rule ``io``) for a dangling or looping link,
    something that is not a regular file (a FIFO would block, a folder has no bytes), or a
    read that fails."""
    if not path.is_file():
        what = (
            "a dangling or looping link"
            if path.is_symlink() and not path.exists()
            else "not a regular file"
        )
        raise SessionReadError(f"{what}; nothing was read", rule="io", source=str(path))
    try:
        return path.read_bytes()
    except OSError as exc:
        raise SessionReadError(
            f"cannot read file: {exc.strerror}", rule="io", source=str(path)
        ) from None


def converted_session(
    header: dict[str, JSON],
    raws: list[dict[str, JSON]],
    source: str,
    source_format: str,
    issues: list[Issue],
    counts: dict[str, int],
) -> Session:
    """A converting reader's session: the header and every entry validated, entries numbered
    as the lines of its Agent Session Format text; a converter that produced something invalid
    is a ``conversion`` error of that session."""
    try:
        entries = [Entry(raw, validate_entry(raw), i + 2, i) for i, raw in enumerate(raws)]
        return Session(
            validate_header(header),
            header,
            entries,
            source,
            source_format=source_format,
            issues=issues,
            counts=counts,
        )
    except ValueError as exc:
        raise SessionReadError(
            f"converted session does not validate: {exc}",
            rule="conversion",
            source=source,
            session_id=str(header.get("id") or ""),
        ) from None
