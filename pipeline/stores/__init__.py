"""Store readers behind one seam, and the run's view of a store (DESIGN §1-§2).

``READERS`` is the registry of store kinds, built from the readers (each
names its own ``kind``): ``auto`` takes the most specific reader whose
``detect`` claims a store (``Reader.match``), and every later step looks the
unit's kind up here, so the store kind is dispatched in exactly this place.  ``reader_options``
checks ``--reader-option`` against what the readers declare;
``discover`` lists the work units of the given stores in a stable order;
``load_unit`` reads one; ``SessionIndex`` knows which unit holds a session,
so linked subsessions can be loaded without reading every unit (``IndexFile``
is the same, in a file, for the jobs of a run).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path

from trajset.redactors.identities import Identity, home_users
from trajset.schemas.session import Session

from ..errors import UnitFailed, UsageError
from ..jsonio import fix_surrogates
from .agentsession import AgentSessionReader, read_session, read_session_text, sessions_beside
from .base import (
    Fixture,
    Loaded,
    Location,
    Match,
    OptionValue,
    Reader,
    ReaderOption,
    Reads,
    Unit,
    UnitOptions,
    read_input,
    recording_reads,
)
from .claude import ClaudeCodeReader
from .codex import CodexReader
from .copilot import CopilotCliReader
from .cursor import CursorReader
from .draft import SessionDraft
from .einox import EinoxReader
from .gemini import GeminiCliReader
from .harbor import HarborReader
from .index_file import IndexFile
from .opencode import OpenCodeReader
from .pi import PiReader
from .qwen import QwenCodeReader
from .regular import Boundary, RealPaths, special_kind
from .skipped import SKIPS_LISTED, skipped_paths
from .sqlite import SqliteReader
from .suga import SugaReader
from .template import ConvertingReader


def registry(*readers: Reader) -> dict[str, Reader]:
    """Store kind -> reader, in the order given; a kind named twice is a programming error."""
    out: dict[str, Reader] = {}
    for r in readers:
        if r.kind in out or r.kind == "auto":
            raise ValueError(f"store kind {r.kind!r} is registered twice (or is reserved)")
        out[r.kind] = r
    return out


#: store kind -> reader (``auto`` takes the most specific reader that claims a store:
#: ``detect_kind``; the order is the one listings show)
READERS: dict[str, Reader] = registry(
    OpenCodeReader(),
    HarborReader(),
    SqliteReader(),
    EinoxReader(),
    SugaReader(),
    GeminiCliReader(),
    ClaudeCodeReader(),
    QwenCodeReader(),
    CodexReader(),
    CopilotCliReader(),
    CursorReader(),
    PiReader(),
    AgentSessionReader(),
)
STORE_KINDS = ("auto", *READERS)


def sample_store() -> Path:
    """The sample store bundled with the package."""
    return Path(str(resources.files("trajset.pipeline") / "sample_store"))


def detect_kind(path: Path) -> str:
    """The kind of the store at ``path``: of the readers that claim it, the most specific
    (``Reader.match``).  ``UsageError`` when it does not exist, is no file or folder (a named
    pipe, socket or device), or two kinds claim it alike."""
    special = special_kind(path)
    what = "does not exist" if not path.exists() else special and f"is {special}"
    claims = [] if what else [(r.match, k) for k, r in READERS.items() if r.detect(path)]
    if not claims:
        raise UsageError(
            f"store {path} {what or 'is no file or folder'}; "
            "give a session file, a folder of them or a database"
        )
    best = max(m for m, _ in claims)
    found = [k for m, k in claims if m == best]
    if len(found) > 1:
        raise UsageError(
            f"store {path} looks like a store of each of {', '.join(found)}; name its kind "
            f"with --store-kind (e.g. --store-kind {found[0]})"
        )
    return found[0]


def reader_for(kind: str) -> Reader:
    """The reader of ``kind``; ``UsageError`` listing the valid kinds."""
    if kind not in READERS:
        raise UsageError(f"unknown store kind {kind!r}; valid: {', '.join(STORE_KINDS)}")
    return READERS[kind]


def option_help(kinds: Iterable[str] | None = None) -> list[str]:
    """``kind: name=TYPE (default ...): help`` for every option of the given kinds (all)."""
    return [
        f"{kind}: {o.describe()}"
        for kind in (READERS if kinds is None else kinds)
        for o in READERS[kind].options
    ]


def own_preferences() -> str:
    """Each store kind's own preference signal (``Reader.prefer``), for help and the card:
    ``latest`` (what the user kept), and the kinds whose stores record another."""
    own = "; ".join(f"{k}: {', '.join(r.prefer)}" for k, r in READERS.items() if r.prefer)
    return "latest (what the user kept)" + (f"; {own}" if own else "")


def reader_options(
    kinds: Iterable[str], given: Iterable[tuple[str, str]]
) -> dict[str, UnitOptions]:
    """The typed options of each kind from ``--reader-option NAME=VALUE`` pairs: a name must
    be declared by a reader of ``kinds`` (a store of the run), and its value parse as the
    declared type; else ``UsageError`` listing the valid options of those kinds."""
    kinds = list(dict.fromkeys(kinds))
    typed: dict[str, dict[str, OptionValue]] = {k: {} for k in kinds}
    for name, text in given:
        declared = [(k, o) for k in kinds for o in READERS[k].options if o.name == name]
        if not declared:
            valid = option_help(kinds)
            raise UsageError(
                f"--reader-option {name}: not an option of the "
                f"{', '.join(kinds) or 'given'} reader{'s' if len(kinds) > 1 else ''}; "
                + (f"valid: {'; '.join(valid)}" if valid else "they take no options")
            )
        for kind, option in declared:
            typed[kind][name] = option.parse(text, kind)
    return {k: tuple(sorted(v.items())) for k, v in typed.items()}


def store_kinds(stores: Iterable[Path], kind: str = "auto") -> list[str]:
    """The kind of each store: ``kind``, or what ``detect_kind`` says of each under ``auto``."""
    if kind != "auto":
        reader_for(kind)
        for s in stores:
            _check_kind(s, kind)
    return [detect_kind(s) if kind == "auto" else kind for s in stores]


def _check_kind(store: Path, kind: str) -> None:
    """``UsageError`` naming the kind ``store`` is when ``--store-kind`` names another and
    its reader does not claim it (a Claude Code file read as Codex exported nothing and
    exited 0).  Only a layout or marker another reader alone writes counts."""
    if not store.exists() or READERS[kind].detect(store):
        return
    others = sorted(k for k, r in READERS.items() if r.match >= Match.LAYOUT and r.detect(store))
    if others:
        raise UsageError(
            f"store {store} holds {' or '.join(others)} sessions, not {kind}: drop "
            f"--store-kind, or give --store-kind {others[0]}"
        )


def _regular_only(unit: Unit) -> Unit | None:
    """``unit`` without the named pipes, sockets and devices its reader found (they are
    listed as skipped: ``skipped_paths``); None when nothing else is left of it."""
    files = tuple(f for f in unit.files if not special_kind(f))
    if len(files) == len(unit.files):
        return unit
    return replace(unit, files=files) if files else None


def _follows_links(kind: str, options: UnitOptions) -> bool:
    """Whether the reader is asked to follow links out of the store (``follow_symlinks``)."""
    reader = READERS[kind]
    declared = any(o.name == "follow_symlinks" for o in reader.options)
    return declared and bool(reader.option(options, "follow_symlinks"))


def _inside(store: Path, units: list[Unit], real: RealPaths) -> list[Unit]:
    """``units`` without the files a link leads to out of the store, or to a file of the
    store read without it (``Boundary``; ``skipped_paths`` lists them); none left empty."""
    kept, dropped = Boundary(str(store), real).kept([f for u in units for f in u.files])
    if not dropped:
        return units
    keep = set(kept)
    out = [replace(u, files=tuple(f for f in u.files if f in keep)) for u in units]
    return [u for u in out if u.files]


def _nothing_found(store: Path, kind: str, detected: bool) -> str:
    """Why ``store`` gave no unit, and what to give instead."""
    where = "`trajset sources` lists where each agent keeps its sessions"
    if detected:
        return (
            f"store {store} holds no session file trajset recognises; give the folder an agent "
            f"writes its sessions to, or name its kind with --store-kind ({where})"
        )
    return f"store {store} holds no session that the {kind} reader can find; {where}"


def discover(
    stores: Iterable[Path], kind: str = "auto", options: Iterable[tuple[str, str]] = ()
) -> list[Unit]:
    """Every work unit of the given stores, in a stable order, each once, carrying its
    reader's typed options (``options``: ``NAME=VALUE`` pairs, checked by ``reader_options``)."""
    stores = list(stores)
    kinds = store_kinds(stores, kind)
    typed = reader_options(kinds, options)
    units: dict[Unit, None] = {}
    seen: set[tuple[str, ...]] = set()  # the same files reached by several paths are read once
    real = RealPaths()
    for store, k in zip(stores, kinds, strict=True):
        if not store.exists():
            raise UsageError(f"store {store} does not exist")
        found = [u for u in map(_regular_only, READERS[k].units(store, typed[k])) if u]
        if kind == "auto" and k != AgentSessionReader.kind and store.is_dir():
            read = {os.path.abspath(f) for u in found for f in u.files}
            found += [AgentSessionReader().unit((str(p),)) for p in sessions_beside(store, read)]
        if not _follows_links(k, typed[k]):
            found = _inside(store, found, real)
        if not found:
            raise UsageError(_nothing_found(store, k, kind == "auto"))
        for u in found:
            key = (u.key, *(real(f) for f in u.files))
            if key not in seen:
                seen.add(key)
                units[replace(u, options=typed[k])] = None
    return list(units)


