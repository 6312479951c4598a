"""Export damaged stores of every kind one by one and check that nothing is lost without a row.

    python benchmarks/damaged.py [--seed 65] [--per-class 3] [--kinds codex,pi] [--keep DIR]

Unlike ``fuzz.py`` (random bytes), each damage here is one a real store meets: a value of
the wrong type, a missing key, a repeated record, a cut last line, a byte-order mark, an
emptied file, half an emoji, a copied session, a link out of the store or back into it, a
parent cycle, and in a database a wrong-typed cell or a repeated row.  Where it lands (which
file, record and key) is drawn from the store's own records with ``--seed``, so the set is
held out from the cases the tests were written for.  Each damaged store is exported twice
and must show:

- no exception and no ``internal`` row (a damage nobody named);
- its time under ``BOUND_SECONDS`` and its peak memory under ``BOUND_MB`` more than before;
- read = exported + failed, and a failed session has its row;
- data that differ from the undamaged store's only beside an error row (a link that is not
  followed changes nothing);
- the second export byte-identical to the first.

Prints one line per broken check and a JSON summary; exits 1 when any check broke.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import sqlite3
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the fixtures live in tests/
import pyarrow as pa
import pyarrow.parquet as pq

from tests.fixture_stores import lay_out
from trajset.pipeline import ExportOptions, RunOptions, run_export
from trajset.pipeline.stores import READERS

BOUND_SECONDS = 30.0
BOUND_MB = 1024
#: keys whose values are the agent's or a tool's own (no type is fixed below them)
FREE_FORM = {"arguments", "input", "args", "extra", "metadata", "toolUseResult", "parameters",
             "properties", "data", "details", "state"}  # fmt: skip
#: keys of the record ids a reader keys its tree on (a repeated record repeats one)
ID_KEYS = {"id", "uuid"}
PARENT_KEYS = {"parent": "id", "parentUuid": "uuid", "parentId": "id", "parent_id": "id"}
Json = Any
Damage = Callable[[Path, random.Random], str]


def _files(store: Path, suffixes: tuple[str, ...]) -> list[Path]:
    if store.is_file():
        return [store] if store.suffix in suffixes else []
    return sorted(p for p in store.rglob("*") if p.is_file() and not p.is_symlink()
                  and p.suffix in suffixes)  # fmt: skip


def _paths(value: Json, at: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every key path below ``value`` (list items by index)."""
    items = (
        value.items()
        if isinstance(value, dict)
        else enumerate(value)
        if isinstance(value, list)
        else ()
    )
    for k, v in items:  # fmt: skip
        yield (*at, k)
        yield from _paths(v, (*at, k))


def _get(value: Json, path: tuple[Any, ...]) -> Json:
    for k in path:
        value = value[k]
    return value


def _wrong(value: Json) -> Json:
    """A value of another type than ``value``."""
    if isinstance(value, bool) or value is None:
        return "x"
    if isinstance(value, str):
        return 12345
    if isinstance(value, (int, float)):
        return "12345"
    return 12345  # a list or an object: a number (a string may be one of its valid forms)


def _records(store: Path) -> list[tuple[Path, int]]:
    """(file, line) of every JSON record; line -1 for a whole ``.json`` file."""
    out: list[tuple[Path, int]] = []
    for f in _files(store, (".jsonl", ".json")):
        if f.suffix == ".json":
            out.append((f, -1))
            continue
        for i, line in enumerate(f.read_text(encoding="utf-8", errors="replace").split("\n")):
            if line.strip().startswith("{"):
                out.append((f, i))
    return out


def _edit(f: Path, line: int, change: Callable[[Json], Json]) -> None:
    """Parse one record, change it, write it back (that line only)."""
    if line < 0:
        text = f.read_text(encoding="utf-8", errors="surrogateescape")
        f.write_text(
            json.dumps(change(json.loads(text)), indent=2 if "\n" in text.strip() else None)
        )
        return
    lines = f.read_text(encoding="utf-8", errors="surrogateescape").split("\n")
    lines[line] = json.dumps(change(json.loads(lines[line])))
    f.write_text("\n".join(lines), encoding="utf-8", errors="surrogateescape")


def _keyed(
    store: Path,
    rng: random.Random,
    keep: Callable[[Json], bool],
    at: Callable[[tuple[Any, ...]], bool] = lambda p: True,
) -> str:
    """Draw a record and one of its key paths whose value ``keep`` accepts; change it with
    the caller's edit (returned through ``_keyed.path``)."""
    recs = _records(store)
    rng.shuffle(recs)
    for f, line in recs:
        try:
            rec = (
                json.loads(f.read_text(encoding="utf-8", errors="surrogateescape"))
                if line < 0
                else json.loads(
                    f.read_text(encoding="utf-8", errors="surrogateescape").split("\n")[line]
                )
            )
        except ValueError:
            continue
        paths = [p for p in _paths(rec) if at(p) and keep(_get(rec, p))]
        if paths:
            _keyed.found = (f, line, rng.choice(paths))  # type: ignore[attr-defined]
            return f"{f.relative_to(store)}:{line + 1}"
    return ""


