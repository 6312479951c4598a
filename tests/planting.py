"""Plant a distinct secret into every string field of a store's files (the reader contract).

Every string a store's inputs hold is a field: each string value of a JSON or
JSON Lines file at any depth (a string holding JSON is planted inside, and
written back), each text cell of a SQLite database (its JSON too), and the
whole of any other text file a unit reads.  A field gets its own GitHub-token-
shaped secret appended (`` ghp_<n>… ``, spaces around it so that no character a
reader puts next to it hides its boundary), which the default rules find
wherever they look.

A field whose value the reader needs as it is (an id, an enum, a timestamp, a
reference to another file) changes what the store reads; such fields are
found by halving (the store is read with half of the candidates planted) and
left unplanted, so what is left reads as before, planted together: the same
sessions with the same entries, ids and references.  What is planted must then reach no output byte, file name or
error row (``leaks``).
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from trajset.pipeline.errors import UnitFailed, UnitSkipped
from trajset.pipeline.stores import discover, load_unit, reader_for
from trajset.redactors.structure import OPAQUE
from trajset.schemas.session import Session

JSON = Any
Path_ = tuple[Any, ...]  # a field's place: (file, line or cell, then keys and indexes)


def secret(n: int) -> str:
    """The secret of field ``n``: distinct, and shaped as a GitHub token."""
    return f"ghp_{n:08d}" + "Zq8Lm2Np4Rs6Tv8Xw0Yb1Cd3Ef5Gh"[: 36 - 8]


@dataclass
class Field:
    """One string of a store, where it is and the value it had."""

    place: Path_
    value: str


def _leaves(value: JSON, place: Path_) -> Iterator[Field]:
    if isinstance(value, str):
        inner = _json(value)
        if inner is not None:
            yield from _leaves(inner, (*place, "<json>"))
        elif value:
            yield Field(place, value)
    elif isinstance(value, dict):
        for k, v in value.items():
            if k not in OPAQUE:  # a provider's ciphertext is kept as it is, by design
                yield from _leaves(v, (*place, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _leaves(v, (*place, i))


def _json(text: str) -> JSON:
    if not text.lstrip().startswith(("{", "[")):
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict | list) else None


def _set(value: JSON, keys: Path_, new: Callable[[str], str]) -> JSON:
    """``value`` with the string at ``keys`` replaced by ``new(it)`` (a copy along the way)."""
    if not keys:
        return new(value)
    head, rest = keys[0], keys[1:]
    if head == "<json>":
        return json.dumps(_set(json.loads(value), rest, new), ensure_ascii=False)
    if isinstance(value, dict):
        return {**value, head: _set(value[head], rest, new)}
    return [_set(v, rest, new) if i == head else v for i, v in enumerate(value)]


class Store:
    """A store's input files, their fields, and planting a chosen set of them."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.files = _inputs(root)
        self.original = {f: f.read_bytes() for f in self.files}
        self.fields = [fld for f in self.files for fld in _fields(f, self.original[f])]

    def plant(self, chosen: dict[int, Field], secrets: dict[int, str] | None = None) -> None:
        """Every file as it was, with each chosen field's secret appended (``secrets``: field
        number -> its secret; ``secret(n)`` by default)."""
        by_file: dict[Path, list[tuple[str, Field]]] = {}
        for n, fld in chosen.items():
            by_file.setdefault(fld.place[0], []).append(((secrets or {}).get(n) or secret(n), fld))
        for f in self.files:
            _write(f, self.original[f], by_file.get(f, []))

    def restore(self) -> None:
        self.plant({})


def _inputs(root: Path) -> list[Path]:
    files: set[Path] = set()
    for unit in discover([root]):
        inputs = reader_for(unit.kind).inputs(unit)
        files.update(Path(f) for f in (inputs if inputs is not None else unit.files))
    return sorted(f for f in files if f.is_file())


def _is_sqlite(data: bytes) -> bool:
    return data.startswith(b"SQLite format 3\x00")


