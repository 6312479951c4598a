"""Request hashes and canonical JSON against the upstream vectors and recorded hashes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import rfc8785
from hypothesis import given, settings
from hypothesis import strategies as st

from trajset.pipeline import read_session, request_hash
from trajset.pipeline.jsonio import as_doubles, canonical
from trajset.pipeline.tree.context import verify_response

from .conftest import session_file


def test_all_six_hash_vectors(agentsession_data: Path) -> None:
    vectors = json.loads((agentsession_data / "hash" / "vectors.json").read_text())
    assert len(vectors) == 6
    for v in vectors:
        assert request_hash(v["request"]) == v["hash"], v["name"]


@pytest.mark.parametrize("name", ["basic", "branch", "compaction", "extensions", "runs"])
def test_every_recorded_request_hash_verifies(agentsession_data: Path, name: str) -> None:
    session = read_session(session_file(name))
    checks = [verify_response(session, e.id) for e in session.entries if e.type == "response"]
    assert checks
    for check in checks:
        if (name, check.entry_id) == ("extensions", "r0000002"):
            # The documented exception: a failed response records no hash.
            assert check.status == "no_hash"
        else:
            assert check.status == "ok", check


def test_a_changed_item_breaks_the_hash(agentsession_data: Path) -> None:
    text = session_file("basic").read_text().replace("What is 2+2?", "What is 2+3?")
    from trajset.pipeline.stores import read_session_text

    session = read_session_text(text)
    assert verify_response(session, "r0000001").status == "mismatch"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1.0, b"1"),
        (100.0, b"100"),
        (-0.0, b"0"),
        (1e21, b"1e+21"),
        (1e-7, b"1e-7"),
        (0.000001, b"0.000001"),
        (333333333.33333329, b"333333333.3333333"),
        (2**53 + 1, b"9007199254740992"),  # ints go through doubles, as in Go
    ],
)
def test_numbers_use_ecmascript_form(value: float, expected: bytes) -> None:
    assert canonical(value) == expected


def test_keys_sort_by_utf16_code_units() -> None:
    # U+E000 sorts after U+1F600's surrogate pair (0xD83D) in UTF-16 but before it by code point.
    assert canonical({"\ue000": 1, "\U0001f600": 2}) == '{"\U0001f600":2,"\ue000":1}'.encode()


def test_strings_escape_only_what_jcs_requires() -> None:
    assert canonical("<b>&</b> \u2028 é\x01\t") == '"<b>&</b> \u2028 é\\u0001\\t"'.encode()


_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**60), 2**60)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from([0.0, -0.0, 1e21, 1e-7, 2.0**53, 2.0**53 + 2, 123.456, 5.0, 2.0**53 - 1])
    | st.sampled_from([2**53 - 1, 2**53, -(2**53) + 1, -(2**53), 2**64, -(2**70)])
    | st.text(),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(max_size=6) | st.sampled_from(["a", "B", "\ue000", "😀"]), children, max_size=4),
    max_leaves=20,
)  # fmt: skip


@settings(max_examples=500, deadline=None)
@given(_JSON_VALUES)
def test_the_fast_canonical_path_writes_rfc8785s_bytes(value: object) -> None:
    assert canonical(value) == rfc8785.dumps(as_doubles(value))


@pytest.mark.parametrize("value", [float("inf"), [1, {"a": float("-inf")}], {"é": [float("nan")]}])
def test_a_number_that_is_no_double_is_refused(value: object) -> None:
    with pytest.raises(ValueError):
        canonical(value)
