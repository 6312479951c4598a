"""Strict JSON reading: the cheap pre-checks of ``loads_strict`` change no result."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trajset.pipeline.jsonio import (
    MAX_DEPTH,
    _finite,
    _reject_constant,
    depth,
    dumps_indented,
    dumps_indented_parts,
    fix_surrogates,
    loads_strict,
)

UPSTREAM_ATIF = Path(__file__).parent / "data" / "upstream" / "atif"


def _reference(text: str | bytes, finite: bool = True) -> Any:
    """``loads_strict`` as it was before its pre-checks: every value walked for its depth,
    every string with an escape lowercased to look for surrogates."""
    try:
        value = (
            json.loads(text, parse_constant=_reject_constant, parse_float=_finite)
            if finite
            else json.loads(text)
        )
    except RecursionError:
        raise ValueError(f"nested deeper than {MAX_DEPTH} levels") from None
    if isinstance(value, dict | list) and depth(value) > MAX_DEPTH:
        raise ValueError(f"nested deeper than {MAX_DEPTH} levels")
    if isinstance(text, str) and "\\u" in text and ("\\ud" in text.lower()):
        value = fix_surrogates(value)
    return value


def _outcome(read: Any, text: str | bytes) -> tuple[str, str]:
    """The value's repr (types and member order included) or the error's type and text."""
    try:
        return "value", repr(read(text))
    except ValueError as exc:
        return type(exc).__name__, str(exc)


def _same(text: str) -> None:
    """Both modes read ``text`` (and its bytes) as before: ``finite=False`` lets NaN and
    numbers beyond a double through as floats."""
    for form in (text, text.encode("utf-8", "surrogatepass")):
        assert _outcome(loads_strict, form) == _outcome(_reference, form), form
        lenient = _outcome(lambda t: loads_strict(t, finite=False), form)
        assert lenient == _outcome(lambda t: _reference(t, finite=False), form), form


VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=10,
)
PIECES = st.sampled_from(
    ["", "[", "]", "{", "}", '"\\ud800"', '"\\uD83D\\uDE00"', '"\\uDc00"', '"\\\\ud800"',
     '"\\u00e9"', "NaN", "1e400", ",", ":", '"a"', " ", "18446744073709551616", "-1e19", "7"]
)  # fmt: skip


@settings(max_examples=300)
@given(VALUES, st.booleans())
def test_values_read_as_before(value: Any, ascii_only: bool) -> None:
    _same(json.dumps(value, ensure_ascii=ascii_only))


@settings(max_examples=300)
@given(VALUES, st.lists(st.tuples(st.integers(min_value=0), PIECES), max_size=4))
def test_edited_text_reads_or_fails_as_before(value: Any, edits: Any) -> None:
    text = json.dumps(value)
    for at, piece in edits:
        i = at % (len(text) + 1)
        text = text[:i] + piece + text[i:]
    _same(text)


@pytest.mark.parametrize(
    "number",
    [
        "9223372036854775807", "9223372036854775808", "-9223372036854775808",
        "-9223372036854775809", "18446744073709551615", "18446744073709551616",
        "1" + "0" * 30, "-1" + "0" * 400, "1e19", "-9.3e18", "9.2e18", "1e308", "1e309",
        "5e-324", "1.00000000000000011102230246251565404236316680908203125", "-0", "-0.0",
    ],
)  # fmt: skip
def test_numbers_read_as_before(number: str) -> None:
    """orjson reads an integer beyond 64 bits as a float: such a line is read again."""
    _same(number)
    _same(f'{{"a": [1, {{"n": {number}}}], "b": {number}}}')


@pytest.mark.parametrize("levels", [MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1, 2000])
def test_nesting_limit_as_before(levels: int) -> None:
    _same("[" * levels + "]" * levels)
    _same('{"a":' * levels + "1" + "}" * levels)
    _same('["[[[[", ' * levels + "1" + "]" * levels)  # brackets inside strings count too


def test_a_lone_surrogate_escape_becomes_the_replacement_character() -> None:
    assert loads_strict('{"a": "x\\uD800y"}') == {"a": "x\ufffdy"}
    assert loads_strict('["\\ud83d\\ude00"]') == ["\U0001f600"]


def test_arguments_keep_their_numbers_as_written() -> None:
    from trajset.pipeline.atif.tools import parse_arguments

    args = parse_arguments('{"offset": 38, "ratio": 0.5, "whole": 2.0, "big": 9007199254740993}')
    assert args == {"offset": 38, "ratio": 0.5, "whole": 2.0, "big": 9007199254740993}
    assert [type(v) for v in args.values()] == [int, float, float, int]
    for beyond in ('{"n": 1e400}', '{"n": 1' + "0" * 400 + "}"):  # not a double: kept as text
        assert parse_arguments(beyond) == {"_arguments": beyond}


# ----------------------------------------------------------------- documents written in pieces

DOCUMENTS = st.dictionaries(
    st.sampled_from(["schema_version", "steps", "agent", "extra", 'é\n"k', ""]),
    VALUES | st.lists(VALUES, max_size=4),
)


def _pieces_or_refusal(value: dict[str, Any]) -> bytes | None:
    try:
        return b"".join(dumps_indented_parts(value, "steps"))
    except TypeError:
        return None


@settings(max_examples=500)
@given(DOCUMENTS)
def test_a_document_in_pieces_is_the_bytes_of_the_whole(doc: dict[str, Any]) -> None:
    pieces = _pieces_or_refusal(doc)
    assert pieces is None or pieces == dumps_indented(doc)
    if pieces is None:  # only what orjson refuses, which the whole dump encodes otherwise
        with pytest.raises(TypeError):
            orjson.dumps(doc)


@pytest.mark.parametrize("path", sorted(UPSTREAM_ATIF.rglob("*.json")), ids=lambda p: p.name)
def test_the_reference_documents_in_pieces_are_the_bytes_of_the_whole(path: Path) -> None:
    read = json.loads(path.read_text())
    for doc in read if isinstance(read, list) else [read]:  # a traces file lists documents
        assert b"".join(dumps_indented_parts(doc, "steps")) == dumps_indented(doc)
