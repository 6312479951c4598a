"""ATIF documents as files: reference names, validation before writing, media beside them (spec §7.10)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from trajset.schemas.atif import validate_document

from ..atif.media import SpillError, spill_media
from ..atif.names import document_name
from ..errors import DocumentInvalid
from ..jsonio import dumps_indented
from .files import atomic_write, inside

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


def write_document(atif_dir: Path, name: str, doc: JSON, media: dict[str, bytes]) -> bytes:
    """Write the media and the document; returns the document's bytes."""
    write_media(atif_dir, media)
    data = document_bytes(doc)
    atomic_write(inside(atif_dir, atif_dir / name), data)
    return data