def _fields(f: Path, data: bytes) -> list[Field]:
    if _is_sqlite(data):
        with closing(sqlite3.connect(f)) as db:
            return [fld for cell, text in _cells(db) for fld in _text_fields((f, *cell), text)]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return []
    if f.suffix == ".jsonl":
        return [
            fld
            for i, line in enumerate(text.split("\n"))
            if (doc := _json(line)) is not None
            for fld in _leaves(doc, (f, i))
        ]
    return _text_fields((f,), text)


def _text_fields(place: Path_, text: str) -> list[Field]:
    doc = _json(text)
    if doc is not None:
        return list(_leaves(doc, (*place, "<json>")))
    return [Field(place, text)] if text.strip() else []


def _cells(db: sqlite3.Connection) -> Iterator[tuple[tuple[str, int, str], str]]:
    tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    for table in tables:
        columns = [r[1] for r in db.execute(f'PRAGMA table_info("{table}")')]
        for rowid, *values in db.execute(f'SELECT rowid, * FROM "{table}"'):
            for column, value in zip(columns, values, strict=True):
                if isinstance(value, str) and value:
                    yield (table, rowid, column), value


def _write(f: Path, data: bytes, chosen: list[tuple[str, Field]]) -> None:
    if _is_sqlite(data):
        for side in ("-wal", "-shm", "-journal"):
            f.with_name(f.name + side).unlink(missing_ok=True)
        f.write_bytes(data)
        if chosen:
            with closing(sqlite3.connect(f)) as db:
                for n, fld in chosen:
                    table, rowid, column, *keys = fld.place[1:]
                    sql = f'SELECT "{column}" FROM "{table}" WHERE rowid = ?'
                    (old,) = db.execute(sql, (rowid,)).fetchone()
                    new = _set(old, tuple(keys), lambda v, n=n: f"{v} {n} ")
                    db.execute(f'UPDATE "{table}" SET "{column}" = ? WHERE rowid = ?', (new, rowid))
                db.commit()
        return
    if not chosen:
        f.write_bytes(data)
        return
    text = data.decode("utf-8")
    if f.suffix == ".jsonl":
        lines = text.split("\n")
        by_line: dict[int, list[tuple[str, Field]]] = {}
        for n, fld in chosen:
            by_line.setdefault(fld.place[1], []).append((n, fld))
        for i, at in by_line.items():
            doc = json.loads(lines[i])
            for n, fld in at:
                doc = _set(doc, fld.place[2:], lambda v, n=n: f"{v} {n} ")
            lines[i] = json.dumps(doc, ensure_ascii=False)
        f.write_text("\n".join(lines), encoding="utf-8")
        return
    if chosen[0][1].place[1:2] == ("<json>",):  # a JSON document: decoded once
        doc = json.loads(text)
        for n, fld in chosen:
            doc = _set(doc, fld.place[2:], lambda v, n=n: f"{v} {n} ")
        f.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
        return
    for n, fld in chosen:
        text = _set(text, fld.place[1:], lambda v, n=n: f"{v} {n} ")
    f.write_text(text, encoding="utf-8")


def skeleton(root: Path) -> JSON:
    """What a store reads as: every session's id and its entries' ids, types and references,
    in order."""
    out = []
    for unit in discover([root]):
        try:
            loaded = load_unit(unit)
        except (UnitFailed, UnitSkipped) as exc:
            out.append(("failed", type(exc).__name__))
            continue
        for s in loaded:
            if isinstance(s, Session):
                out.append((s.id, [_ids(e.raw) for e in s.entries], len(s.issues)))
            else:
                out.append(("error", type(s).__name__))
    return out


def _ids(raw: JSON) -> tuple[str, ...]:
    """An entry's ids and references (never rewritten: a secret in one refuses the session,
    so they are structure here, like the entry's type)."""
    item = raw.get("item") if isinstance(raw.get("item"), dict) else {}
    keys = ("id", "type", "parent", "response_id", "response", "call_id", "session", "target")
    return (*(str(raw.get(k)) for k in keys), str(item.get("call_id")), str(item.get("id")))


