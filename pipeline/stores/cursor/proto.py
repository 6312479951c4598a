"""Protocol Buffers wire format read without a schema: the fields of a Cursor CLI root
(``agent.v1.ConversationStateStructure``, specs/cursor.md §2).

Only the wire format is needed (field number, wire type, value); the schema is not
published, so a generated class cannot be used, and the few lines here read what
``google.protobuf``'s unknown-field set would, without making it a dependency.
"""

from __future__ import annotations

#: (field number, value): an int for varint and fixed fields, bytes for length-delimited
Field = tuple[int, int | bytes]


class WireError(ValueError):
    """The bytes are not Protocol Buffers wire format."""


def _varint(data: bytes, at: int) -> tuple[int, int]:
    value, shift = 0, 0
    while True:
        if at >= len(data) or shift > 63:
            raise WireError("a varint runs past the end")
        b = data[at]
        value |= (b & 0x7F) << shift
        at, shift = at + 1, shift + 7
        if not b & 0x80:
            return value, at


def fields(data: bytes) -> list[Field]:
    """Every top-level field of a message, in order; ``WireError`` when it does not parse."""
    out: list[Field] = []
    at = 0
    while at < len(data):
        key, at = _varint(data, at)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise WireError("field number 0")
        if wire == 0:
            value, at = _varint(data, at)
            out.append((number, value))
        elif wire == 2:
            size, at = _varint(data, at)
            if at + size > len(data):
                raise WireError("a length runs past the end")
            out.append((number, data[at : at + size]))
            at += size
        elif wire in (1, 5):
            width = 8 if wire == 1 else 4
            if at + width > len(data):
                raise WireError("a fixed field runs past the end")
            out.append((number, int.from_bytes(data[at : at + width], "little")))
            at += width
        else:
            raise WireError(f"wire type {wire}")
    return out
