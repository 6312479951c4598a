"""JSON as the Go reference reads it, and RFC 8785 canonical JSON.

* ``loads_strict``: rejects ``NaN``/``Infinity`` and lone surrogates are
  replaced by U+FFFD (Go's decoder does the same).
* ``as_doubles``: every number as an IEEE-754 double, as Go's ``any``
  decoding does; used wherever the reference hashes values.
* ``loads_as_written``: tool-call arguments parsed with their numbers as
  written (an integer stays an integer), in the reference's range.
* ``canonical`` / ``sha256_hex``: JCS (via ``rfc8785``) and its digest, for
  request hashes and content-derived ids (DESIGN §6).
* ``dumps_compact`` / ``dumps_indented``: output JSON through ``orjson``,
  several times faster than the standard encoder (whose indenting path is
  pure Python); both are deterministic and keep member order.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import sys
from collections.abc import Iterator
from typing import Any

import orjson
import rfc8785

JSON = Any

SURROGATE = re.compile("[\ud800-\udfff]")
#: an error row's message for a value read with ``SURROGATE`` characters (``{}``: where)
SURROGATE_MESSAGE = (
    "a lone UTF-16 surrogate (a \\ud800-\\udfff escape no other half follows) in {}; "
    "each became U+FFFD and the session is exported"
)
_SURROGATE_ESCAPE = re.compile(r"\\u[dD]")  # where one can come from (JSON escapes are \u)


def _reject_constant(name: str) -> float:
    raise ValueError(f"invalid JSON number {name}")


MAX_DEPTH = 200  # deeper values are refused: every later stage walks them recursively


def _finite(s: str) -> float:
    f = float(s)
    if not math.isfinite(f):
        raise ValueError(f"number out of range: {s}")
    return f


def depth(value: JSON) -> int:
    """How deeply ``value`` nests (iteratively: safe on any depth)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, dict | list):
            deepest = max(deepest, d)
            stack.extend((c, d + 1) for c in (v.values() if isinstance(v, dict) else v))
    return deepest


def loads_strict(text: str | bytes, *, finite: bool = True) -> JSON:
    """``loads_checked``'s value (the replaced surrogates not reported)."""
    return loads_checked(text, finite=finite)[0]


def loads_checked(text: str | bytes, *, finite: bool = True) -> tuple[JSON, bool]:
    """Parse JSON strictly: no NaN/Infinity nor numbers beyond a double (as the reference's
    decoder; with ``finite=False`` they read as floats, for a reader that reports them as a
    field's problem), at most ``MAX_DEPTH`` levels; lone surrogates -> U+FFFD.

    orjson reads first (half the standard library's time on the benchmark corpus's lines);
    what it refuses (NaN, a number out of range, a lone surrogate, bad JSON) or reads
    otherwise (an integer beyond 64 bits becomes a float) is read again by the standard
    library, whose values and messages are the ones returned, in either mode.  The flag says
    whether a lone surrogate became U+FFFD (a reader reports it: ``bad_character``)."""
    openers = _openers(text)
    if openers <= MAX_DEPTH:
        try:
            value = orjson.loads(text)
        except orjson.JSONDecodeError:
            pass
        else:
            if not _wide(value):
                return value, False
    try:
        value = (
            json.loads(text, parse_constant=_reject_constant, parse_float=_finite)
            if finite
            else json.loads(text)
        )
    except RecursionError:
        raise ValueError(f"nested deeper than {MAX_DEPTH} levels") from None
    if isinstance(value, dict | list) and openers > MAX_DEPTH and depth(value) > MAX_DEPTH:
        raise ValueError(f"nested deeper than {MAX_DEPTH} levels")
    if isinstance(text, str) and _SURROGATE_ESCAPE.search(text):
        fixed = fix_surrogates(value)
        return fixed, fixed != value
    return value, False


#: a float at least this large may be an integer beyond 64 bits as orjson reads it
_WIDE = 2.0**63


def _wide(value: JSON) -> bool:
    """Whether ``value`` holds a float of ``_WIDE`` or more (``value`` nests at most
    ``MAX_DEPTH`` levels: the recursion is bounded)."""
    t = type(value)
    if t is float:
        return not -_WIDE < value < _WIDE
    if t is dict:
        return any(map(_wide, value.values()))
    if t is list:
        return any(map(_wide, value))
    return False


def _openers(text: str | bytes) -> int:
    """Brackets and braces in ``text``: no value in it nests deeper (a cheap bound that
    spares most lines the walk of ``depth``)."""
    if isinstance(text, str):
        return text.count("[") + text.count("{")
    return text.count(b"[") + text.count(b"{")


def fix_surrogates(value: JSON) -> JSON:
    if isinstance(value, str):
        return SURROGATE.sub("\ufffd", value) if SURROGATE.search(value) else value
    if isinstance(value, list):
        return [fix_surrogates(v) for v in value]
    if isinstance(value, dict):
        return {fix_surrogates(k): fix_surrogates(v) for k, v in value.items()}
    return value


