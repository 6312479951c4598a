"""``kto``: unpaired rows in TRL's KTO format (``prompt``, ``completion``, ``label``).

From the pairs (``--kto-from pairs``, the default), made as each pair is: its chosen side
labelled true (when its leaf is the session's preferred one) and its rejected side labelled
false, after the pair's prompt; a side that
several pairs share (one kept answer against several abandoned ones, or a ``turn`` and a
``trajectory`` pair alike) is one row, with the granularity of the first.  With
``--kto-from outcomes``, from each exported trajectory with a pass verdict of its own
(``outcome_pass``): its own part (below its last fork; after the first user turn on a path
with no fork) as the completion, the context before it as the prompt, labelled by the
verdict.  ``source`` says which.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable

from trajset.schemas.records import ExportedTrajectory, Message, SessionExport
from trajset.schemas.tables import KTO, TRAINER_JSON

from ..jsonio import content_hash
from ..tree.outcomes import leaf_outcome
from .base import Dedup, Row, Table
from .messages import fork_prompt, function_tools
from .paths import forks
from .preferences import preferred_leaf, said


def _row(sid: str, leaf: str | None, source: str, granularity: str | None,
         prompt: list[Message], completion: list[Message], label: bool, tools: str,
         prompt_hash: str | None = None) -> Row:  # fmt: skip
    """A row; its id names its content (the prompt by its hash, given when known)."""
    prompt_hash = prompt_hash or content_hash(prompt)
    return {
        "kto_id": content_hash([sid, source, prompt_hash, completion, label])[7:39],
        "session_id": sid,
        "leaf_id": leaf,
        "source": source,
        "granularity": granularity,
        "prompt": prompt,
        "completion": completion,
        "label": label,
        "tools": tools,
    }


def from_pairs(export: SessionExport) -> Callable[[Row, Counter[str]], Iterable[Row]]:
    """``pair row -> its two KTO rows``, each side once per session.  A chosen side is
    labelled true only when its leaf is the session's preferred one: a side chosen at a
    lower fork whose branch loses at a higher one would be labelled both ways."""
    session = export.session
    roots = [e.id for e in session.entries if not e.parent]
    best = {preferred_leaf(session, root, export.source.decisions) for root in roots}
    seen: set[str] = set()
    # the last fork's prompt and its hash: a fork's pairs come together and share one prompt
    # list (holding more would keep every fork's context of the session alive)
    last: list[tuple[list[Message], str]] = []

    def rows(pair: Row, stats: Counter[str]) -> list[Row]:
        if export.kto_from != "pairs":
            return []
        prompt = pair["prompt"]
        if not last or last[0][0] is not prompt:
            last[:] = [(prompt, content_hash(prompt))]
        held = last[0]
        out = []
        for side, label, leaf in (("chosen", True, "chosen_leaf_id"),
                                  ("rejected", False, "rejected_leaf_id")):  # fmt: skip
            if label and pair[leaf] not in best:
                stats["kto_rows_dropped_not_preferred"] += 1
                continue
            row = _row(pair["session_id"], pair[leaf], "pair", pair["granularity"],
                       prompt, pair[side], label, pair["tools"], held[1])  # fmt: skip
            if row["kto_id"] in seen:
                stats["kto_rows_shared"] += 1
                continue
            seen.add(row["kto_id"])
            out.append(row)
        stats["kto_rows"] += len(out)
        return out

    return rows


def _own_part(et: ExportedTrajectory) -> tuple[list[Message], list[Message]] | None:
    """(prompt, completion): the context before the trajectory's own part, and the part
    (from the tree, window by window, as ``preferences.said`` gives it); on a path with no
    fork, the part starts at the first answer."""
    t = et.trajectory
    path = t.session.path(t.leaf_id)
    at = forks(t.session, path)
    start = at[-1] if at else -1
    before = {e.id for e in path[: start + 1]}
    side, _ = said(t, et.messages, after=start)  # its media are written with the document
    own = [m for m, a in (side or et.messages) if a and a not in before]
    if not at:
        first = next((i for i, m in enumerate(own) if m["role"] == "assistant"), None)
        if first is None:
            return None
        instructions = [m for m, a in et.messages if not a]
        return instructions + own[:first], own[first:]
    if side is None:  # the document holds the fork's context as the model saw it
        prompt = [m for m, a in et.messages if not a or a in before]
    elif (built := fork_prompt(t.session, path[start].id)) is not None:
        prompt = built.messages
    else:
        return None
    return (prompt, own) if own else None


def from_outcomes(export: SessionExport, stats: Counter[str]) -> list[Row]:
    if export.kto_from != "outcomes":
        return []
    out = []
    for et in export.kept:
        t = et.trajectory
        _, passed, _ = leaf_outcome(t.leaf_id, export.source.outcomes)
        if passed is None or (parts := _own_part(et)) is None:
            continue
        tools = function_tools(t.context.settings)
        out.append(_row(t.session.id, t.leaf_id, "outcome", None, *parts, passed, tools))
    stats["kto_rows"] += len(out)
    return out


TABLE = Table(
    "kto",
    KTO,
    "unpaired rows for KTO: `prompt`, `completion`, `label` (from the pairs' sides, or with "
    "`--kto-from outcomes` from each trajectory's own pass verdict)",
    from_outcomes,
    derive=("preferences", from_pairs),
    dedup=Dedup(
        key=("session_id", "kto_id"),
        seed=("tools", "source", "label"),
        links=lambda r: [r["prompt"], r["completion"]],  # equal, or not
        messages=lambda r: [*r["prompt"], *r["completion"]],
        counter="kto_rows_dropped_duplicate",
    ),
    shared=("prompt",),  # a fork's pairs, and their KTO rows, hold one prompt
    json_fields=TRAINER_JSON,
)