def _typed(path: tuple[Any, ...]) -> bool:
    return not FREE_FORM.intersection(k for k in path[:-1] if isinstance(k, str))


def retype(store: Path, rng: random.Random) -> str:
    """One value, at any depth, of another type (not below a free-form key: ``FREE_FORM``)."""
    where = _keyed(store, rng, lambda v: True, _typed)
    if not where:
        return ""
    f, line, path = _keyed.found  # type: ignore[attr-defined]

    def change(rec: Json) -> Json:
        wrong = _wrong(_get(rec, path))
        _get(rec, path[:-1])[path[-1]] = wrong
        retype.written = (path[-1], wrong)  # type: ignore[attr-defined]
        return rec

    _edit(f, line, change)
    return f"{where} {'.'.join(map(str, path))}"


def _kept_as_written(data: dict[str, bytes], clean: dict[str, bytes]) -> bool:
    """Whether the retyped member stands in a changed document as it was written (a value
    a reader keeps verbatim, in ``extra``, is not misread)."""
    key, wrong = retype.written  # type: ignore[attr-defined]
    if not isinstance(key, str):
        return False
    member = json.dumps({key: wrong})[1:-1].encode()
    changed = [v for k, v in data.items() if k.startswith("atif/") and clean.get(k) != v]
    return any(member in v or member.replace(b": ", b":") in v for v in changed)


def drop_key(store: Path, rng: random.Random) -> str:
    """One key, at any depth, removed (a list item is removed instead)."""
    where = _keyed(store, rng, lambda v: True)
    if not where:
        return ""
    f, line, path = _keyed.found  # type: ignore[attr-defined]

    def change(rec: Json) -> Json:
        del _get(rec, path[:-1])[path[-1]]
        return rec

    _edit(f, line, change)
    return f"{where} {'.'.join(map(str, path))}"


def surrogate(store: Path, rng: random.Random) -> str:
    """Half an emoji (a lone UTF-16 surrogate, as a JSON escape) in one text value."""
    where = _keyed(store, rng, lambda v: isinstance(v, str) and len(v) > 3)
    if not where:
        return ""
    f, line, path = _keyed.found  # type: ignore[attr-defined]

    def change(rec: Json) -> Json:
        _get(rec, path[:-1])[path[-1]] += " \ud83d end"
        return rec

    _edit(f, line, change)
    return f"{where} {'.'.join(map(str, path))}"


def _lines_of(store: Path, rng: random.Random) -> tuple[Path, list[str]] | None:
    files = [f for f in _files(store, (".jsonl",)) if f.stat().st_size]
    if not files:
        return None
    f = rng.choice(files)
    return f, f.read_text(encoding="utf-8", errors="surrogateescape").split("\n")


def repeat_line(store: Path, rng: random.Random) -> str:
    """One record written twice (a repeated id)."""
    got = _lines_of(store, rng)
    if not got:
        return ""
    f, lines = got
    keyed = [i for i, x in enumerate(lines) if ID_KEYS & set(_loads(x) or {})]
    if not keyed:
        return ""
    i = rng.choice(keyed)
    lines.insert(i + 1, lines[i])
    f.write_text("\n".join(lines), encoding="utf-8", errors="surrogateescape")
    return f"{f.relative_to(store)}:{i + 1}"