def load_unit(unit: Unit) -> Loaded:
    """The sessions of one unit, an error in place of each that does not read
    (``UnitFailed`` when the whole unit cannot be read)."""
    return reader_for(unit.kind).load(unit)


def fingerprint(unit: Unit, read: Reads | None = None) -> tuple[str, int]:
    """(``sha256:<hex>`` of the unit's input bytes or "", bytes read); ``read``: what its
    reader read meanwhile (``recording_reads``), which is not read again."""
    return reader_for(unit.kind).fingerprint(unit, read)


@dataclass(frozen=True)
class SessionIndex:
    """Session id -> the unit that holds it, for every unit of a run (headers only)."""

    units: dict[str, Unit] = field(default_factory=dict)

    @classmethod
    def of(cls, units: Iterable[Unit]) -> SessionIndex:
        found: dict[str, Unit] = {}
        for u in units:
            try:  # best effort: a unit that cannot say fails when it is read, as an error row
                ids = reader_for(u.kind).session_ids(u)
            except Exception:
                ids = []
            for sid in ids:
                if isinstance(sid, str):  # what a broken header holds is no session id
                    found.setdefault(sid, u)
        return cls(found)

    def unit_of(self, session_id: str) -> Unit | None:
        return self.units.get(session_id)

    def write(self, path: Path) -> IndexFile:
        """The index as a file at ``path``, which jobs carry as its path."""
        return IndexFile.write(path, self.units.items())


