"""The rows of the ``tokenized`` and ``pair_tokens`` configs, from ``sft`` and ``preferences``
rows, rendered in batches (one call to the fast tokenizer per batch).

An over-long ``sft`` row (``--max-tokens``) is dropped, or with ``--overlong
truncate`` cut at the end of the last assistant message that fits (never inside
a message); a row left with no trainable token is dropped.  Each is counted.
"""

from __future__ import annotations

import bisect
import json
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any

from ..tokenizing import Limits
from .render import Rendered, Renderer, Unaligned, hf_messages, mask

Row = dict[str, Any]
#: rows rendered and tokenized together
BATCH_ROWS = 256


def _tools(row: Row) -> Any:
    return json.loads(row["tools"]) if row.get("tools") else None


def refused(exc: Exception) -> str:
    """The count a row that raised ``exc`` is dropped under: ``unrenderable`` for what a chat
    template raises by its author's choice (jinja2's errors, ``raise_exception``, a
    ``TypeError`` or ``ValueError`` on content it does not take), ``internal`` for anything
    else (a fault of trajset's, counted apart so that it is not taken for the template's)."""
    chosen = type(exc).__module__.startswith("jinja2") or isinstance(exc, TypeError | ValueError)
    return "unrenderable" if chosen else "internal"


def _render(renderer: Renderer, row: Row, counts: Counter[str]) -> Rendered | None:
    try:
        return renderer.render(row["messages"] or [], _tools(row))
    except Unaligned:
        counts["tokenized_rows_dropped_unaligned"] += 1
    except Exception as exc:
        counts[f"tokenized_rows_dropped_{refused(exc)}"] += 1
    return None


def _cut(offsets: list[tuple[int, int]], ends: list[int], limit: int) -> int:
    """How many tokens a row keeps cut at the last assistant end that fits in ``limit``."""
    token_ends = [e for _, e in offsets]
    fits = [n for end in ends if 0 < (n := bisect.bisect_right(token_ends, end)) <= limit]
    return max(fits, default=0)


def tokenized_rows(
    renderer: Renderer, rows: Sequence[Row], limits: Limits, counts: Counter[str]
) -> Iterator[Row]:
    """The ``tokenized`` row of each ``sft`` row that renders, fits (or is cut) and trains."""
    for start in range(0, len(rows), BATCH_ROWS):
        batch = rows[start : start + BATCH_ROWS]
        rendered = [(r, x) for r in batch if (x := _render(renderer, r, counts)) is not None]
        encoded = renderer.encode([x.text for _, x in rendered]) if rendered else []
        for (row, x), (ids, offsets) in zip(rendered, encoded, strict=True):
            masks, truncated = mask(offsets, x.spans), False
            if limits.max_tokens is not None and len(ids) > limits.max_tokens:
                keep = _cut(offsets, x.ends, limits.max_tokens)
                if limits.overlong != "truncate" or not keep:
                    counts["tokenized_rows_dropped_overlong"] += 1
                    continue
                ids, masks, truncated = ids[:keep], masks[:keep], True
            if not any(masks):
                counts["tokenized_rows_dropped_untrainable"] += 1
                continue
            counts["tokenized_rows_truncated"] += truncated
            counts["trainable_tokens"] += sum(masks)
            yield {
                "session_id": row["session_id"], "leaf_id": row["leaf_id"],
                "window": row["window"], "split": row.get("split"), "input_ids": ids,
                "assistant_masks": masks, "n_tokens": len(ids), "n_trainable": sum(masks),
                "truncated": truncated, "redaction_version": row.get("redaction_version"),
            }  # fmt: skip


def _pair_texts(renderer: Renderer, row: Row) -> tuple[str, list[str]]:
    """The text every part starts with, cut where its tokens cannot change
    (``Renderer.cut``), and the rest of the prompt (with the generation prompt), of
    prompt + chosen and of prompt + rejected: a pair's long shared context is tokenized
    once, and the lengths are those of the whole texts."""
    prompt, tools = hf_messages(row["prompt"] or []), _tools(row)
    whole = [
        renderer.text(prompt, tools, prompt=True),
        *(
            renderer.text(prompt + hf_messages(row[side] or []), tools)
            for side in ("chosen", "rejected")
        ),
    ]
    cut = renderer.cut(whole[0])
    if not all(w.startswith(whole[0][:cut]) for w in whole):
        cut = 0
    return whole[0][:cut], [w[cut:] for w in whole]


def pair_rows(renderer: Renderer, rows: Sequence[Row], counts: Counter[str]) -> Iterator[Row]:
    """The token lengths of each ``preferences`` row's prompt, chosen and rejected side (a
    side is its conversation's tokens after the prompt's, as TRL counts a completion)."""
    for start in range(0, len(rows), BATCH_ROWS):
        texts: list[tuple[Row, str, list[str]]] = []
        for row in rows[start : start + BATCH_ROWS]:
            try:
                texts.append((row, *_pair_texts(renderer, row)))
            except Exception as exc:  # as in ``_render``
                counts[f"pair_tokens_dropped_{refused(exc)}"] += 1
        lengths = renderer.lengths([t for _, head, rest in texts for t in (head, *rest)])
        for k, (row, _, _) in enumerate(texts):
            head, prompt, chosen, rejected = lengths[4 * k : 4 * k + 4]
            yield {
                "pair_id": row["pair_id"], "session_id": row["session_id"],
                "split": row.get("split"), "prompt_tokens": head + prompt,
                "chosen_tokens": chosen - prompt, "rejected_tokens": rejected - prompt,
                "redaction_version": row.get("redaction_version"),
            }  # fmt: skip
