"""Gemini API ``Content`` parts as Open Responses items, shared by the readers of Gemini CLI and
of its fork Qwen Code: a user's parts (text, images, files) and a function response's output.
"""

from __future__ import annotations

from typing import Any

from ...jsonio import dumps_compact

JSON = Any


def response_text(fr: dict[str, JSON]) -> str:
    """What a ``functionResponse`` gave the model: its ``output`` (or ``error``) text, else
    its response as compact JSON."""
    response = fr.get("response")
    if isinstance(response, dict):
        for k in ("output", "error"):
            if isinstance(response.get(k), str):
                return response[k]
        return dumps_compact(response)
    return "" if response is None else dumps_compact(response)


def response_failed(fr: dict[str, JSON]) -> bool:
    """Whether a ``functionResponse`` is a failure: an ``error`` and no ``output``."""
    response = fr.get("response")
    return isinstance(response, dict) and "error" in response and "output" not in response


def user_parts(content: JSON) -> list[dict[str, JSON]]:
    """Open Responses parts of a user record's content: text, images and files."""
    if isinstance(content, str):
        return [{"type": "input_text", "text": content}]
    out: list[dict[str, JSON]] = []
    for p in content if isinstance(content, list) else []:
        if not isinstance(p, dict) or p.get("thought"):
            continue
        if isinstance(p.get("text"), str):
            out.append({"type": "input_text", "text": p["text"]})
        elif isinstance(p.get("inlineData"), dict):
            d = p["inlineData"]
            mime, data = (
                str(d.get("mimeType") or "application/octet-stream"),
                str(d.get("data") or ""),
            )
            url = f"data:{mime};base64,{data}"
            out.append({"type": "input_image", "image_url": url, "detail": "auto"} if mime.startswith("image/")
                       else {"type": "input_file", "file_data": url})  # fmt: skip
        elif isinstance(p.get("fileData"), dict):
            out.append({"type": "input_file", "file_url": str(p["fileData"].get("fileUri") or "")})
        else:
            out.append({"type": "input_text", "text": dumps_compact(p)})
    return out