#: values that are ids, hashes or times (a secret in an id refuses its session, by design)
ID_LIKE = re.compile(
    r"[0-9a-fA-F-]{8,}|[A-Za-z]{2,8}[_-][A-Za-z0-9_-]{10,}|\d{4}-\d\d-\d\dT[\d:.]+(Z|[+-][\d:]+)?"
    r"|sha256:[0-9a-f]+|[0-9.]+"
)


def _groups(fields: list[Field]) -> list[list[int]]:
    """Fields by value: every place a value is gets the same secret, so a value that refers
    to another place (an id in ``parent``) still does; ids, hashes and times are left out."""
    by_value: dict[str, list[int]] = {}
    for n, fld in enumerate(fields):
        if not ID_LIKE.fullmatch(fld.value):
            by_value.setdefault(fld.value, []).append(n)
    return list(by_value.values())


def plant_all(root: Path) -> list[str]:
    """Plant every field the store still reads the same with; the secrets planted."""
    store = Store(root)
    want = skeleton(root)
    groups = _groups(store.fields)

    def plant(chosen: list[int]) -> None:
        """The chosen groups planted, each with the secret of its first field."""
        fields = {n: store.fields[n] for g in chosen for n in groups[g]}
        store.plant(fields, {n: secret(groups[g][0]) for g in chosen for n in groups[g]})

    def reads_alike(chosen: list[int]) -> bool:
        try:
            plant(chosen)
            return skeleton(root) == want
        except Exception:  # a field the planting itself cannot rewrite
            return False

    def keep(candidates: list[int], base: list[int]) -> list[int]:
        """The candidates that read alike planted together with ``base`` (kept before)."""
        if not candidates or reads_alike([*base, *candidates]):
            return candidates
        if len(candidates) == 1:
            return []
        half = len(candidates) // 2
        left = keep(candidates[:half], base)
        return left + keep(candidates[half:], [*base, *left])

    kept = keep(list(range(len(groups))), [])
    plant(kept)
    assert skeleton(root) == want
    return [secret(groups[g][0]) for g in kept]


def leaks(out: Path, secrets: list[str], errors: list[Any], prefix: int | None = 16) -> list[str]:
    """Where any planted secret (or its first ``prefix`` characters; None: all of it) is in
    the export: files, file names, error rows."""
    probes = {s: s[:prefix].encode() for s in secrets}
    found = []
    for p in out.rglob("*"):
        data = p.read_bytes() if p.is_file() else b""
        if p.suffix == ".parquet":  # compressed: read as values
            data = json.dumps(
                pq.read_table(p).to_pylist(), default=str, ensure_ascii=False
            ).encode()
        for s, probe in probes.items():
            if probe in data or probe.decode() in p.name:
                found.append(f"{p.relative_to(out)}: {s}")
    for e in errors:
        text = f"{e.source} {e.session_id} {e.message}"
        found += [f"error row: {s}" for s in secrets if s[:prefix] in text]
    return found


def word_leaks(out: Path, words: list[str], errors: list[Any]) -> list[str]:
    """Where any of ``words`` stands as a word (no letter or digit touching it, any case) in
    the export: files, file names, error rows."""
    if not words:
        return []
    pattern = re.compile(
        r"(?<![A-Za-z0-9])(?i:" + "|".join(re.escape(w) for w in words) + r")(?![A-Za-z0-9])"
    )
    found = []
    for p in out.rglob("*"):
        data = p.read_bytes() if p.is_file() else b""
        if p.suffix == ".parquet":
            data = json.dumps(
                pq.read_table(p).to_pylist(), default=str, ensure_ascii=False
            ).encode()
        text = data.decode("utf-8", errors="replace") + "\n" + p.name
        found += [f"{p.relative_to(out)}: {m.group()}" for m in pattern.finditer(text)]
    for e in errors:
        text = f"{e.source} {e.session_id} {e.message}"
        found += [f"error row: {m.group()}" for m in pattern.finditer(text)]
    return found
