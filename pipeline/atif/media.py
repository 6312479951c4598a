"""Spilling data-URL media out of ATIF documents (spec §7.10 steps 1-2).

Every image/audio part whose path is a ``data:`` URL is decoded and
written once to ``images/`` or ``audio/`` as ``<sha256 of bytes><ext>``; the
part then points at that relative path, and every string in the document
equal to a spilled URL is replaced by the same path.

With a size limit (``--max-media-bytes``), media larger than the limit are not
written: the part keeps a content reference ``sha256:<hex of the bytes>`` and
its decoded media type, and the caller reports each one.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import unquote_to_bytes

JSON = Any

EXTENSIONS = {
    "image/jpeg": ".jpg",
    "image/jpg": ".jpg",
    "image/png": ".png",
    "image/gif": ".gif",
    "image/webp": ".webp",
    "audio/wav": ".wav",
    "audio/mpeg": ".mp3",
    "audio/mp4": ".m4a",
    "audio/aac": ".aac",
    "audio/ogg": ".ogg",
    "audio/flac": ".flac",
    "audio/webm": ".webm",
    "audio/aiff": ".aiff",
}
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def safe(name: str) -> str:
    """File-name-safe form: keep ``[A-Za-z0-9._-]``, map everything else to ``-``."""
    return _UNSAFE.sub("-", name)


class SpillError(ValueError):
    """A data URL that does not decode."""


def decode_data_url(url: str, fallback_type: str) -> tuple[str, bytes]:
    """(media type, bytes) of a ``data:`` URL."""
    head, comma, payload = url[5:].partition(",")
    if not comma:
        raise SpillError("data URL has no ',' before its payload")
    params = head.split(";")
    media_type = params[0].lower() or fallback_type
    if "base64" in (p.lower() for p in params[1:]):
        cleaned = payload.replace("\r", "").replace("\n", "")
        try:
            data = base64.b64decode(cleaned, validate=True)
        except (binascii.Error, ValueError):
            try:
                data = base64.b64decode(cleaned + "=" * (-len(cleaned) % 4), validate=True)
            except (binascii.Error, ValueError):
                raise SpillError("data URL payload is not valid base64") from None
    else:
        data = unquote_to_bytes(payload)
    return media_type, data


def extension(media_type: str) -> str:
    if media_type in EXTENSIONS:
        return EXTENSIONS[media_type]
    _, slash, sub = media_type.partition("/")
    return "." + safe(sub) if slash and sub else ".bin"


def _media_parts(doc: JSON) -> Iterator[dict[str, JSON]]:
    for step in doc.get("steps", []):
        for content in [
            step.get("message"),
            *(r.get("content") for r in (step.get("observation") or {}).get("results", [])),
        ]:
            if isinstance(content, list):
                for part in content:
                    if part.get("type") in ("image", "audio"):
                        yield part
    for sub in doc.get("subagent_trajectories") or []:
        yield from _media_parts(sub)


def spill_media(
    doc: JSON, max_bytes: int | None = None
) -> tuple[JSON, dict[str, bytes], list[str]]:
    """(``doc`` with media spilled, ``{relative path: bytes}`` to write, one line per
    medium over ``max_bytes`` that was kept as a reference instead).

    A document with data URLs is copied first: raw items may be shared with
    the session's other documents, which must not see this one's paths.
    """
    if not any((p["source"].get("path") or "").startswith("data:") for p in _media_parts(doc)):
        return doc, {}, []
    doc = _copied(doc)
    files: dict[str, bytes] = {}
    replaced: dict[str, str] = {}
    omitted: list[str] = []
    for part in _media_parts(doc):
        source = part["source"]
        url = source.get("path") or ""
        if not url.startswith("data:"):
            continue
        if url not in replaced:
            media_type, data = decode_data_url(url, source.get("media_type") or "")
            digest = hashlib.sha256(data).hexdigest()
            if max_bytes is not None and len(data) > max_bytes:
                replaced[url] = f"sha256:{digest}"
                omitted.append(
                    f"{part['type']} of {len(data)} bytes ({media_type or 'no media type'}) is over "
                    f"--max-media-bytes {max_bytes}: kept as the reference sha256:{digest}, not written"
                )
            else:
                folder = "audio" if part["type"] == "audio" else "images"
                replaced[url] = f"{folder}/{digest}{extension(media_type)}"
                files[replaced[url]] = data
            source["media_type"] = media_type
        else:
            source["media_type"] = decode_data_url(url, source.get("media_type") or "")[0]
        source["path"] = replaced[url]
    _replace_strings(doc, replaced)
    return doc, files, omitted


def _copied(value: JSON) -> JSON:
    """``value`` with every dict, list and tuple in it copied: what ``copy.deepcopy`` makes of
    a JSON tree (strings and numbers are immutable, so shared), without its memo and its
    dispatch per value (over the Pi corpus's 30 documents 0.22 s against 0.08 s)."""
    if isinstance(value, dict):
        return {k: _copied(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copied(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_copied(v) for v in value)
    return value


def _replace_strings(value: JSON, table: dict[str, str]) -> JSON:
    if isinstance(value, dict):
        for k, v in value.items():
            if isinstance(v, str):
                if v in table:
                    value[k] = table[v]
            else:
                _replace_strings(v, table)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            if isinstance(v, str):
                if v in table:
                    value[i] = table[v]
            else:
                _replace_strings(v, table)
    return value
