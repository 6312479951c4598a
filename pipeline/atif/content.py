"""Open Responses content -> ATIF content (spec §7.6).

``message_content`` turns a message's content into an ATIF string or part
list; ``item_text`` gives the plain text of any item.  Images follow the
project's rule: only jpeg/png/gif/webp become image parts, anything else a
``[image: ...]`` placeholder, so every document validates.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from trajset.schemas.openresponses import encode_part, parts_text

from ..jsonio import go_marshal

JSON = Any

IMAGE_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")
_EXT_TYPES = {
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".png": "image/png",
    ".gif": "image/gif",
    ".webp": "image/webp",
}


def image_media_type(url: str) -> tuple[str | None, str]:
    """(media type, placeholder text): one of them is set."""
    low = url.lower()
    if low.startswith("data:"):
        declared = low[5:]
        for stop in (";", ","):
            declared = declared.split(stop, 1)[0]
        declared = "image/jpeg" if declared == "image/jpg" else declared
        if declared in IMAGE_TYPES:
            return declared, ""
        return None, f"[image: data URL {declared}]" if declared else "[image: data URL]"
    if not url:
        return "image/png", ""
    path = urlsplit(low).path
    name = path.rsplit("/", 1)[-1]
    if "." not in name:
        return "image/png", ""
    ext = "." + name.rsplit(".", 1)[-1]
    if ext in _EXT_TYPES:
        return _EXT_TYPES[ext], ""
    return None, f"[image: {url}]"


def convert_part(part: JSON) -> dict[str, JSON]:
    """One Open Responses content part -> one ATIF content part."""
    kind = part.get("type") if isinstance(part, dict) else None
    if kind in ("input_text", "output_text", "text"):
        return {"type": "text", "text": part.get("text") or ""}
    if kind == "refusal":
        return {"type": "text", "text": "[refusal] " + (part.get("refusal") or "")}
    if kind == "input_file":
        name = part.get("filename") or part.get("file_id") or part.get("file_url") or ""
        return {"type": "text", "text": f"[file: {name}]"}
    if kind == "input_video":
        return {"type": "text", "text": f"[video: {part.get('video_url') or ''}]"}
    if kind == "input_image":
        url = part.get("image_url") or ""
        media_type, placeholder = image_media_type(url)
        if media_type is None:
            return {"type": "text", "text": placeholder}
        return {
            "type": "image",
            "source": {"media_type": media_type, "path": url or part.get("file_id") or ""},
        }
    # Known non-message parts keep their typed encoding; unknown ones their stored form.
    return {
        "type": "text",
        "text": go_marshal(
            encode_part(part) if kind in ("summary_text", "reasoning_text") else part
        ),
    }


def convert_parts(parts: list[JSON]) -> str | list[dict[str, JSON]]:
    """Part list -> a single string when every part is text, else the part list."""
    converted = [convert_part(p) for p in parts]
    if all(p["type"] == "text" for p in converted):
        return "".join(p["text"] for p in converted)
    return converted


def message_content(item: JSON) -> str | list[dict[str, JSON]]:
    content = item.get("content")
    if isinstance(content, str):
        return content
    return convert_parts(content or [])


def output_content(output: JSON) -> str | list[dict[str, JSON]]:
    if isinstance(output, list):
        return convert_parts(output)
    return output if isinstance(output, str) else ""


def item_text(item: JSON) -> str:
    """Plain text of any item (for non-message items and summaries)."""
    kind = item.get("type")
    if kind == "message":
        content = item.get("content")
        return content if isinstance(content, str) else parts_text(content or [])
    if kind == "reasoning":
        return parts_text(item.get("content") or []) or parts_text(item.get("summary") or [])
    if kind == "function_call":
        return f"{item.get('name') or ''}({item.get('arguments') or ''})"
    if kind == "function_call_output":
        output = item.get("output")
        return output if isinstance(output, str) else parts_text(output or [])
    if kind in ("compaction", "item_reference"):
        return ""
    text = item.get("text")
    if isinstance(text, str) and text:
        return text
    content = item.get("content")
    return content if isinstance(content, str) else ""
