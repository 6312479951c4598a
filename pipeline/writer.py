"""Writing files into the output folder: atomically, and never outside it.

Every file is written under a temporary name in its final folder and
renamed into place, so a killed run leaves no partial file behind.
ATIF documents are validated before they are written (spec §7.10).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trajset.schemas.atif import validate_document

from .errors import DocumentInvalid, OutputError
from .jsonio import dumps_indented
from .media import SpillError, safe, spill_media

JSON = Any


def atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` via a temporary file and a rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def inside(root: Path, path: Path) -> Path:
    """``path`` resolved, guaranteed to lie inside ``root``."""
    resolved = path.resolve()
    if not resolved.is_relative_to(root.resolve()):
        raise OutputError(f"refusing to write {path}: it lies outside the output folder {root}")
    return resolved


def document_name(session_id: str, trajectory_id: str, main: bool) -> str:
    """Reference file name of a document (spec §7.10)."""
    if not session_id:
        return f"{safe(trajectory_id) or 'trajectory'}.json"
    return f"{safe(session_id)}.json" if main else f"{safe(session_id)}_{safe(trajectory_id)}.json"


def document_bytes(doc: JSON) -> bytes:
    """Two-space indented JSON plus a trailing newline, as the reference writes."""
    return dumps_indented(doc)


@dataclass
class Prepared:
    """A validated document with its media, ready to be written."""

    name: str
    doc: JSON
    media: dict[str, bytes]


def prepare_document(doc: JSON, main: bool) -> Prepared:
    """Spill media and validate; ``DocumentInvalid`` when either fails (spec §7.10, project decision)."""
    sid, tid = doc.get("session_id") or "", doc.get("trajectory_id") or ""
    try:
        doc, media = spill_media(doc)
    except SpillError as exc:
        raise DocumentInvalid(
            f"media cannot be spilled: {exc}", session_id=sid, entry_id=tid
        ) from None
    error = validate_document(doc)
    if error is not None:
        raise DocumentInvalid(f"ATIF validation failed: {error}", session_id=sid, entry_id=tid)
    return Prepared(document_name(sid, tid, main), doc, media)


def write_media(atif_dir: Path, media: dict[str, bytes]) -> None:
    for rel, data in media.items():
        target = inside(atif_dir, atif_dir / rel)
        if not target.exists():
            atomic_write(target, data)


def write_prepared(atif_dir: Path, prepared: Prepared) -> bytes:
    """Write the media and the document; returns the document's bytes."""
    write_media(atif_dir, prepared.media)
    data = document_bytes(prepared.doc)
    atomic_write(inside(atif_dir, atif_dir / prepared.name), data)
    return data