def identities(
    units: Iterable[Unit],
    environ: Mapping[str, str] | None = None,
    failed: list[tuple[Unit, str]] | None = None,
) -> list[Identity]:
    """Every unit's identities (``Reader.identities``), in unit order, then the users whose
    homes those values or the units' paths name, and last the user running the export
    (``HOME``, ``USER``): what the run numbers into pseudonyms wherever it stands as a word,
    before any unit is read.  A unit that cannot say is put in ``failed``, with why."""
    found: list[Identity] = []
    paths: list[str] = []
    for u in units:
        paths.append(u.label)
        try:  # a lone surrogate becomes U+FFFD, as in the sessions read (run/characters.py)
            found.extend(
                Identity(i.kind, fix_surrogates(i.value)) for i in reader_for(u.kind).identities(u)
            )
        except Exception as exc:  # whatever a reader raised: said per unit
            if failed is not None:
                failed.append((u, f"{type(exc).__name__}: {exc}"))
    environ = os.environ if environ is None else environ
    own = [environ.get("HOME", ""), f"/home/{environ.get('USER', '')}"]
    return [*found, *home_users([*(i.value for i in found), *paths, *own])]


def store_roots(stores: Iterable[Path]) -> tuple[str, ...]:
    """The folders holding the stores given, as given and absolute: a path the run writes
    outside a session (the manifest's inputs, error rows) is shown from its store's name on."""
    roots = set()
    for s in stores:
        for p in (s, Path(os.path.abspath(s))):
            if p.parent != p and str(p.parent) not in (".", ""):
                roots.add(str(p.parent))
    return tuple(sorted(roots))


#: what a run looks sessions up in: in memory, or in a file (what jobs carry)
Index = SessionIndex | IndexFile


def linked_sessions(index: Index, session: Session, own: dict[str, Session]) -> dict[str, Session]:
    """The subsessions ``session`` links to, transitively: among the unit's own sessions,
    else in the unit the run's index names."""
    found: dict[str, Session] = {}
    todo = [session]
    while todo:
        for e in todo.pop().entries:
            sid = (
                e.raw.get("session")
                if e.type == "link" and e.raw.get("rel") == "subsession"
                else None
            )
            if not isinstance(sid, str) or sid in found or sid == session.id:
                continue
            if sid in own:
                found[sid] = own[sid]
                todo.append(own[sid])
                continue
            unit = index.unit_of(sid)
            try:
                loaded = load_unit(unit) if unit else []
            except UnitFailed:
                loaded = []
            child = next((s for s in loaded if isinstance(s, Session) and s.id == sid), None)
            if child is not None:
                found[sid] = child
                todo.append(child)
    return found


__all__ = [
    "READERS",
    "SKIPS_LISTED",
    "STORE_KINDS",
    "ConvertingReader",
    "Fixture",
    "Index",
    "IndexFile",
    "Loaded",
    "Location",
    "Match",
    "Reader",
    "ReaderOption",
    "SessionDraft",
    "SessionIndex",
    "Unit",
    "UnitOptions",
    "detect_kind",
    "discover",
    "fingerprint",
    "linked_sessions",
    "load_unit",
    "option_help",
    "own_preferences",
    "read_input",
    "read_session",
    "read_session_text",
    "reader_for",
    "reader_options",
    "recording_reads",
    "registry",
    "sample_store",
    "skipped_paths",
]
