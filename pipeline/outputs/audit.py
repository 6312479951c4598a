"""The redaction audit of an output: placeholders per rule, counted where they were written.

Counts come from the values themselves (Arrow string columns, nested ones
included, or a document's bytes), never from plaintext; only strings that
hold a placeholder are looked at in Python.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

import pyarrow as pa
import pyarrow.compute as pc

from trajset.redactors import PLACEHOLDER_RE, count_placeholders


def _string_leaves(arr: pa.Array) -> Iterator[pa.Array]:
    t = arr.type
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        yield arr
    elif pa.types.is_list(t) or pa.types.is_large_list(t):
        yield from _string_leaves(pc.list_flatten(arr))
    elif pa.types.is_struct(t):
        for i in range(t.num_fields):
            yield from _string_leaves(pc.struct_field(arr, [i]))


def table_placeholders(table: pa.Table) -> Counter[str]:
    """Placeholders per rule in every string value of ``table``."""
    counts: Counter[str] = Counter()
    for column in table.columns:
        for chunk in column.chunks:
            for leaf in _string_leaves(chunk):
                hits = leaf.filter(pc.fill_null(pc.match_substring(leaf, "[REDACTED:"), False))
                for text in hits.to_pylist():
                    counts.update(m.group(1) for m in PLACEHOLDER_RE.finditer(text))
    return counts


__all__ = ["count_placeholders", "table_placeholders"]
