"""The test stores every reader declares (``Reader.fixtures``), laid out in a test's folder.

The test tables (the reader contract, determinism, the mixed-kinds export) and the seeds
of ``benchmarks/fuzz.py`` are built from the registry here, so a new reader's fixtures are
one line of its own module.  A fixture is a folder below ``tests/data/``, or
``build:<name>`` for a store laid out by one of ``BUILT`` (a database written from
session files, the toy reader's files).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from trajset.pipeline import sample_store
from trajset.pipeline.errors import UnitFailed
from trajset.pipeline.stores import READERS, Fixture, Unit, load_unit
from trajset.redactors.identities import Identity
from trajset.schemas.session import Session

from .builder import write_sqlite_store
from .conftest import UPSTREAM, session_file
from .toy_reader import ToyReader, write_toy_store

DATA = Path(__file__).parent / "data"


def _sqlite(dest: Path) -> Path:
    """The reference's sessions in one database, as the Go reference lays it out."""
    dest.mkdir()
    write_sqlite_store(dest / "sessions.db", [session_file(n) for n in ("basic", "branch", "runs")])
    return dest / "sessions.db"


def _sessions(dest: Path) -> Path:
    """The reference's well-formed session files (its broken ones are for other tests)."""
    dest.mkdir()
    for name in ("basic", "branch", "compaction", "extensions", "runs"):
        shutil.copy(session_file(name), dest / f"{name}.jsonl")
    return dest


def _opencode_json(dest: Path) -> Path:
    """The legacy OpenCode JSON store without its fork (a cut source changes what the merged
    fork holds: tests/test_store_opencode.py), and without its truncated part file."""
    storage = shutil.copytree(UPSTREAM / "opencode" / "legacy", dest) / "storage"
    fork = "ses_4670bca5fffePjWAQvLzY4V9qx"
    (storage / "session" / "global" / f"{fork}.json").unlink()
    for message in (storage / "message" / fork).glob("*.json"):
        shutil.rmtree(storage / "part" / message.stem)
    shutil.rmtree(storage / "message" / fork)
    for part in (storage / "part").rglob("*.json"):
        if not part.read_text().rstrip().endswith("}"):
            part.unlink()
    return dest


def _toy(dest: Path) -> Path:
    write_toy_store(dest, 3)
    return dest


def _sample(dest: Path) -> Path:
    return Path(shutil.copytree(sample_store(), dest))


#: ``build:<name>`` -> how to lay that store out at a given (new) path
BUILT: dict[str, Callable[[Path], Path]] = {
    "sample": _sample,
    "sessions": _sessions,
    "sqlite": _sqlite,
    "opencode-json": _opencode_json,
    "toy": _toy,
}


def lay_out(fixture: Fixture, dest: Path) -> Path:
    """A copy of ``fixture`` at ``dest`` (links kept as links); the store's path."""
    if fixture.path.startswith("build:"):
        return BUILT[fixture.path.removeprefix("build:")](dest)
    src = DATA / fixture.path
    if src.is_file():
        dest.mkdir(parents=True)
        return Path(shutil.copy(src, dest / src.name))
    return Path(shutil.copytree(src, dest, symlinks=True))


def fixtures(with_toy: bool = False) -> dict[str, tuple[Fixture, ...]]:
    """Store kind -> its reader's fixtures, for every registered reader (and the toy one)."""
    out = {kind: reader.fixtures for kind, reader in READERS.items()}
    return out | {ToyReader.kind: ToyReader.fixtures} if with_toy else out


def met(units: list[Unit]) -> list[Identity]:
    """Every identity the units' converters met (``Session.met``); a unit that fails whole
    meets none (its error row is another test's)."""
    found: list[Identity] = []
    for u in units:
        try:
            loaded = load_unit(u)
        except UnitFailed:  # an owner folder of none (einox), a database that does not open
            continue
        found += [Identity(k, v) for s in loaded if isinstance(s, Session) for k, v in s.met]
    return found
