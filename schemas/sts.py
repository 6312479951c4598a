"""The Hub's Session Trace Simple Format (STS-Format), as its documentation defines it.

A JSONL file: a session header line, then one message per line in an envelope.  The
header's ``type``, ``harness`` and ``id`` are required and any other member is allowed
(trajset adds ``trajset``: the session's store kind, trajectory and redaction version);
a message has a ``role`` and a text ``content``, and may have ``reasoningContent``,
``toolCalls`` (each ``{id, function: {name, arguments}}``, arguments a JSON string),
``toolCallId`` (on a ``tool`` message), ``timestamp`` (epoch milliseconds) and ``model``.
``validate_line`` reads one line back as that schema (``trajset validate`` and the tests).
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator


class StsHeader(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)

    type: Literal["session"]
    harness: str
    id: str
    name: str | None = None


class StsFunction(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    name: str
    arguments: str

    @field_validator("arguments")
    @classmethod
    def _json_text(cls, value: str) -> str:
        json.loads(value)  # the documentation: "arguments is a JSON string"
        return value


class StsToolCall(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    id: str
    function: StsFunction


class StsMessage(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    role: Literal["user", "assistant", "system", "tool"]
    content: str
    reasoningContent: str | None = None
    toolCalls: list[StsToolCall] | None = None
    toolCallId: str | None = None
    timestamp: int | None = None
    model: str | None = None


class StsEnvelope(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    type: Literal["message"]
    message: StsMessage


def validate_line(line: str | bytes, first: bool) -> str | None:
    """None when ``line`` is a valid header (``first``) or message line; else what is wrong."""
    try:
        value: Any = json.loads(line)
    except ValueError as exc:
        return f"not JSON ({exc})"
    try:
        if first:
            StsHeader.model_validate(value)
        else:
            StsEnvelope.model_validate(value)
    except ValidationError as exc:
        return str(exc).splitlines()[0] + ": " + "; ".join(e["msg"] for e in exc.errors()[:3])
    return None
