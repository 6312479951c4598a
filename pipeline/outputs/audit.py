"""The redaction audit of an output: placeholders per rule, counted in what is written.

Documents are counted in the bytes written.  A table's rows are counted in each
row group as its shard writes it (``table_placeholders``, ``parquet.write_shard``),
so rows left out as duplicates are never counted: every string
column, nested ones included, is one run of UTF-8 bytes, scanned once; a match
is counted only when it lies inside one value (one value's end and the next
one's start never make a placeholder).  No row is serialised again for this.
Counts only; never the plaintext.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter
from collections.abc import Iterator, Sequence

import pyarrow as pa

from trajset.redactors import PLACEHOLDER_BYTES_RE, count_placeholders


def _strings(array: pa.Array) -> Iterator[pa.Array]:
    """The string arrays inside ``array`` (struct fields and list values, at any depth)."""
    t = array.type
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        yield array
    elif pa.types.is_struct(t):
        for child in array.flatten():
            yield from _strings(child)
    elif pa.types.is_list(t) or pa.types.is_large_list(t):
        yield from _strings(array.flatten())


class _Offsets(Sequence[int]):
    """The value offsets of a string array, read from its buffer as they are asked for."""

    def __init__(self, array: pa.Array) -> None:
        width = 8 if pa.types.is_large_string(array.type) else 4
        self.view = memoryview(array.buffers()[1]).cast("q" if width == 8 else "i")
        self.start, self.n = array.offset, len(array) + 1

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int) -> int:  # type: ignore[override]
        if not 0 <= i < self.n:
            raise IndexError(i)
        return int(self.view[self.start + i])


def _count(array: pa.Array, counts: Counter[str]) -> None:
    if len(array) == 0 or array.null_count == len(array):
        return
    offsets = _Offsets(array)
    first, last = offsets[0], offsets[len(array)]
    data = memoryview(array.buffers()[2])[first:last]
    for m in PLACEHOLDER_BYTES_RE.finditer(data):
        i = bisect_right(offsets, first + m.start()) - 1  # the value the match starts in
        if first + m.end() <= offsets[i + 1]:
            counts[str(m.group(1), "ascii")] += 1


def table_placeholders(table: pa.Table) -> Counter[str]:
    """Placeholders per rule in every string value of ``table``."""
    counts: Counter[str] = Counter()
    for column in table.columns:
        for chunk in column.chunks:
            for strings in _strings(chunk):
                _count(strings, counts)
    return counts


__all__ = ["count_placeholders", "table_placeholders"]
