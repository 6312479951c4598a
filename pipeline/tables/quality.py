"""Quality columns of ``trajectories`` and ``sft``: what an evaluator filters on with ``--where``.

Counted over the tree's entries, so they mean the same for every store kind:

* ``n_user_turns``: user messages a person wrote (not ones the harness injected as
  hidden context, ``visible: false``);
* ``n_tool_calls``: function calls the agent made;
* ``n_failed_tool_calls``: tool outputs their reader marked failed
  (``ItemEntry.tool_failed``: an error result, a non-zero exit code);
* ``recovered``: a failed call was followed by a successful call of the same tool;
* ``duration_sec``: wall-clock seconds from the first to the last message, call or
  response (null when there is none).

A trajectory's columns cover its whole path; an ``sft`` row's cover the entries its
window adds (from the compaction that starts it), so its counts go with its trainable
answers and the windows of a path add up to the path's.
"""

from __future__ import annotations

from collections.abc import Iterable

from trajset.schemas.entries import ItemEntry, ResponseEntry
from trajset.schemas.session import Entry

from .base import Row

#: the quality columns, in table order
COLUMNS = ("n_user_turns", "n_tool_calls", "n_failed_tool_calls", "recovered", "duration_sec")


def quality(entries: Iterable[Entry]) -> Row:
    """The quality columns over ``entries`` (in path order)."""
    users = calls = failed = 0
    tool_of: dict[str, str] = {}  # call id -> tool name
    failing: set[str] = set()  # tools with a failed call not yet followed by a success
    recovered = False
    first = last = None
    for e in entries:
        body = e.body
        if isinstance(body, ResponseEntry | ItemEntry):
            t = e.seconds()
            first = t if first is None or t < first else first
            last = t if last is None or t > last else last
        if not isinstance(body, ItemEntry):
            continue
        item = body.item
        kind = item.get("type")
        if kind == "message" and item.get("role") == "user":
            users += body.visible is not False
        elif kind == "function_call":
            calls += 1
            tool_of[str(item.get("call_id") or "")] = str(item.get("name") or "")
        elif kind == "function_call_output":
            tool = tool_of.get(str(item.get("call_id") or ""))
            if body.tool_failed():
                failed += 1
                if tool is not None:
                    failing.add(tool)
            elif tool in failing:
                recovered = True
    return {
        "n_user_turns": users,
        "n_tool_calls": calls,
        "n_failed_tool_calls": failed,
        "recovered": recovered,
        "duration_sec": None if first is None or last is None else round(last - first, 6),
    }
