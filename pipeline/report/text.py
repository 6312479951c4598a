"""Short views of long text: the report embeds the start of each message, the exports hold it all."""

from __future__ import annotations

SNIPPET = 280  # characters of a message the page shows


def cut(text: str | None, n: int = SNIPPET) -> str:
    """``text`` cut at ``n`` characters, an ellipsis marking the cut; ``""`` for none."""
    if not text:
        return ""
    return text if len(text) <= n else text[: n - 1] + "…"
