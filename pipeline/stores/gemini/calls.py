"""Which tool calls of one ``gemini`` record came from which model call.

``chatRecordingService.recordToolCalls`` appends the calls it records to the last
``gemini`` record unless that is not a model record or thoughts are queued (then a new
record starts).  A model call that made a tool call without thinking first therefore
lands in the record of the call before it, while its tokens wait for the next new record
(``recordMessageTokens``).  Calls recorded together (one batch: the calls of one model
response, completed together) are parallel; a call created after the calls before it had
completed answered their results, so it is the next model call.

A call's creation time is in the id the CLI gives it (``<tool>-<Unix ms>-<random>``,
``packages/core/src/core/turn.ts``); its ``timestamp`` is when it was recorded, done.
A call without such an id stays with the calls before it (as parallel), which is what
the record says.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from trajset.schemas.timestamps import RFC3339_RE, ms_to_rfc3339, parse_rfc3339

JSON = Any
_CREATED = re.compile(r"-(\d{13})-[0-9a-z]+$")


def _created_ms(call_id: str) -> int | None:
    m = _CREATED.search(call_id)
    return int(m.group(1)) if m else None


def _done_ms(call: JSON) -> int | None:
    ts = call.get("timestamp") if isinstance(call, dict) else None
    if not isinstance(ts, str) or not RFC3339_RE.match(ts):
        return None
    dt: datetime = parse_rfc3339(ts)
    return int(dt.timestamp() * 1000)


def model_calls(calls: dict[str, JSON]) -> list[list[str]]:
    """The record's call ids, grouped by the model call that made them, in order."""
    groups: list[list[str]] = []
    done: int | None = None  # when the current group's calls had all completed
    for cid, call in calls.items():
        created = _created_ms(cid)
        if groups and not (created is not None and done is not None and created > done):
            groups[-1].append(cid)
        else:
            groups.append([cid])
            done = None
        finished = _done_ms(call)
        if finished is not None:
            done = finished if done is None else max(done, finished)
    return groups


def call_time(call_id: str) -> str | None:
    """When the call was made (its id's time), as RFC 3339; None when its id does not say."""
    ms = _created_ms(call_id)
    return None if ms is None else ms_to_rfc3339(ms)
