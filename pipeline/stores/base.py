"""The store-reader seam: what a reader of one store kind provides, and the work unit.

A ``Reader`` declares its ``kind`` (the ``READERS`` name), its default
``locations`` on a user's machine, its typed ``options``
(``--reader-option NAME=VALUE``), its identity fields and its test stores
(``fixtures``); it recognises a path as its kind of store, cuts the store into
work units (the files that must be read together), loads a unit into ``Session``
trees (raising ``UnitFailed`` when it cannot), names the files a unit's result
depends on and the sessions a unit holds without loading it (so links to
subsessions can be resolved).

A reader that converts another format is a ``ConvertingReader``, the template
(``template.py``): it reads a file, joins what the files gave into trees and
converts a tree through a ``SessionDraft`` (``draft.py``); ``load`` does the rest.  A new store
kind is one module or subpackage with such a class and one line in ``READERS``
(CONTRIBUTING, "Adding a reader").
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from enum import IntEnum
from pathlib import Path
from typing import Any, ClassVar, cast

from trajset.redactors.identities import Identity
from trajset.schemas.session import Session

from ..errors import SessionReadError, UnitFailed, UsageError
from .regular import open_input, read_bytes, special_kind

JSON = Any
#: what a reader option holds, once parsed
OptionValue = bool | int | str
#: a unit's reader options: (name, typed value) for every option its reader declares
UnitOptions = tuple[tuple[str, OptionValue], ...]

_TRUE, _FALSE = ("true", "1", "yes", "on"), ("false", "0", "no", "off")


@dataclass(frozen=True)
class ReaderOption:
    """One ``--reader-option NAME=VALUE`` a reader declares: its type, default and help."""

    name: str
    type: type[bool] | type[int] | type[str]
    default: OptionValue
    help: str

    def parse(self, text: str, kind: str) -> OptionValue:
        """The value of ``NAME=text``; ``UsageError`` saying what the option takes."""
        value = text.strip()
        if self.type is bool:
            if value.lower() in _TRUE + _FALSE:
                return value.lower() in _TRUE
        elif self.type is int:
            try:
                return int(value)
            except ValueError:
                pass
        else:
            return value
        raise UsageError(
            f"--reader-option {self.name}={text}: the {kind} reader's {self.name} takes "
            f"{self.type_name}; e.g. --reader-option {self.name}={self.example}"
        )

    @property
    def type_name(self) -> str:
        return {bool: "true or false", int: "an integer"}.get(self.type, "a string")

    @property
    def example(self) -> str:
        if self.type is bool:
            return "false" if self.default else "true"
        return str(self.default)

    def describe(self) -> str:
        """``name=<type> (default ...): help``, for ``--help``, errors and the README."""
        default = str(self.default).lower() if self.type is bool else repr(self.default)
        kind = {bool: "true|false", int: "N"}.get(self.type, "TEXT")
        return f"{self.name}={kind} (default {default}): {self.help}"


@dataclass(frozen=True)
class Location:
    """Where a store kind lives by default on a user's machine: ``default`` (``~`` is the
    home folder, as ``HOME`` says), or the folder the environment variable ``env`` names
    when it is set; then ``below`` inside it (``~/.claude`` + ``projects``)."""

    default: str
    env: str = ""
    below: str = ""

    def resolve(self, environ: Mapping[str, str] | None = None) -> Path | None:
        """The path on this machine (``environ`` defaults to the process's); None when it
        depends on a home folder that is not known."""
        environ = os.environ if environ is None else environ
        base = environ.get(self.env, "") if self.env else ""
        if not base:
            if self.default.startswith("~"):
                home = environ.get("HOME", "")
                if not home:
                    return None
                base = home + self.default[1:]
            else:
                base = self.default
        return Path(base) / self.below if self.below else Path(base)

    def describe(self) -> str:
        where = f"${self.env} (else {self.default})" if self.env else self.default
        return f"{where}/{self.below}" if self.below else where


class Match(IntEnum):
    """How specific a reader's ``detect`` is when it says yes: ``detect_kind`` takes the most
    specific reader that claims a path, so no reader needs to know another's format and the
    registry's order decides nothing."""

    ANY = 1  # any file or folder (the Agent Session Format reader: the fallback)
    FORMAT = 2  # a container other stores use too (an SQLite file)
    LAYOUT = 3  # this store's own layout, file names or record shapes
    MARKER = 4  # a member only this store writes (a declared format, Gemini's projectHash)


@dataclass(frozen=True)
class Fixture:
    """A test store of a reader's kind, from which the test tables and fuzz seeds are built.

    ``path`` is a folder (or file) below the repository's ``tests/data/``, or
    ``build:<name>`` for one a test helper lays out (``tests/fixture_stores.py``).
    ``cut``: the reader contract test cuts its largest file at many byte offsets and
    expects a prefix of what was there (False where a cut changes what the rest of the
    store means: a fork's cut source, a trial's shared steps)."""

    path: str
    cut: bool = True


@dataclass(frozen=True)
class Unit:
    """The files one worker reads together.

    ``key`` selects inside a store (a database session, an owner); ``name`` is
    where the unit lives when that is not its first file (an owner's folder);
    ``options`` are its reader's options, typed (``discover`` sets them); ``size`` is the
    input bytes of a keyed unit inside a shared file, as its reader measured them (the
    batches weigh it; 0 when not measured).
    """

    kind: str  # the READERS name of the store kind
    files: tuple[str, ...]
    key: str = ""
    name: str = ""
    options: UnitOptions = ()
    size: int = 0

    @property
    def label(self) -> str:
        """Where the unit comes from, for messages and errors."""
        if self.name:
            return self.name
        return f"{self.files[0]}#{self.key}" if self.key else self.files[0]


#: what loading a unit gives: its sessions, and an error for each session that did not read
Loaded = list[Session | UnitFailed]


class Reader:
    """One store kind (see the module docstring).  Subclasses set the class attributes and
    implement the five methods (and ``identities`` where the store records some);
    ``option`` reads a typed option of a unit."""

    #: the store kind, as ``--store-kind`` and ``READERS`` name it
    kind: ClassVar[str]
    #: where stores of this kind live by default (``trajset sources``, ``--all-local``)
    locations: ClassVar[tuple[Location, ...]] = ()
    #: the ``--reader-option`` names this reader takes
    options: ClassVar[tuple[ReaderOption, ...]] = ()
    #: (kind, where) of each field of the store that holds an identity (``identities``)
    identity_fields: ClassVar[tuple[tuple[str, str], ...]] = ()
    #: the test stores of this kind (``Fixture``): every test table runs over them
    fixtures: ClassVar[tuple[Fixture, ...]] = ()
    #: how specific a yes of ``detect`` is (``Match``)
    match: ClassVar[Match] = Match.LAYOUT
    #: the preference the store itself records, as ``--prefer`` spells it, used when
    #: ``--prefer`` is not given (none: ``latest``, what the user kept)
    prefer: ClassVar[tuple[str, ...]] = ()

    def option(self, of: Unit | UnitOptions, name: str) -> OptionValue:
        """The value of option ``name`` of a unit (or of the options ``units`` is given),
        else its declared default."""
        given = dict(of.options if isinstance(of, Unit) else of)
        for declared in self.options:
            if declared.name == name:
                return given.get(name, declared.default)
        raise KeyError(f"the {self.kind} reader declares no option {name!r}")

    def unit(
        self, files: tuple[str, ...], key: str = "", name: str = "", options: UnitOptions = (),
        size: int = 0,
    ) -> Unit:  # fmt: skip
        """A unit of this kind."""
        return Unit(self.kind, files, key, name, options, size)

    def detect(self, path: Path) -> bool:
        """True when ``path`` is a store of this kind, as specifically as ``match`` says."""
        raise NotImplementedError

    def units(self, path: Path, options: UnitOptions = ()) -> list[Unit]:
        """Every work unit of the store at ``path``, in a stable order; ``options`` are the
        typed reader options, which ``discover`` then sets on every unit."""
        raise NotImplementedError

    def load(self, unit: Unit) -> Loaded:
        """The sessions of ``unit`` (an error in place of each one that does not read);
        ``UnitFailed`` when the whole unit cannot be read, ``UnitSkipped`` when it holds
        no sessions by design."""
        raise NotImplementedError

    def session_ids(self, unit: Unit) -> list[str]:
        """The ids of the sessions ``unit`` holds, read cheaply (headers only); [] if unknown."""
        raise NotImplementedError

    def identities(self, unit: Unit) -> list[Identity]:
        """The values of the unit's ``identity_fields``, read cheaply (headers, folder names),
        in the order the store has them: the run numbers them into pseudonyms before any
        unit is read (``trajset.redactors.identities``).  A unit that cannot say gives []."""
        return []

    def inputs(self, unit: Unit) -> tuple[str, ...] | None:
        """Every file whose bytes the unit's result depends on (its files and what they
        refer to), in a stable order: fingerprinted for resume, and the files not listed
        by any unit are reported as skipped.  None when the unit has no files of its own
        (rows of a shared database)."""
        return unit.files

    def foreign_folders(self, store: Path) -> dict[str, str]:
        """Folders below ``store`` that hold, by the store's layout, data other than sessions,
        each with what they hold: reported once as skipped and not walked (a data folder's
        snapshots and logs).  Empty: every file below the store is looked at."""
        return {}

    def fingerprint(self, unit: Unit, read: Reads | None = None) -> tuple[str, int]:
        """(``sha256:<hex>`` of the unit's inputs, bytes read), or ("", 0) when they cannot
        be read: what ``--mode resume`` compares and the manifest's ``inputs`` show.  A unit
        of one input its reader read through ``read_input`` or ``input_lines`` (``read``) is
        not read again.  A reader without files of its own (``inputs`` None) overrides this."""
        inputs = self.inputs(unit)
        if inputs is None:
            return "", 0
        if read and len(inputs) == 1 and inputs[0] in read:
            return read[inputs[0]]
        return file_fingerprint(inputs)


def file_fingerprint(paths: tuple[str, ...]) -> tuple[str, int]:
    """SHA-256 over the files' bytes in order, and their total size; ("", 0) if one is
    unreadable.  Read in blocks, so a large file costs no memory."""
    digest = hashlib.sha256()
    size = 0
    for p in paths:
        try:
            with open_input(p) as fh:
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
    _readable(path)
    try:
        data = read_bytes(path)
    except OSError as exc:
        raise _unreadable(path, exc) from None
    if _READ.get() is not None:
        note_read(str(path), ("sha256:" + hashlib.sha256(data).hexdigest(), len(data)))
    return data


def input_lines(path: Path) -> Iterator[bytes]:
    """A store file's lines as they are read, each with its LF (the last one may have none;
    a file that ends with an LF ends with ``b""``, as ``bytes.split`` gives a last piece):
    ``read_input`` for a file too large to hold twice, with its checks and errors.  The
    file's fingerprint is noted (``recording_reads``) once it was read to its end."""
    _readable(path)
    digest, size, raw = hashlib.sha256(), 0, b"\n"
    try:
        with open_input(path) as fh:
            for raw in fh:
                digest.update(raw)
                size += len(raw)
                yield raw
    except OSError as exc:
        raise _unreadable(path, exc) from None
    if raw.endswith(b"\n"):
        yield b""
    note_read(str(path), ("sha256:" + digest.hexdigest(), size))


def _readable(path: Path) -> None:
    if not path.is_file():
        what = (
            "a dangling or looping link"
            if path.is_symlink() and not path.exists()
            else f"not a regular file but {special_kind(path) or 'a folder'}"
        )
        raise SessionReadError(f"{what}; nothing was read", rule="io", source=str(path))


def _unreadable(path: Path, exc: OSError) -> SessionReadError:
    return SessionReadError(f"cannot read file: {exc.strerror}", rule="io", source=str(path))


def note_read(name: str, fingerprint: tuple[str, int]) -> None:
    """Record what a reader read under ``name`` (its ``sha256:`` digest and size) while
    ``recording_reads`` holds: a file (``read_input`` and ``input_lines`` do it), or rows of
    a database it names ``<db>#<key>``."""
    seen = _READ.get()
    if seen is not None:
        seen[name] = fingerprint


#: (fingerprint, size) of each file ``read_input`` or ``input_lines`` read, while
#: ``recording_reads`` holds
Reads = dict[str, tuple[str, int]]
_READ: ContextVar[Reads | None] = ContextVar("trajset_reads", default=None)


@contextmanager
def recording_reads() -> Iterator[Reads]:
    """What ``read_input`` and ``input_lines`` read meanwhile, in this thread: a unit's
    fingerprint is then taken from the bytes its reader read, not from a second read of
    its file."""
    token = _READ.set({})
    try:
        yield cast(Reads, _READ.get())
    finally:
        _READ.reset(token)
