"""JSON Lines read leniently: a line that does not decode is an issue, the other lines are kept.

A crashed writer leaves a cut last line (a partial character included); that is
reported as ``truncated`` and everything before it read.  Shared by the readers
of line-oriented stores (Claude Code, Codex, Gemini CLI, Pi).
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterable, Iterator
from typing import Any

from trajset.schemas.session import Issue

JSON = Any


def objects(
    data: bytes | Iterable[bytes], name: str, *, glued: bool = False
) -> tuple[list[tuple[int, dict[str, JSON]]], list[Issue]]:
    """(1-based line number, object) of every line that decodes to an object, and an issue
    for each line that does not decode (``truncated`` for the last line, else ``bad_line``);
    ``name`` is the file name the issues give.  Blank lines are skipped; a value that is no
    object is a ``bad_line`` issue, as is an object whose ``type`` (every line store's record
    kind) is no string; a byte order mark before the first line is dropped.  ``data``: a
    file's bytes, or its lines as ``input_lines`` reads them (a large file is then never held
    whole).  ``glued``: a line holding several objects written one after another (``}{``, a
    writer's lost newline) gives each of them, as a streaming decoder reads them."""
    out: list[tuple[int, dict[str, JSON]]] = []
    issues: list[Issue] = []
    lines = iter(_lines(data) if isinstance(data, bytes) else data)
    following = next(lines, None)
    i = 0
    while following is not None:
        raw, following, i = following, next(lines, None), i + 1
        chunk = raw.removesuffix(b"\n")
        if i == 1:
            chunk = chunk.removeprefix(BOM)  # an editor's byte order mark: no line is lost
        if not chunk.strip():
            continue
        values, exc = decoded(chunk, glued)
        if exc is not None:
            last = following is None or following == b""  # only an empty piece follows
            what = "the final line is cut short" if last else "a line does not decode"
            if values:
                what = f"{what} after {len(values)} record(s) written on it"
            issues.append(
                Issue(
                    "truncated" if last else "bad_line",
                    i,
                    f"{name}: {what} ({_why(exc)}); the other lines were read",
                )
            )
        for value in values:
            _keep(value, i, name, out, issues)
    return out, issues


def decoded(chunk: bytes, glued: bool) -> tuple[list[JSON], Exception | None]:
    """The value a line holds, or why it does not decode; with ``glued``, each of the values
    written one after another on it, and why what follows them does not decode."""
    bad: Exception | None = None
    try:
        text = chunk.decode("utf-8")
        return [json.loads(text)], None
    except json.JSONDecodeError as exc:
        if not glued or exc.msg != "Extra data":
            return [], exc
    except UnicodeDecodeError as exc:
        if not glued:
            return [], exc
        bad, text = exc, chunk[: exc.start].decode("utf-8")  # the records before it
    except (ValueError, RecursionError) as exc:
        return [], exc
    values: list[JSON] = []
    at, decode = 0, json.JSONDecoder().raw_decode
    while at < len(text):
        try:
            value, at = decode(text, at)
        except (ValueError, RecursionError) as exc:
            return values, bad or exc
        values.append(value)
        while at < len(text) and text[at] in " \t\r":
            at += 1
    return values, bad


def _keep(
    value: JSON, i: int, name: str, out: list[tuple[int, dict[str, JSON]]], issues: list[Issue]
) -> None:
    """``value`` of line ``i`` kept when it is an object with a string ``type``, else an issue."""
    if isinstance(value, dict) and not isinstance(value.get("type", ""), str):
        issues.append(Issue("bad_line", i, f"{name}: line {i}'s type is "
                            f"{json_kind(value['type'])}, not a string; the line was left "
                            "out, the other lines were read"))  # fmt: skip
    elif isinstance(value, dict):
        out.append((i, value))
    else:
        issues.append(Issue("bad_line", i, f"{name}: line {i} holds {json_kind(value)}, not an "
                            "object; the other lines were read"))  # fmt: skip


BOM = b"\xef\xbb\xbf"


def _lines(data: bytes) -> Iterator[bytes]:
    """``data``'s lines as ``input_lines`` gives a file's: each with its LF, and ``b""``
    last when an LF ends it (one line at a time, not every line at once)."""
    yield from io.BytesIO(data)
    if not data or data.endswith(b"\n"):
        yield b""


def json_kind(value: JSON) -> str:
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    return {
        int: "a number",
        float: "a number",
        str: "a string",
        list: "an array",
        dict: "an object",
    }.get(type(value), type(value).__name__)


def _why(exc: Exception) -> str:
    """What is wrong with a line, shortly: the decoder's message and where."""
    if isinstance(exc, json.JSONDecodeError):
        return f"{exc.msg}, column {exc.colno}"
    if isinstance(exc, UnicodeDecodeError):
        return f"not UTF-8 at byte {exc.start}"
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    return str(exc)[:80] or type(exc).__name__
