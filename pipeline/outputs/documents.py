"""ATIF documents as files: reference names, validation before writing, media beside them (spec §7.10)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from trajset.redactors import count_placeholders
from trajset.schemas.atif import validate_document

from ..atif.media import SpillError, spill_media
from ..atif.names import document_name
from ..errors import DocumentInvalid
from ..jsonio import dumps_indented, dumps_indented_parts
from .files import atomic_path, atomic_write, inside

#: the file buffer a document is written through: its steps' pieces gathered into few writes
WRITE_BUFFER = 1 << 20

JSON = Any


def document_bytes(doc: JSON) -> bytes:
    """Two-space indented JSON plus a trailing newline, as the reference writes."""
    return dumps_indented(doc)


def prepare_document(
    doc: JSON, main: bool, max_media_bytes: int | None = None
) -> tuple[str, JSON, dict[str, bytes], list[str]]:
    """(file name, document with media spilled, media files, media kept as references);
    ``DocumentInvalid`` when the media do not decode or the document fails ATIF
    validation (spec §7.10)."""
    sid, tid = doc.get("session_id") or "", doc.get("trajectory_id") or ""
    try:
        doc, media, omitted = spill_media(doc, max_media_bytes)
    except SpillError as exc:
        raise DocumentInvalid(
            f"media cannot be spilled: {exc}", session_id=sid, entry_id=tid
        ) from None
    error = validate_document(doc)
    if error is not None:
        raise DocumentInvalid(f"ATIF validation failed: {error}", session_id=sid, entry_id=tid)
    return document_name(sid, tid, main), doc, media, omitted


def write_media(atif_dir: Path, media: dict[str, bytes]) -> None:
    """Media files named by content hash: each is written once."""
    for rel, data in media.items():
        target = inside(atif_dir, atif_dir / rel)
        if not target.exists():
            atomic_write(target, data)


def write_document(
    atif_dir: Path, name: str, doc: JSON, media: dict[str, bytes], audit: bool = False
) -> tuple[int, dict[str, int]]:
    """Write the media and the document (``document_bytes``), its steps a few at a time: a
    long trajectory's document is never held whole as bytes.  Returns the bytes written
    and, with ``audit``, the redaction placeholders per rule in them."""
    write_media(atif_dir, media)
    with atomic_path(inside(atif_dir, atif_dir / name)) as tmp:
        try:
            return _write(tmp, dumps_indented_parts(doc, "steps"), audit)
        except TypeError:  # a value orjson refuses: the standard encoder, whole
            return _write(tmp, [document_bytes(doc)], audit)


def _write(path: Path, pieces: Iterable[bytes], audit: bool) -> tuple[int, dict[str, int]]:
    size, counts = 0, Counter[str]()
    with open(path, "wb", buffering=WRITE_BUFFER) as fh:
        for piece in pieces:
            fh.write(piece)
            size += len(piece)
            if audit:  # a placeholder never spans pieces: they part between values
                counts.update(count_placeholders(piece))
    return size, dict(counts)
