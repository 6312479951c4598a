"""``sft``: the training view, one row per context window of each preferred path.

A path that crosses compactions was seen by the model as several contexts: the
history up to the first compaction, then each compaction's summary with its kept
tail and what followed, up to the next one.  Each is a row (``window`` 0, 1, ...;
the trajectory's own messages are the last), so no row is longer than a context
the model saw and every answer is trainable in exactly one row: the window it was
given in (copied context, the summary and the kept tail, is there with
``trainable: false``).  ``session_id`` and ``leaf_id`` point back to
``trajectories``, which keeps every path whole for analysis.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from trajset.schemas.entries import CompactionEntry
from trajset.schemas.records import (
    Anchored,
    ExportedTrajectory,
    ForkPrompt,
    SessionExport,
    Trajectory,
)
from trajset.schemas.tables import SFT, TRAINER_JSON

from .base import Dedup, Prepared, Row, Table
from .messages import fork_prompt, function_tools, tools_source
from .paths import windows
from .quality import quality
from .tool_schemas import misfits


def compaction_parents(t: Trajectory) -> Iterator[str]:
    """The entry before each compaction on the trajectory's path, root first: where each
    earlier window ends."""
    for e in t.session.path(t.leaf_id):
        if isinstance(e.body, CompactionEntry) and e.parent:
            yield e.parent


def earlier_windows(
    t: Trajectory, messages: list[Anchored], max_media_bytes: int | None = None
) -> Prepared:
    """The windows before the trajectory's last compaction (none for a path without one, or
    for one that is not preferred: only preferred paths are trained on); ``None`` for a
    window whose context does not build (it has no row; its leaf's own error says why).
    Their media are written beside the document (named by their content)."""
    if not t.is_preferred:
        return Prepared([])
    found = [fork_prompt(t.session, parent, max_media_bytes) for parent in compaction_parents(t)]
    media = {k: v for w in found if w is not None for k, v in w.media.items()}
    return Prepared(found, media)


def _windows(et: ExportedTrajectory) -> list[ForkPrompt | None]:
    got: list[ForkPrompt | None] = et.prepared.get("sft", [])
    return got


def _row(
    et: ExportedTrajectory, window: int, messages: list[dict[str, object]], tools: str, q: Row
) -> Row:
    t, agent = et.trajectory, et.document["agent"]
    return {
        "session_id": t.session.id,
        "leaf_id": t.leaf_id,
        "window": window,
        "agent_name": agent.get("name"),
        "agent_version": agent.get("version"),
        "messages": messages,
        "tools": tools,
        "tools_source": tools_source(tools),
        "n_messages": len(messages),
        "n_trainable": sum(bool(m.get("trainable")) for m in messages),
        **q,
    }


def trajectory_rows(et: ExportedTrajectory) -> list[Row]:
    """A row per window that builds; each window's quality from the entries it adds."""
    t = et.trajectory
    own = [quality(w) for w in windows(t.session.path(t.leaf_id))]
    earlier = _windows(et)
    rows = [
        _row(et, i, w.messages, w.tools, own[i]) for i, w in enumerate(earlier) if w is not None
    ]
    last = [m for m, _ in et.messages]
    tools = function_tools(t.context.settings)
    rows.append(_row(et, len(earlier), last, tools, own[len(earlier)]))
    return rows


#: the token lengths ``sft`` rows are counted up to (``estimated_tokens``), for the card
LENGTHS = (512, 1024, 2048, 4096, 8192, 16384, 32768)
ESTIMATED = "sft_tokens_estimated/"


def estimated_tokens(row: Row) -> int:
    """A row's length in tokens, estimated generously as its characters / 3 (code and JSON
    take more tokens per character than prose; ``trajset tokenize`` counts exactly)."""
    chars = len(str(row.get("tools") or ""))
    for m in row["messages"]:
        chars += 16 + len(m.get("content") or "") + len(m.get("reasoning_content") or "")
        for c in m.get("tool_calls") or []:
            chars += len(c["function"]["name"]) + len(c["function"]["arguments"])
    return chars // 3


def rows(export: SessionExport, stats: Counter[str]) -> list[Row]:
    made = [r for et in export.kept if et.trajectory.is_preferred for r in trajectory_rows(et)]
    out = [r for r in made if r["n_trainable"]]  # a window with no answer teaches nothing
    stats["sft_rows"] += len(out)
    stats["sft_rows_dropped_untrainable"] += len(made) - len(out)
    stats.update(misfits(out))
    for r in out:
        n = estimated_tokens(r)
        stats[ESTIMATED + str(next((x for x in LENGTHS if n <= x), "more"))] += 1
    return out


TABLE = Table(
    "sft",
    SFT,
    "the training view: one row per context window of each preferred path (a compaction starts "
    "a new window); `trainable` marks the model's own answers in that window",
    rows,
    dedup=Dedup(
        key=("session_id", "leaf_id", "window"),
        seed=("tools",),
        links=lambda r: r["messages"],  # a row inside another row is a prefix of its messages
        messages=lambda r: r["messages"],
        counter="sft_rows_dropped_duplicate",
    ),
    prepare=earlier_windows,
    teaches_tools=True,
    takes_inferred_tools=True,
    json_fields=TRAINER_JSON,
)
