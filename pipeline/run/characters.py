"""Strings that are no text: a lone UTF-16 surrogate a store wrote as a ``\\ud83d`` escape.

Python's JSON decoder reads such an escape into a string that UTF-8 cannot encode, so
every later stage (the redaction pre-check, the documents, the Parquet tables) would fail
on it; one such character once stopped a whole export.  Each session is checked as it is
read (``orjson`` refuses to encode one: about 9 ms for the benchmark corpus's 7 MB), and
each character becomes U+FFFD, as the Go reference's decoder does: the session is exported
and each entry that held one is an error row (``bad_character``) naming its line and fields.
"""

from __future__ import annotations

from typing import Any

import orjson

from trajset.schemas.records import ErrorRow
from trajset.schemas.session import Entry, Session, validate_header

from ..jsonio import SURROGATE, SURROGATE_MESSAGE

JSON = Any


def _clean(value: JSON) -> bool:
    try:
        orjson.dumps(value)
    except orjson.JSONEncodeError:
        return False  # a surrogate, or an integer beyond 64 bits (left to later stages)
    return True


def _fixed(value: JSON, where: str, fields: list[str]) -> JSON:
    """``value`` with every surrogate replaced; the member path of each string changed."""
    if isinstance(value, str):
        if SURROGATE.search(value) is None:
            return value
        fields.append(where or "/")
        return SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_fixed(v, f"{where}/{i}", fields) for i, v in enumerate(value)]
    if isinstance(value, dict):
        return {_fixed(k, f"{where}/<name>", fields): _fixed(v, f"{where}/{k}", fields)
                for k, v in value.items()}  # fmt: skip
    return value


def _row(session: Session, line: int | None, fields: list[str]) -> ErrorRow:
    shown = ", ".join(fields[:5]) + (f" and {len(fields) - 5} more" if len(fields) > 5 else "")
    return ErrorRow(
        session.source, session.id, line, "bad_character", SURROGATE_MESSAGE.format(shown)
    )  # fmt: skip


def fix_characters(session: Session) -> tuple[Session, list[ErrorRow]]:
    """The session with every lone surrogate replaced, and a row per entry that held one
    (the same session object, and no row, when none did)."""
    rows: list[ErrorRow] = []
    header_raw = session.header_raw
    if not _clean(header_raw):
        fields: list[str] = []
        fixed = _fixed(header_raw, "", fields)
        if fields:
            header_raw = fixed
            rows.append(_row(session, 1, [f"header{f}" for f in fields]))
    entries: list[Entry] = []
    for e in session.entries:
        if _clean(e.raw):
            entries.append(e)
            continue
        fields = []
        raw = _fixed(e.raw, "", fields)
        entries.append(Entry.of(raw, e.line, e.index) if fields else e)
        if fields:
            rows.append(_row(session, e.line, fields))
    if not rows:
        return session, rows
    header = session.header if header_raw is session.header_raw else validate_header(header_raw)
    return session.replace(header, header_raw, entries), rows
