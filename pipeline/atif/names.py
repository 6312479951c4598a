"""Document file names (spec §7.10): the reference names when the ids allow, else safe and unique."""

from __future__ import annotations

import hashlib
import re

from .media import safe

_PLAIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9.-]{0,99}")
_RESERVED = re.compile(r"(?i)(?:con|prn|aux|nul|com\d|lpt\d)(?:\..*)?")


def _plain(name: str) -> bool:
    """Usable as a file name everywhere as it is: no ``_`` (the separator), no leading dot,
    at most 100 characters, not a name Windows reserves."""
    return bool(_PLAIN.fullmatch(name)) and not _RESERVED.fullmatch(name)


def document_name(session_id: str, trajectory_id: str, main: bool) -> str:
    """The reference file name (spec §7.10) when the ids are plain: ``<session>.json`` for the
    main trajectory, ``<session>_<leaf>.json`` for the others.  Otherwise a readable prefix and
    a hash of the ids, ``<prefix>~<sha256[:16]>.json``: never a path outside ``atif/``, never a
    name the file system refuses, and never the name of another document (a plain name holds
    no ``~``, and the hash covers both ids)."""
    parts = [session_id] if main else [session_id, trajectory_id]
    if session_id and all(_plain(p) for p in parts):
        return "_".join(parts) + ".json"
    digest = hashlib.sha256("\0".join([session_id, trajectory_id, str(main)]).encode()).hexdigest()
    prefix = safe("_".join(p for p in parts if p))[:60].lstrip(".-") or "trajectory"
    return f"{prefix}~{digest[:16]}.json"
