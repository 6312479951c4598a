"""The report's pairs view: each preference pair's prompt beside its chosen and rejected sides.

A pair keeps the end of its prompt (the last ``PROMPT_TAIL`` messages: the turn the sides
answer) and the start of each side (``SIDE_HEAD`` messages), every text cut at
``SNIPPET`` characters, so the page stays small; the Parquet rows hold the rest.  At most
``SHOWN`` pairs are embedded, in table order; the page says how many it left out.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pyarrow as pa

from .text import cut

JSON = Any
PROMPT_TAIL = 2
SIDE_HEAD = 6
SHOWN = 2000

COLUMNS = [
    "pair_id", "session_id", "fork_entry_id", "granularity", "kind", "prompt", "chosen",
    "rejected", "chosen_leaf_id", "rejected_leaf_id", "chosen_score", "rejected_score",
    "margin", "policy",
]  # fmt: skip
SUMMARY_COLUMNS = ["granularity", "kind", "margin", "chosen_score", "rejected_score"]


def _message(m: JSON) -> JSON:
    view: JSON = {"role": m["role"] or "", "t": cut(m["content"])}
    if m.get("reasoning_content"):
        view["r"] = cut(m["reasoning_content"])
    calls = [c["function"]["name"] for c in m.get("tool_calls") or [] if c.get("function")]
    if calls:
        view["c"] = calls
    return view


def _pair(p: JSON) -> JSON:
    prompt, chosen, rejected = p["prompt"] or [], p["chosen"] or [], p["rejected"] or []
    return {
        "id": p["pair_id"],
        "session": p["session_id"],
        "fork": p["fork_entry_id"],
        "kind": f"{p['granularity']}/{p['kind']}",
        "policy": p["policy"],
        "prompt": [_message(m) for m in prompt[-PROMPT_TAIL:]],
        "prompt_n": len(prompt),
        "chosen": [_message(m) for m in chosen[:SIDE_HEAD]],
        "chosen_n": len(chosen),
        "rejected": [_message(m) for m in rejected[:SIDE_HEAD]],
        "rejected_n": len(rejected),
        "chosen_leaf": p["chosen_leaf_id"],
        "rejected_leaf": p["rejected_leaf_id"],
        "chosen_score": p["chosen_score"],
        "rejected_score": p["rejected_score"],
        "margin": p["margin"],
    }


def scored_sides(preferences: pa.Table) -> dict[str, int]:
    """How many pairs carry an outcome score on both sides, on one side only, or on neither."""
    sides = Counter(
        (c is not None) + (r is not None)
        for c, r in zip(
            preferences.column("chosen_score").to_pylist(),
            preferences.column("rejected_score").to_pylist(),
            strict=True,
        )
    )
    return {"both": sides[2], "one": sides[1], "neither": sides[0]}


def margin_note(sides: dict[str, int]) -> tuple[str, str]:
    """(why the margin plot is empty, what it leaves out): a margin needs both sides scored."""
    total = sum(sides.values())
    if not total:
        return "no preference pairs in this export", ""
    parts = [f"{sides['one']:,} scored on one side only"] if sides["one"] else []
    parts += [f"{sides['neither']:,} on neither"] if sides["neither"] else []
    rest = ", ".join(parts)
    if not sides["both"]:
        return f"no pair is scored on both sides ({rest})", ""
    return "", (f"{rest} of {total:,} pairs" if rest else "")


def pair_views(preferences: pa.Table) -> list[JSON]:
    """The page's view of each pair in ``preferences`` (the first ``SHOWN`` of the table)."""
    return [_pair(p) for p in preferences.to_pylist()]
