"""A path's usage and recorded cost: every model call on it, in every context window.

A trajectory's ATIF document holds its last context window (the history before a
compaction is the summary's), so its ``final_metrics`` count that window's calls; the
``trajectories`` totals count every call the path made, the summarising calls of its
compactions and branch summaries included, as a store's own totals do (a Codex
rollout's last ``total_token_usage``, a Pi session's responses).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from trajset.schemas.entries import (
    RECORDED_COST,
    BranchSummaryEntry,
    CompactionEntry,
    ResponseEntry,
)
from trajset.schemas.openresponses import encode_usage
from trajset.schemas.session import Entry

from ..atif.steps import recorded_dollars, token_metrics
from .base import Row


def path_totals(entries: Iterable[Entry]) -> Row:
    """``total_prompt_tokens``, ``total_completion_tokens``, ``total_cached_tokens`` and
    ``total_cost_usd`` (None when no call on the path records a cost) over ``entries``."""
    tokens = Counter({"prompt_tokens": 0, "completion_tokens": 0, "cached_tokens": 0})
    cost: float | None = None
    for e in entries:
        body = e.body
        if not isinstance(body, ResponseEntry | CompactionEntry | BranchSummaryEntry):
            continue
        if body.usage is not None:
            tokens.update(token_metrics(encode_usage(body.usage)))
        usd = (
            recorded_dollars(e.raw.get(RECORDED_COST)) if isinstance(body, ResponseEntry) else None
        )
        if usd is not None:
            cost = (cost or 0.0) + usd
    return {**{f"total_{k}": n for k, n in tokens.items()}, "total_cost_usd": cost}
