"""The hostile cases every reader meets, built in its own store's layout.

A case changes one input of a real store of the kind (the largest file a unit reads, or
the largest JSON cell of its database): it cuts it inside a UTF-8 character, puts huge or
not-a-number values, year-1 and year-9999 times, hostile ids or a self-referencing link into
it, grows one of its strings to a 20 MB line, or puts a named pipe or a symlink loop where
it was.  A database gets the right tables with values of the wrong types too.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any

from trajset.pipeline.stores import discover, reader_for

JSON = Any
Text = Callable[[str], str]

BIG = "x" * (20 * 1024 * 1024)
_INT = re.compile(r"(?<=[:,\[])(\s*)\d+(?=\s*[,}\]])")
_ISO = re.compile(r'"\d{4}-(\d\d-\d\dT)')
_MS = re.compile(r"(?<=[:,\[\s])1[67]\d{11}(?=\s*[,}\]])")
_ID_KEY = re.compile(r"(?i)(^|_)(id|uuid|sid)$|Id$|ID$|Uuid$")
_PARENT = ("parent", "parentUuid", "parentId", "parentID", "parent_id", "parentSessionId")
_SELF = ("id", "uuid", "sid", "entryId")


def _numbers(value: str) -> Text:
    return lambda text: _INT.sub(lambda m: m.group(1) + value, text)


def _year(year: str, ms: str) -> Text:
    return lambda text: _MS.sub(ms, _ISO.sub(rf'"{year}-\1', text))


def _walk(text: str, change: Callable[[JSON], None]) -> str:
    """``text`` (one JSON document, or JSON Lines) with ``change`` applied to every object."""

    def visit(v: JSON) -> JSON:
        if isinstance(v, dict):
            change(v)
            for k in list(v):
                v[k] = visit(v[k])
        elif isinstance(v, list):
            return [visit(x) for x in v]
        return v

    try:
        return json.dumps(visit(json.loads(text)))
    except ValueError:
        pass
    lines = []
    for line in text.split("\n"):
        try:
            lines.append(json.dumps(visit(json.loads(line))) if line.strip() else line)
        except ValueError:
            lines.append(line)
    return "\n".join(lines)


def _hostile_ids(text: str) -> str:
    def change(d: dict[str, JSON]) -> None:
        for k, v in d.items():
            if isinstance(v, str) and v and _ID_KEY.search(k):
                d[k] = f"../{v}\x00"

    return _walk(text, change)


def _self_link(text: str) -> str:
    def change(d: dict[str, JSON]) -> None:
        own = next((d[k] for k in _SELF if isinstance(d.get(k), str)), None)
        for k in _PARENT:
            if own and k in d:
                d[k] = own

    return _walk(text, change)


def _long_line(text: str) -> str:
    m = re.search(r'"(text|content|message|output|prompt|summary)":\s*"', text) or re.search(
        r':\s*"', text
    )
    return text if m is None else text[: m.end()] + BIG + text[m.end() :]


#: case name -> how it changes one text input (the file types are ``FILE_CASES``)
TEXT_CASES: dict[str, Text] = {
    "1e400": _numbers("1e400"),
    "NaN": _numbers("NaN"),
    "2**70": _numbers(str(2**70)),
    "year 1": _year("0001", "-62135596800000"),
    "year 9999": _year("9999", "253402300799000"),
    "ids with ../ and NUL": _hostile_ids,
    "self-referencing link": _self_link,
    "20 MB line": _long_line,
}
FILE_CASES = ("named pipe", "symlink loop", "cut inside a UTF-8 character")
DATABASE_CASES = ("wrong column types",)


def victim(store: Path) -> Path:
    """The largest file a unit of ``store`` reads."""
    files = {
        Path(f)
        for unit in discover([store])
        for f in (reader_for(unit.kind).inputs(unit) or unit.files)
    }
    return max(files, key=lambda p: (p.stat().st_size, str(p)))


def is_database(path: Path) -> bool:
    with path.open("rb") as fh:
        return fh.read(16) == b"SQLite format 3\x00"


def apply(case: str, store: Path) -> None:
    """Make ``case`` of ``store`` in place."""
    target = victim(store)
    if case == "named pipe":
        target.unlink()
        os.mkfifo(target)
    elif case == "symlink loop":
        target.unlink()
        os.symlink(target.name, target)
    elif is_database(target):
        _database(case, target)
    elif case == "cut inside a UTF-8 character":
        data = target.read_bytes()
        target.write_bytes(data[: len(data) // 2] + "é".encode()[:1])
    else:
        text = target.read_text(encoding="utf-8", errors="surrogateescape")
        target.write_text(TEXT_CASES[case](text), encoding="utf-8", errors="surrogateescape")


def _database(case: str, path: Path) -> None:
    """``case`` made in the database's largest JSON cell (and, for the numbers and times,
    every integer cell of its row); a cut file is cut inside that cell's text."""
    with closing(sqlite3.connect(path)) as db, db:
        _loosen(db, swap=case == "wrong column types")
        table, column, rowid, text = _largest_cell(db)
        ints = [c for c, t in _columns(db, table) if t.upper().startswith("INT")]
        if case == "cut inside a UTF-8 character":
            value: JSON = text[: len(text) // 2].encode() + "é".encode()[:1]
            db.execute(f'UPDATE "{table}" SET "{column}" = ? WHERE rowid = ?', (value, rowid))
        elif case == "wrong column types":
            texts = [c for c, t in _columns(db, table) if not t.upper().startswith("INT")]
            sets = [f"\"{c}\" = x'c3ff00'" for c in texts] + [f"\"{c}\" = 'n/a'" for c in ints]
            db.execute(f'UPDATE "{table}" SET {", ".join(sets)}')
        else:
            db.execute(
                f'UPDATE "{table}" SET "{column}" = ? WHERE rowid = ?',
                (TEXT_CASES[case](text), rowid),
            )
            number = {"1e400": "1e999", "NaN": "NULL", "2**70": f"'{2**70}'"}.get(case)
            if number is not None and ints:
                sets = ", ".join(f'"{c}" = {number}' for c in ints)
                db.execute(f'UPDATE "{table}" SET {sets} WHERE rowid = ?', (rowid,))


def _loosen(db: sqlite3.Connection, *, swap: bool) -> None:
    """Every table rebuilt without ``STRICT`` (which refuses a value of another type), with
    the same columns; ``swap``: each declared ``INTEGER`` a ``TEXT`` and the rest ``INTEGER``."""
    tables = [
        r[0]
        for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        if not r[0].startswith("sqlite_")
    ]
    for table in tables:
        cols = _columns(db, table)
        if swap:
            cols = [(c, "TEXT" if t.upper().startswith("INT") else "INTEGER") for c, t in cols]
        declared = ", ".join(f'"{c}" {t}' for c, t in cols)
        db.execute(f'CREATE TABLE "{table}__loose" ({declared})')
        db.execute(f'INSERT INTO "{table}__loose" SELECT * FROM "{table}"')
        db.execute(f'DROP TABLE "{table}"')
        db.execute(f'ALTER TABLE "{table}__loose" RENAME TO "{table}"')


def _columns(db: sqlite3.Connection, table: str) -> list[tuple[str, str]]:
    return [(r[1], r[2] or "") for r in db.execute(f'PRAGMA table_info("{table}")')]


def _largest_cell(db: sqlite3.Connection) -> tuple[str, str, int, str]:
    """(table, column, rowid, text) of the longest cell holding a JSON object."""
    best: tuple[int, str, str, int, str] = (-1, "", "", 0, "")
    tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    for table in tables:
        for column, _ in _columns(db, table):
            row = db.execute(
                f'SELECT rowid, "{column}", length("{column}") AS n FROM "{table}" '
                f"WHERE typeof(\"{column}\") = 'text' AND substr(\"{column}\", 1, 1) = '{{' "
                "ORDER BY n DESC LIMIT 1"
            ).fetchone()
            if row and row[2] > best[0]:
                best = (row[2], table, column, row[0], row[1])
    assert best[0] >= 0, "the database holds no JSON cell"
    return best[1], best[2], best[3], best[4]
