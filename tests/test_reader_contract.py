"""The reader contract, for every registered reader and the fixtures of its kind.

A new reader gets every check here by declaring its test stores in its own
``fixtures`` (``Reader.fixtures``, laid out by ``fixture_stores.py``); a registered
reader without any fails ``test_every_registered_reader_declares_fixtures``.  The
checks: a store is detected as its own kind and by no other reader as specifically
(``Reader.match``); units are stable; every unit loads; a file cut at many byte
offsets keeps its complete prefix and reports the tail; the fingerprint changes
when one byte of an input does; nothing outside the store is opened; every session
read is exported or an error row; no planted secret and no identity the reader reads
or its converter meets reaches an output.  ``toy_reader.py`` is a reader written
through the public seam only, and passes the same checks.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from trajset.pipeline import ExportOptions, RunOptions, run_export
from trajset.pipeline.errors import UnitFailed, UnitSkipped
from trajset.pipeline.stores import (
    READERS,
    Reader,
    Unit,
    detect_kind,
    discover,
    fingerprint,
    identities,
    load_unit,
    reader_for,
    registry,
)
from trajset.redactors.identities import named
from trajset.schemas.session import Session

from .fixture_stores import fixtures, lay_out, met
from .planting import leaks, plant_all, word_leaks
from .toy_reader import ToyReader

#: store kind -> its reader's fixtures (``Reader.fixtures``), every registered reader and the toy one
FIXTURES = fixtures(with_toy=True)
CASES = [(kind, i) for kind, found in FIXTURES.items() for i in range(len(found))]
#: the fixtures a cut at any byte leaves a prefix of (``Fixture.cut``)
CUT_CASES = [(kind, i) for kind, i in CASES if FIXTURES[kind][i].cut]


@pytest.fixture
def readers(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Reader]]:
    """``READERS`` with the toy reader registered beside the others."""
    with_toy = registry(*READERS.values(), ToyReader())  # its order decides nothing
    monkeypatch.setattr("trajset.pipeline.stores.READERS", with_toy)
    yield with_toy


@pytest.fixture(params=CASES, ids=[f"{k}-{i}" for k, i in CASES])
def case(
    request: pytest.FixtureRequest, tmp_path: Path, readers: dict[str, Reader]
) -> tuple[str, Path]:
    """(kind, a store of that kind laid out in the test's folder), for every fixture."""
    return _laid_out(request.param, tmp_path)


@pytest.fixture(params=CUT_CASES, ids=[f"{k}-{i}" for k, i in CUT_CASES])
def cut_case(
    request: pytest.FixtureRequest, tmp_path: Path, readers: dict[str, Reader]
) -> tuple[str, Path]:
    """``case``, for the fixtures a cut leaves a prefix of."""
    return _laid_out(request.param, tmp_path)


def _laid_out(param: tuple[str, int], tmp_path: Path) -> tuple[str, Path]:
    kind, i = param
    return kind, lay_out(FIXTURES[kind][i], tmp_path / f"{kind}-{i}")


def test_every_registered_reader_declares_fixtures() -> None:
    missing = sorted(k for k, r in READERS.items() if not r.fixtures)
    assert not missing, f"declare the test stores of {missing} in their readers' fixtures"


def test_a_store_is_detected_as_its_own_kind_and_by_no_other_reader_as_specifically(
    case: tuple[str, Path], tmp_path: Path, readers: dict[str, Reader]
) -> None:
    kind, store = case
    assert detect_kind(store) == kind
    own = readers[kind].match
    for other, reader in readers.items():
        if other != kind and reader.detect(store):
            assert reader.match < own, f"the {other} reader claims a {kind} store as specifically"
    assert reader_for(kind).locations or kind in ("agentsession-sqlite", "suga", "harbor", "toy")


def test_units_are_stable_and_each_loads(
    case: tuple[str, Path], tmp_path: Path, readers: dict[str, Reader]
) -> None:
    kind, store = case
    units = discover([store])
    assert units and units == discover([store]) and all(u.kind == kind for u in units)
    for f in store.rglob("*") if store.is_dir() else [store]:
        os.utime(f, (1, 1))  # times are no part of a unit
    assert discover([store]) == units
    sessions = 0
    for unit in units:
        try:
            loaded = load_unit(unit)
        except UnitSkipped:
            continue
        assert not [s for s in loaded if isinstance(s, UnitFailed)], loaded
        sessions += sum(isinstance(s, Session) for s in loaded)
    assert sessions


def _largest_file(store: Path) -> Path:
    files = [store] if store.is_file() else [p for p in store.rglob("*") if p.is_file()]
    return max(files, key=lambda p: (p.stat().st_size, str(p)))


def _entries(store: Path) -> dict[str, list[str]]:
    """Session id -> its entry ids in file order, of every session that reads."""
    out: dict[str, list[str]] = {}
    for unit in discover([store]):
        try:
            loaded = load_unit(unit)
        except (UnitFailed, UnitSkipped):
            continue
        for s in loaded:
            if isinstance(s, Session):
                out[s.id] = [e.id for e in s.entries]
    return out


def _is_prefix(cut: list[str], whole: list[str]) -> bool:
    """``cut`` is the start of ``whole``, but for its last entries: a converter closes the
    model call it was cut in early (an event standing in for the item cut off, the call's
    ``response`` entry named after the last item it saw, the leaf label naming that)."""
    same = next(
        (n for n, (a, b) in enumerate(zip(cut, whole, strict=False)) if a != b),
        min(len(cut), len(whole)),
    )
    return same >= len(cut) - 3


def test_a_file_cut_anywhere_keeps_its_complete_prefix_and_reports_the_tail(
    cut_case: tuple[str, Path], tmp_path: Path, readers: dict[str, Reader]
) -> None:
    _, store = cut_case
    target = _largest_file(store)
    data = target.read_bytes()
    whole = _entries(store)
    offsets = sorted({len(data) * k // 13 for k in range(1, 13)} - {0, len(data)})
    for n, at in enumerate(offsets):
        target.write_bytes(data[:at])
        for sid, ids in _entries(store).items():  # what reads is a prefix of what was there
            assert _is_prefix(ids, whole.get(sid, ids)), (at, sid)
        if n % 4 == 0:  # the whole run, at a few of the offsets
            out = tmp_path / f"out-{at}"
            run = run_export([store], out, ExportOptions(), RunOptions(workers=1))
            named = [e for e in run.errors if target.name in e.source or target.name in e.message]
            cut_at_line_end = data[at - 1 : at] == b"\n"
            assert named or cut_at_line_end, f"a cut at byte {at} of {target.name} is not reported"
    target.write_bytes(data)


def test_the_fingerprint_changes_with_one_byte_of_an_input(
    case: tuple[str, Path], tmp_path: Path, readers: dict[str, Reader]
) -> None:
    kind, store = case
    units = [u for u in discover([store]) if readers[kind].inputs(u) != ()][:3]
    assert units
    for unit in units:
        before, size = fingerprint(unit)
        assert before.startswith("sha256:") and size > 0
        undo = CHANGE_ONE_BYTE.get(kind, _flip_a_byte)(readers[kind], unit)
        assert fingerprint(unit)[0] != before
        undo()
        assert fingerprint(unit)[0] == before


def _flip_a_byte(reader: Reader, unit: Unit) -> Callable[[], None]:
    """One bit of the middle byte of the unit's largest input flipped; returns the undo."""
    victim = Path(max(reader.inputs(unit) or (), key=lambda f: Path(f).stat().st_size))
    data = victim.read_bytes()
    changed = bytearray(data)
    changed[len(data) // 2] ^= 0x01
    victim.write_bytes(bytes(changed))
    return lambda: victim.write_bytes(data)


def _change_a_row(reader: Reader, unit: Unit) -> Callable[[], None]:
    """One byte of the session's first entry line changed in the database."""
    import sqlite3

    with sqlite3.connect(unit.files[0]) as db:
        (line,) = db.execute(
            "SELECT line FROM entries WHERE session_id = ? AND seq = 0", (unit.key,)
        ).fetchone()
        db.execute(
            "UPDATE entries SET line = ? WHERE session_id = ? AND seq = 0",
            (line.replace('"', ' "', 1), unit.key),
        )

    def undo() -> None:
        with sqlite3.connect(unit.files[0]) as db:
            db.execute(
                "UPDATE entries SET line = ? WHERE session_id = ? AND seq = 0", (line, unit.key)
            )

    return undo


def _change_a_part(reader: Reader, unit: Unit) -> Callable[[], None]:
    """One byte of a part row of the unit's sessions changed in the OpenCode database (a byte
    of a file when the unit is JSON files only)."""
    import sqlite3

    if reader.inputs(unit) is not None:
        return _flip_a_byte(reader, unit)
    sessions = reader.session_ids(unit)
    with sqlite3.connect(unit.files[0]) as db:
        pid, data = db.execute(
            f"SELECT id, data FROM part WHERE session_id IN ({','.join('?' * len(sessions))}) "
            "ORDER BY id LIMIT 1",
            sessions,
        ).fetchone()
        db.execute("UPDATE part SET data = ? WHERE id = ?", (data.replace('"', ' "', 1), pid))

    def undo() -> None:
        with sqlite3.connect(unit.files[0]) as db:
            db.execute("UPDATE part SET data = ? WHERE id = ?", (data, pid))

    return undo


#: kinds whose inputs are not whole files: how to change one byte of a unit's input
CHANGE_ONE_BYTE: dict[str, Callable[[Reader, Unit], Callable[[], None]]] = {
    "agentsession-sqlite": _change_a_row,
    "opencode": _change_a_part,
}


def test_nothing_outside_a_store_is_opened(tmp_path: Path) -> None:
    """Reading any fixture store (discovery, fingerprints, every unit) opens no path outside
    it; watched by an audit hook in a process of its own (``opened_paths.py``)."""
    laid = [lay_out(FIXTURES[k][i], tmp_path / f"{k}-{i}") for k, i in CASES]
    done = subprocess.run(
        [sys.executable, "-m", "tests.opened_paths", *map(str, laid)],
        cwd=Path(__file__).resolve().parents[1], capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    outside = {store: paths for store, paths in json.loads(done.stdout).items() if paths}
    assert len(json.loads(done.stdout)) == len(CASES) and not outside, outside


def test_every_session_read_is_exported_or_an_error_row(
    case: tuple[str, Path], tmp_path: Path, readers: dict[str, Reader]
) -> None:
    _, store = case
    out = tmp_path / "out"
    run = run_export([store], out, ExportOptions(), RunOptions(workers=1))
    c = run.counts
    assert c["sessions_read"] == c["sessions_exported"] + c["sessions_failed"] > 0
    exported = {r["session_id"] for r in pq.read_table(out / "data" / "trajectories").to_pylist()}
    errors = pq.read_table(out / "errors.parquet").to_pylist()
    for unit in discover([store]):
        try:
            loaded = load_unit(unit)
        except UnitSkipped:
            continue
        except UnitFailed as exc:
            loaded = [exc]
        for s in loaded:
            if isinstance(s, Session):
                assert s.id in exported or s.id in {e["session_id"] for e in errors}, s.id
            else:
                assert any(e["source"] == (s.source or unit.label) for e in errors), s


def test_a_toy_store_exports_through_the_command_line_kind(
    tmp_path: Path, readers: dict[str, Reader]
) -> None:
    """The toy reader, registered, is a store kind like the others (``--store-kind toy``)."""
    store = lay_out(ToyReader.fixtures[0], tmp_path / "toy")
    run = run_export([store], tmp_path / "out", ExportOptions(store_kind="toy"), RunOptions())
    assert run.counts["sessions_exported"] == 3 and not run.errors


def test_a_secret_planted_in_any_string_field_reaches_no_output(
    case: tuple[str, Path], tmp_path: Path, readers: dict[str, Reader]
) -> None:
    """Each string field of the store's files gets a secret of its own (``planting.py``);
    none may reach an output byte, a file name or an error row, the traces included (a
    native trace copies every line of the store's files, each value redacted)."""
    _, store = case
    secrets = plant_all(store)
    assert secrets, "no field could be planted"
    out = tmp_path / "out"
    run = run_export([store], out, ExportOptions(traces=True), RunOptions(workers=1))
    traced = run.counts["traces_native"] + run.counts["traces_sts"]
    assert traced == run.counts["sessions_exported"]  # one trace per session with documents
    found = leaks(out, secrets, run.errors)
    assert not found, f"{len(found)} planted secrets reached the export: {found[:10]}"


@pytest.mark.parametrize("kind", list(FIXTURES))
def test_each_reader_reads_the_identities_it_declares(
    kind: str, tmp_path: Path, readers: dict[str, Reader]
) -> None:
    """Every kind of identity a reader's fixtures give is one it declares, and a reader that
    declares some finds some in its fixtures."""
    declared = {k for k, _ in readers[kind].identity_fields}
    found: set[str] = set()
    for i, fixture in enumerate(FIXTURES[kind]):
        store = lay_out(fixture, tmp_path / f"{kind}-{i}")
        found |= {x.kind for u in discover([store], kind) for x in readers[kind].identities(u)}
    assert found <= declared, found - declared
    assert bool(found) == bool(declared), declared


def test_no_identity_a_reader_declares_reaches_an_output(
    case: tuple[str, Path], tmp_path: Path, readers: dict[str, Reader]
) -> None:
    """Every owner, participant, working folder, remote and branch the store's reader
    finds (``identity_v1``) is, in every output byte, file name and error row, a pseudonym:
    those it reads before the run, and those its converter met (``Session.met``), which a
    reader whose cheap pass misses a field would otherwise write verbatim."""
    _, store = case
    units = discover([store])
    people = named([*identities(units), *met(units)])
    values = sorted({i.value for i in people if i.kind != "user"})
    out = tmp_path / "out"
    run = run_export([store], out, ExportOptions(), RunOptions(workers=1))
    found = leaks(out, values, run.errors, prefix=None)
    # a user name is numbered where it stands as a word (``sam`` in "sample" is no mention)
    users = {i.value for i in people if i.kind == "user"}
    found += word_leaks(out, sorted(users), run.errors)
    assert not found, f"{len(found)} identities reached the export: {found[:10]}"