def cut_last(store: Path, rng: random.Random) -> str:
    """The last record cut in its middle (a writer stopped), or a JSON file cut in half."""
    got = _lines_of(store, rng)
    if got:
        f, lines = got
        i = max(i for i, x in enumerate(lines) if x.strip())
        f.write_text(
            "\n".join([*lines[:i], lines[i][: len(lines[i]) // 2]]),
            encoding="utf-8",
            errors="surrogateescape",
        )
        return f"{f.relative_to(store)}:{i + 1}"
    files = _files(store, (".json",))
    if not files:
        return ""
    f = rng.choice(files)
    f.write_bytes(f.read_bytes()[: f.stat().st_size // 2])
    return str(f.relative_to(store))


def _one_file(
    suffixes: tuple[str, ...], change: Callable[[Path], None], adds: bool = False
) -> Damage:
    def damage(store: Path, rng: random.Random) -> str:
        files = _files(store, suffixes)
        if not files or (adds and store.is_file()):
            return ""
        f = rng.choice(files)
        change(f)
        return str(f.relative_to(store))

    return damage


bom = _one_file((".jsonl", ".json"), lambda f: f.write_bytes(b"\xef\xbb\xbf" + f.read_bytes()))
empty = _one_file((".jsonl", ".json", ".db"), lambda f: f.write_bytes(b""))
copy = _one_file((".jsonl", ".json", ".db"),
                 lambda f: shutil.copy2(f, f.with_name(f"{f.stem}-copy{f.suffix}")), adds=True)  # fmt: skip


def link_out(store: Path, rng: random.Random) -> str:
    """A link in the store to a session file outside it (a copy of one of its own)."""
    files = _files(store, (".jsonl", ".json", ".db"))
    if not files or store.is_file():
        return ""
    f = rng.choice(files)
    outside = store.parent / f"outside{f.suffix}"
    shutil.copy2(f, outside)
    (f.parent / f"linked{f.suffix}").symlink_to(outside)
    return str(f.relative_to(store))


def link_back(store: Path, rng: random.Random) -> str:
    """A folder link inside the store back to a folder that holds it."""
    if store.is_file():
        return ""
    dirs = sorted(p for p in store.rglob("*") if p.is_dir() and not p.is_symlink())
    d = rng.choice([store, *dirs])
    (d / "again").symlink_to(rng.choice([store, d]), target_is_directory=True)
    return str(d.relative_to(store))


def cycle(store: Path, rng: random.Random) -> str:
    """A root record made the child of a later record of its file (a parent cycle)."""
    got = [f for f in _files(store, (".jsonl",))]
    rng.shuffle(got)
    for f in got:
        lines = f.read_text(encoding="utf-8", errors="surrogateescape").split("\n")
        recs = [(i, _loads(x)) for i, x in enumerate(lines)]
        recs = [(i, r) for i, r in recs if isinstance(r, dict)]
        for pk, ik in PARENT_KEYS.items():
            roots = [(i, r) for i, r in recs if pk in r and r[pk] is None and ik in r]
            ids = [r[ik] for _, r in recs if isinstance(r.get(ik), str) and pk in r]
            if roots and len(ids) > 1:
                i, root = roots[0]
                root[pk] = ids[-1]
                lines[i] = json.dumps(root)
                f.write_text("\n".join(lines), encoding="utf-8", errors="surrogateescape")
                return f"{f.relative_to(store)}:{i + 1} {pk}"
    return ""


def _loads(text: str) -> Json:
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _db_cell(store: Path, rng: random.Random, repeat: bool) -> str:
    files = _files(store, (".db",))
    if not files:
        return ""
    f = rng.choice(files)
    con = sqlite3.connect(f)
    try:
        tables = [r[0] for r in con.execute("select name from sqlite_master where type='table' "
                                            "and name not like 'sqlite_%' order by name")]  # fmt: skip
        rng.shuffle(tables)
        for t in tables:
            rows = con.execute(f'select rowid, * from "{t}" order by rowid').fetchall()
            if not rows:
                continue
            cols = [d[0] for d in con.execute(f'select * from "{t}" limit 0').description]
            row = rng.choice(rows)
            if repeat:
                marks = ",".join("?" * len(cols))
                try:
                    con.execute(f'insert into "{t}" values ({marks})', row[1:])
                except sqlite3.DatabaseError:
                    continue
                con.commit()
                return f"{f.relative_to(store)} {t} row {row[0]} repeated"
            c = rng.randrange(len(cols))
            try:
                con.execute(f'update "{t}" set "{cols[c]}" = ? where rowid = ?',
                            (_wrong(row[c + 1]), row[0]))  # fmt: skip
            except sqlite3.DatabaseError:
                continue
            con.commit()
            return f"{f.relative_to(store)} {t}.{cols[c]} row {row[0]}"
    finally:
        con.close()
    return ""


DAMAGES: dict[str, Damage] = {
    "retype": retype,
    "drop_key": drop_key,
    "repeat_line": repeat_line,
    "cut_last": cut_last,
    "bom": bom,
    "empty": empty,
    "surrogate": surrogate,
    "copy": copy,
    "link_out": link_out,
    "link_back": link_back,
    "cycle": cycle,
    "db_retype": lambda s, r: _db_cell(s, r, repeat=False),
    "db_repeat": lambda s, r: _db_cell(s, r, repeat=True),
}
#: damages after which the store holds exactly what it held: the data must not change
UNCHANGED = {"link_out", "link_back"}
#: (kind, damage) pairs that are no damage in that format, and why
NOT_DAMAGE = {
    ("gemini-cli", "repeat_line"): "a record's id is an upsert key: a repeated record updates it",
}
#: damages that may be a store's own choice (many keys are optional): only a session lost
#: needs a row
OPTIONAL = {"drop_key"}


def _data(out: Path) -> dict[str, bytes]:
    files = [p for d in ("atif", "data") for p in sorted((out / d).rglob("*")) if p.is_file()]
    return {str(p.relative_to(out)): p.read_bytes() for p in [*files, out / "errors.parquet"]}


def _sessions(data: dict[str, bytes]) -> set[str]:
    tables = [pq.read_table(pa.BufferReader(v)) for k, v in data.items()
              if k.startswith("data/trajectories/")]  # fmt: skip
    return {s for t in tables for s in t.column("session_id").to_pylist()}


def _export(store: Path, out: Path) -> tuple[dict[str, bytes], list[dict[str, Any]], Any, float]:
    start = time.monotonic()
    run = run_export([store], out, ExportOptions(), RunOptions(workers=1))
    took = time.monotonic() - start
    errors = pq.read_table(out / "errors.parquet").to_pylist()
    data = {k: v for k, v in _data(out).items() if k != "errors.parquet"}
    return data, errors, run.counts, took


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def check(work: Path, kind: str, fixture: int, name: str, rng: random.Random) -> list[str]:
    """Damage one copy of a fixture of ``kind`` with ``name``; the broken checks."""
    fx = READERS[kind].fixtures[fixture]
    work.mkdir(parents=True, exist_ok=True)
    clean, _, _, _ = _export(lay_out(fx, work / "clean"), work / "clean-out")
    store = lay_out(fx, work / "store")
    where = DAMAGES[name](store, rng)
    if not where or (kind, name) in NOT_DAMAGE:
        return []  # no place for it in this store (no database, no parent key), or no damage
    what = f"{kind} {fx.path} {name} {where}"
    peak = _peak_mb()
    try:
        data, errors, counts, took = _export(store, work / "out")
        again = _data(work / "out")
        _export(store, work / "out2")
    except Exception:
        return [f"{what}: exception\n{traceback.format_exc()}"]
    broken = []
    internal = [e for e in errors if e["kind"] == "internal"]
    if internal:
        broken.append(f"{what}: internal row: {internal[0]['message'][:300]}")
    if took > BOUND_SECONDS or _peak_mb() - peak > BOUND_MB:
        broken.append(f"{what}: took {took:.1f} s, peak {_peak_mb() - peak:.0f} MB more")
    if counts["sessions_read"] != counts["sessions_exported"] + counts["sessions_failed"]:
        broken.append(f"{what}: counts do not reconcile {dict(counts)}")
    if counts["sessions_failed"] and not errors:
        broken.append(f"{what}: {counts['sessions_failed']} sessions failed without a row")
    if name in OPTIONAL:
        lost = _sessions(clean) - _sessions(data)
        if lost and not errors:
            broken.append(f"{what}: sessions lost without an error row: {sorted(lost)[:3]}")
    elif (
        data != clean
        and (name in UNCHANGED or not errors)
        and not (name == "retype" and _kept_as_written(data, clean))
    ):
        changed = sorted(k for k in data.keys() | clean.keys() if data.get(k) != clean.get(k))
        broken.append(f"{what}: data changed without an error row: {changed[:4]}")
    if again != _data(work / "out2"):
        broken.append(f"{what}: a second export differs")
    return broken


def cases(seed: int, per_class: int, kinds: list[str]) -> Iterator[tuple[str, int, str, int]]:
    """(kind, fixture index, damage, seed) for every case of a run."""
    rng = random.Random(seed)
    for kind in kinds:
        for name in DAMAGES:
            for _ in range(per_class):
                yield kind, rng.randrange(len(READERS[kind].fixtures)), name, rng.randrange(2**32)


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--seed", type=int, default=65)
    ap.add_argument("--per-class", type=int, default=3)
    ap.add_argument("--kinds", default=",".join(READERS))
    ap.add_argument("--keep", type=Path, help="copy each damaged store that broke a check here")
    args = ap.parse_args()
    total = broken = 0
    start = time.monotonic()
    for kind, fx, name, seed in cases(args.seed, args.per_class, args.kinds.split(",")):
        total += 1
        with tempfile.TemporaryDirectory() as tmp:
            problems = check(Path(tmp), kind, fx, name, random.Random(seed))
            for p in problems:
                print(p, flush=True)
            if problems:
                broken += 1
                if args.keep:
                    dest = args.keep / f"{total}-{kind}-{name}"
                    shutil.copytree(Path(tmp) / "store", dest, symlinks=True)
    summary = {"seed": args.seed, "cases": total, "broken": broken,
               "seconds": round(time.monotonic() - start, 1)}  # fmt: skip
    print(json.dumps(summary))
    sys.exit(1 if broken else 0)


if __name__ == "__main__":
    os.environ.setdefault("TRAJSET_QUIET", "1")
    main()
