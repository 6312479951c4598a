"""Open Responses item, content-part and tool shapes (specs/agentsession.md §5).

Each known shape is a pydantic model whose ``wire()`` writes the *typed
re-encoding* the Go reference produces: members in declared order,
omit-empty members left out, defaults filled in (``annotations: []``,
``detail: "auto"`` ...), unknown members of known types dropped.  Unknown
item types, parts, annotations and tools are kept verbatim.  The request
hash and the ATIF raw items are built from these re-encodings, so this is
the one place that defines them.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, ValidationError

JSON = Any


class Wire(BaseModel):
    """A typed shape with Go ``encoding/json`` semantics for writing back."""

    model_config = ConfigDict(extra="ignore", strict=False, coerce_numbers_to_str=False)

    #: members left out when empty ("", 0, [], {}, None)
    omit_empty: ClassVar[frozenset[str]] = frozenset()
    #: members left out only when None (pointer semantics)
    omit_none: ClassVar[frozenset[str]] = frozenset()
    #: defaults written when the member is None
    defaults: ClassVar[dict[str, JSON]] = {}

    def wire(self) -> dict[str, JSON]:
        out: dict[str, JSON] = {}
        for name in type(self).model_fields:
            value = getattr(self, name)
            if value is None and name in self.defaults:
                value = self.defaults[name]
                value = list(value) if isinstance(value, list) else value
            if name in self.omit_empty and (
                value is None or (value in ("", 0, [], {}) and value is not False)
            ):
                continue
            if name in self.omit_none and value is None:
                continue
            out[name] = _wire_value(value)
        return out


def _wire_value(value: JSON) -> JSON:
    if isinstance(value, Wire):
        return value.wire()
    if isinstance(value, list):
        return [_wire_value(v) for v in value]
    return value


# --------------------------------------------------------------------------- content


class UrlCitation(Wire):
    type: str = "url_citation"
    url: str | None = ""
    title: str | None = ""
    start_index: int | None = 0
    end_index: int | None = 0
    defaults: ClassVar[dict[str, JSON]] = {"url": "", "title": "", "start_index": 0, "end_index": 0}


class TopLogprob(Wire):
    token: str | None = ""
    logprob: float | None = 0
    bytes: list[int] | None = None
    defaults: ClassVar[dict[str, JSON]] = {"token": "", "logprob": 0, "bytes": []}


class Logprob(Wire):
    token: str | None = ""
    logprob: float | None = 0
    bytes: list[int] | None = None
    top_logprobs: list[TopLogprob] | None = None
    defaults: ClassVar[dict[str, JSON]] = {
        "token": "",
        "logprob": 0,
        "bytes": [],
        "top_logprobs": [],
    }


class TextPart(Wire):
    """``input_text``, ``text``, ``summary_text``, ``reasoning_text``."""

    type: str
    text: str | None = ""
    defaults: ClassVar[dict[str, JSON]] = {"text": ""}


class OutputTextPart(Wire):
    type: str = "output_text"
    text: str | None = ""
    annotations: list[JSON] | None = None
    logprobs: list[Logprob] | None = None
    omit_empty: ClassVar[frozenset[str]] = frozenset({"logprobs"})
    defaults: ClassVar[dict[str, JSON]] = {"text": "", "annotations": []}

    def wire(self) -> dict[str, JSON]:
        out = super().wire()
        out["annotations"] = [encode_annotation(a) for a in out["annotations"]]
        return out


class RefusalPart(Wire):
    type: str = "refusal"
    refusal: str | None = ""
    defaults: ClassVar[dict[str, JSON]] = {"refusal": ""}


class InputImagePart(Wire):
    type: str = "input_image"
    image_url: str | None = ""
    detail: str | None = None
    file_id: str | None = None
    omit_empty: ClassVar[frozenset[str]] = frozenset({"file_id"})
    defaults: ClassVar[dict[str, JSON]] = {"image_url": "", "detail": "auto"}

    def wire(self) -> dict[str, JSON]:
        out = super().wire()
        if out["detail"] == "":
            out["detail"] = "auto"
        return out


class InputFilePart(Wire):
    type: str = "input_file"
    filename: str | None = None
    file_data: str | None = None
    file_url: str | None = None
    file_id: str | None = None
    omit_empty: ClassVar[frozenset[str]] = frozenset(
        {"filename", "file_data", "file_url", "file_id"}
    )


class InputVideoPart(Wire):
    type: str = "input_video"
    video_url: str | None = ""
    defaults: ClassVar[dict[str, JSON]] = {"video_url": ""}


PART_MODELS: dict[str, type[Wire]] = {
    "input_text": TextPart,
    "text": TextPart,
    "summary_text": TextPart,
    "reasoning_text": TextPart,
    "output_text": OutputTextPart,
    "refusal": RefusalPart,
    "input_image": InputImagePart,
    "input_file": InputFilePart,
    "input_video": InputVideoPart,
}

TEXT_PART_TYPES = frozenset({"input_text", "output_text", "text", "summary_text", "reasoning_text"})


def encode_annotation(annotation: JSON) -> JSON:
    if isinstance(annotation, dict) and annotation.get("type") == "url_citation":
        return UrlCitation.model_validate(annotation).wire()
    return annotation


def encode_part(part: JSON) -> JSON:
    """Typed re-encoding of one content part; unknown parts verbatim."""
    if not isinstance(part, dict):
        raise ValueError(f"content part must be an object, got {type(part).__name__}")
    kind = part.get("type")
    model = PART_MODELS.get(kind) if isinstance(kind, str) else None
    if model is None:
        return part
    return model.model_validate(part).wire()


def encode_parts(parts: JSON) -> list[JSON]:
    if parts is None:
        return []
    if not isinstance(parts, list):
        raise ValueError("content must be a string or an array of parts")
    return [encode_part(p) for p in parts]


def parts_text(parts: list[JSON]) -> str:
    """Concatenated text of the text-bearing parts (no separator)."""
    return "".join(
        p.get("text") or ""
        for p in parts
        if isinstance(p, dict)
        and p.get("type") in TEXT_PART_TYPES
        and isinstance(p.get("text"), str)
    )


# --------------------------------------------------------------------------- items


class MessageItem(Wire):
    type: str = "message"
    id: str | None = None
    status: str | None = None
    role: str | None = ""
    content: JSON = None
    phase: str | None = None
    omit_empty: ClassVar[frozenset[str]] = frozenset({"id", "status", "phase"})
    defaults: ClassVar[dict[str, JSON]] = {"role": ""}

    def wire(self) -> dict[str, JSON]:
        out = super().wire()
        content = out["content"]
        if isinstance(content, str):
            kind = "output_text" if out["role"] == "assistant" else "input_text"
            out["content"] = [encode_part({"type": kind, "text": content})]
        else:
            out["content"] = encode_parts(content)
        return out


class FunctionCallItem(Wire):
    type: str = "function_call"
    id: str | None = None
    status: str | None = None
    call_id: str | None = ""
    name: str | None = ""
    arguments: str | None = ""
    omit_empty: ClassVar[frozenset[str]] = frozenset({"id", "status"})
    defaults: ClassVar[dict[str, JSON]] = {"call_id": "", "name": "", "arguments": ""}


class FunctionCallOutputItem(Wire):
    type: str = "function_call_output"
    id: str | None = None
    status: str | None = None
    call_id: str | None = ""
    output: JSON = None
    omit_empty: ClassVar[frozenset[str]] = frozenset({"id", "status"})
    defaults: ClassVar[dict[str, JSON]] = {"call_id": ""}

    def wire(self) -> dict[str, JSON]:
        out = super().wire()
        output = out["output"]
        if isinstance(output, list):
            out["output"] = encode_parts(output)
        elif output is None:
            out["output"] = ""
        elif not isinstance(output, str):
            raise ValueError("function_call_output.output must be a string or an array of parts")
        return out


class ReasoningItem(Wire):
    type: str = "reasoning"
    id: str | None = None
    status: str | None = None
    summary: JSON = None
    content: JSON = None
    encrypted_content: str | None = None
    omit_empty: ClassVar[frozenset[str]] = frozenset(
        {"id", "status", "content", "encrypted_content"}
    )

    def wire(self) -> dict[str, JSON]:
        out = super().wire()
        out["summary"] = encode_parts(out["summary"])
        if "content" in out:
            out["content"] = encode_parts(out["content"])
            if not out["content"]:
                del out["content"]
        return out


class CompactionItem(Wire):
    type: str = "compaction"
    id: str | None = None
    status: str | None = None
    encrypted_content: str | None = ""
    created_by: str | None = None
    omit_empty: ClassVar[frozenset[str]] = frozenset({"id", "status", "created_by"})
    defaults: ClassVar[dict[str, JSON]] = {"encrypted_content": ""}


class ItemReference(Wire):
    type: str = "item_reference"
    id: str | None = ""
    defaults: ClassVar[dict[str, JSON]] = {"id": ""}


ITEM_MODELS: dict[str, type[Wire]] = {
    "message": MessageItem,
    "function_call": FunctionCallItem,
    "function_call_output": FunctionCallOutputItem,
    "reasoning": ReasoningItem,
    "compaction": CompactionItem,
    "item_reference": ItemReference,
}


def encode_item(item: JSON) -> JSON:
    """Typed re-encoding of one item (§5.1); unknown item types verbatim.

    Raises ``ValueError`` when a known item type cannot be decoded, which the
    reader reports as an undecodable item.
    """
    if not isinstance(item, dict):
        raise ValueError(f"item must be an object, got {type(item).__name__}")
    kind = item.get("type")
    if not isinstance(kind, str) or not kind:
        raise ValueError("item has no type")
    model = ITEM_MODELS.get(kind)
    if model is None:
        return item
    try:
        return model.model_validate(item).wire()
    except ValidationError as exc:
        raise ValueError(_first_error(exc)) from None


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"])
    return f"{where}: {err['msg']}" if where else err["msg"]


# --------------------------------------------------------------------------- response members


def encode_usage(usage: JSON) -> JSON:
    """Typed usage: always the five members, 0 for missing counts."""
    usage = usage if isinstance(usage, dict) else {}
    inp = usage.get("input_tokens_details") or {}
    outp = usage.get("output_tokens_details") or {}
    return {
        "input_tokens": usage.get("input_tokens") or 0,
        "output_tokens": usage.get("output_tokens") or 0,
        "total_tokens": usage.get("total_tokens") or 0,
        "input_tokens_details": {
            "cached_tokens": (inp.get("cached_tokens") if isinstance(inp, dict) else 0) or 0
        },
        "output_tokens_details": {
            "reasoning_tokens": (outp.get("reasoning_tokens") if isinstance(outp, dict) else 0) or 0
        },
    }


def encode_error(error: JSON) -> JSON:
    """Typed Open Responses error: ``{type?, code, message, param, headers?}``."""
    error = error if isinstance(error, dict) else {}
    out: dict[str, JSON] = {}
    if error.get("type"):
        out["type"] = error["type"]
    code = error.get("code")
    out["code"] = code if isinstance(code, str) else ""
    message = error.get("message")
    out["message"] = message if isinstance(message, str) else ""
    param = error.get("param")
    out["param"] = param if isinstance(param, str) and param else None
    headers = error.get("headers")
    if isinstance(headers, dict) and headers:
        out["headers"] = headers
    return out


def text_message(role: str, text: str) -> dict[str, JSON]:
    """The message item of one text, as the converting readers write it: ``output_text``
    (no annotations) for the assistant, ``input_text`` for anyone else."""
    kind = "output_text" if role == "assistant" else "input_text"
    part: dict[str, JSON] = {"type": kind, "text": text}
    if role == "assistant":
        part["annotations"] = []
    return {"type": "message", "role": role, "content": [part]}