def as_doubles(value: JSON) -> JSON:
    """Every number as a float64 (ints above 2**53 lose precision, as in Go)."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return float(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError("number out of range")
        return value
    if isinstance(value, list):
        return [as_doubles(v) for v in value]
    if isinstance(value, dict):
        return {k: as_doubles(v) for k, v in value.items()}
    return value


def loads_as_written(text: str) -> JSON:
    """Strict parse keeping numbers as written: an integer stays an ``int`` (``38``, never
    ``38.0``, so a model trained on the output learns the integers it was shown); a number
    beyond a double (``1e400``, or an integer of 400 digits) is an error, as in the
    reference's decoder.  Values equal the reference's float64 ones (below 2**53 exactly)."""

    def parse_int(s: str) -> int:
        n = int(s)
        if abs(n) > _MAX_DOUBLE:
            raise ValueError(f"number out of range: {s[:40]}")
        return n

    value = json.loads(
        text, parse_constant=_reject_constant, parse_int=parse_int, parse_float=_finite
    )
    if "\\u" in text:
        value = fix_surrogates(value)
    return value


#: the largest finite double; an integer beyond it is out of a double's range
_MAX_DOUBLE = int(sys.float_info.max)


#: integers below this in magnitude are the same as doubles
_EXACT = 2**53


class _Slow(Exception):
    """The value needs the full RFC 8785 serialiser."""


def _orjson_ready(value: JSON) -> JSON:
    """``value`` with every number as the double it is taken for, integral ones written as
    ints, for which orjson with sorted keys writes exactly RFC 8785's bytes: ASCII member
    names (UTF-16 and UTF-8 order agree), integers below 2**53, strings escaped alike.
    ``_Slow`` otherwise; ``ValueError`` for a number that is no double (as ``as_doubles``).
    One walk: it was ``as_doubles`` and a second walk over its copy."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        if abs(value) < _EXACT:
            return value
        raise _Slow
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError("number out of range")
        if value.is_integer() and abs(value) < _EXACT:
            return int(value)
        raise _Slow
    if isinstance(value, list):
        return [_orjson_ready(v) for v in value]
    if isinstance(value, dict):
        if not all(k.isascii() for k in value):
            raise _Slow
        return {k: _orjson_ready(v) for k, v in value.items()}
    return value


def _as_is(value: JSON) -> bool:
    """Whether ``_orjson_ready`` would return ``value`` unchanged: strings, booleans, nulls,
    integers below 2**53, ASCII member names.  Only looks (no copy): 2.3x faster than
    converting a conversation's messages that need nothing converted, the common case."""
    t = type(value)
    if t is str or value is None or t is bool:
        return True
    if t is int:
        return -_EXACT < value < _EXACT
    if t is list:
        return all(map(_as_is, value))
    if t is dict:
        try:
            ascii_names = all(map(str.isascii, value))
        except TypeError:  # a name that is no string: ``_orjson_ready`` says so
            return False
        return ascii_names and all(map(_as_is, value.values()))
    return False  # a float, or a subclass: converted


def canonical(value: JSON) -> bytes:
    """RFC 8785 serialisation of ``value`` with numbers taken as doubles.  Values of the common
    shape go through orjson (the pure-Python serialiser was 2 s of a 10 s export; a property
    test holds the two to the same bytes), the rest through ``rfc8785``."""
    try:
        ready = value if _as_is(value) else _orjson_ready(value)
        return orjson.dumps(ready, option=orjson.OPT_SORT_KEYS)
    except (_Slow, TypeError):  # TypeError: a lone surrogate orjson cannot encode
        return rfc8785.dumps(as_doubles(value))


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def content_hash(value: JSON) -> str:
    """``sha256:<hex>`` of the canonical JSON of ``value``."""
    return "sha256:" + sha256_hex(canonical(value))


def dumps_compact(value: JSON) -> str:
    """Compact JSON text, non-ASCII kept, for table columns."""
    return dumps_compact_bytes(value).decode("utf-8")


def dumps_compact_bytes(value: JSON) -> bytes:
    """``dumps_compact`` as UTF-8 bytes, for a reader of bytes (no decoded copy)."""
    try:
        return orjson.dumps(value)
    except TypeError:  # integers beyond 64 bits: the standard library keeps them exact
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def dumps_indented(value: JSON) -> bytes:
    """Two-space indented UTF-8 JSON plus a newline (ATIF documents), via orjson for speed."""
    try:
        return orjson.dumps(value, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE)
    except TypeError:
        return (json.dumps(value, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


def dumps_indented_parts(value: dict[str, JSON], spread: str) -> Iterator[bytes]:
    """``dumps_indented(value)``, the same bytes, in pieces: the list ``value[spread]`` one
    member at a time, so a long list is never held as bytes whole (a long trajectory's
    document holds each tool output twice: twice its session's size).  Each member is
    dumped on its own and indented to its depth (a newline byte in orjson's output is
    always layout: one in a string is escaped).  ``TypeError`` where orjson refuses a
    value (``dumps_indented`` then takes the standard encoder, for the whole value)."""
    if not value:
        yield b"{}\n"
        return
    for i, (key, member) in enumerate(value.items()):
        lead = (b",\n  " if i else b"{\n  ") + orjson.dumps(key) + b": "
        if key == spread and isinstance(member, list) and member:
            yield lead + b"["
            for j, item in enumerate(member):
                yield (b",\n    " if j else b"\n    ") + _indented(item, b"\n    ")
            yield b"\n  ]"
        else:
            yield lead + _indented(member, b"\n  ")
    yield b"\n}\n"


def _indented(value: JSON, newline: bytes) -> bytes:
    return orjson.dumps(value, option=orjson.OPT_INDENT_2).replace(b"\n", newline)


_GO_ESCAPES = {
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}
_GO_ESCAPE_RE = re.compile("[<>&\u2028\u2029]")


def go_marshal(value: JSON) -> str:
    """JSON text as Go's ``json.Marshal`` writes it (HTML-safe escapes).

    Member order is kept; only string contents get the extra escapes, which
    cannot occur elsewhere in JSON text.
    """
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return _GO_ESCAPE_RE.sub(lambda m: _GO_ESCAPES[m.group()], text)
