"""The redaction audit: placeholders counted in the Arrow table a part is written from, and in
the bytes of a document as it is written."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
from hypothesis import given
from hypothesis import strategies as st

from trajset.pipeline.jsonio import dumps_compact_bytes
from trajset.pipeline.outputs.audit import table_placeholders
from trajset.pipeline.outputs.documents import document_bytes, write_document
from trajset.redactors import count_placeholders

P = "[REDACTED:email_v2:3]"


def test_a_placeholder_split_over_two_values_is_not_one() -> None:
    table = pa.table({"a": ["x [REDACTED:email", "_v1:3] y", P]})
    assert table_placeholders(table) == {"email_v2": 1}


def test_nested_strings_and_sliced_columns_are_counted() -> None:
    rows = [
        {"m": [{"content": f"{P} and {P}", "calls": [P]}], "s": "plain"},
        {"m": None, "s": P},
        {"m": [{"content": None, "calls": []}], "s": None},
    ]
    table = pa.Table.from_pylist(rows)
    assert table_placeholders(table) == {"email_v2": 4}
    assert table_placeholders(table.slice(1)) == {"email_v2": 1}
    assert table_placeholders(table.slice(0, 1)) == {"email_v2": 3}


pieces = st.sampled_from(
    ["", "x", "[REDACTED:", "email_v2", ":3]", ":", "0", "[REDACTED:k_1:", P, "é", "]", "["]
)


@given(st.lists(st.lists(pieces, max_size=6).map("".join), max_size=12), st.integers(0, 4))
def test_the_count_equals_the_count_in_each_value_alone(values: list[str], start: int) -> None:
    """The same as counting every value on its own, as text (``re``, where the scan of the
    column's bytes runs RE2)."""
    table = pa.table({"v": values}).slice(min(start, len(values)))
    expected: dict[str, int] = {}
    for v in table.column("v").to_pylist():
        for rule, n in count_placeholders(v).items():
            expected[rule] = expected.get(rule, 0) + n
    assert dict(table_placeholders(table)) == expected


@given(st.lists(pieces, max_size=24).map("".join))
def test_bytes_and_text_count_alike(text: str) -> None:
    """The bytes of an output (RE2) hold the placeholders its text (``re``) holds."""
    assert count_placeholders(text.encode()) == count_placeholders(text)
    assert count_placeholders(dumps_compact_bytes(text)) == count_placeholders(text)


def test_a_document_written_in_pieces_is_its_bytes_with_its_placeholders(tmp_path: Path) -> None:
    """``write_document`` writes a document's steps a few at a time: the file holds the
    bytes of the whole, and its placeholders are those counted in them; a value orjson
    refuses (an integer beyond 64 bits) is written whole by the standard encoder."""
    steps = [{"step_id": i, "message": f"key [REDACTED:api_key:{i % 3}] é"} for i in range(40)]
    for doc in (
        {"schema_version": "ATIF-v1.8", "steps": steps, "extra": {"n": 1}},
        {"schema_version": "ATIF-v1.8", "steps": [*steps, {"step_id": 2**70}]},
    ):
        size, placeholders = write_document(tmp_path, "d.json", doc, {}, audit=True)
        data = (tmp_path / "d.json").read_bytes()
        assert data == document_bytes(doc) and size == len(data)
        assert placeholders == count_placeholders(data) == {"api_key": 40}
    assert [p.name for p in tmp_path.iterdir()] == ["d.json"]
