"""Histograms as inline SVG: drawn once in Python, no plotting library, no script needed."""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

WIDTH, HEIGHT, PAD = 360, 160, 28


def _bins(values: Sequence[float], integer: bool, count: int) -> tuple[list[float], list[int]]:
    lo, hi = min(values), max(values)
    if integer:
        span = int(hi - lo) + 1
        step = max(1, math.ceil(span / count))
        edges = [lo + i * step for i in range(math.ceil(span / step) + 1)]
    else:
        if hi == lo:
            hi = lo + 1
        edges = [lo + (hi - lo) * i / count for i in range(count + 1)]
    counts = [0] * (len(edges) - 1)
    for v in values:
        i = int((v - edges[0]) / (edges[1] - edges[0])) if len(edges) > 1 else 0
        counts[min(max(i, 0), len(counts) - 1)] += 1
    return edges, counts


def _label(x: float, integer: bool) -> str:
    if integer or float(x).is_integer():
        n = int(x)
        return f"{n / 1000:.0f}k" if abs(n) >= 10_000 else str(n)
    return f"{x:.2f}"


def histogram(values: Sequence[float], title: str, *, integer: bool = False, bins: int = 20) -> str:
    """An SVG histogram of ``values`` (an empty state when there are none)."""
    head = f'<figure class="plot"><figcaption>{escape(title)}</figcaption>'
    if not values:
        return head + '<p class="empty">no values in this export</p></figure>'
    edges, counts = _bins(values, integer, bins)
    top = max(counts) or 1
    w = (WIDTH - 2 * PAD) / len(counts)
    bars = []
    for i, c in enumerate(counts):
        h = (HEIGHT - 2 * PAD) * c / top
        x, y = PAD + i * w, HEIGHT - PAD - h
        tip = f"{_label(edges[i], integer)}–{_label(edges[i + 1], integer)}: {c}"
        bars.append(
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{max(w - 1, 1):.1f}" height="{h:.1f}">'
            f"<title>{escape(tip)}</title></rect>"
        )
    axis = (
        f'<text x="{PAD}" y="{HEIGHT - 8}">{_label(edges[0], integer)}</text>'
        f'<text x="{WIDTH - PAD}" y="{HEIGHT - 8}" text-anchor="end">'
        f"{_label(edges[-1], integer)}</text>"
        f'<text x="{PAD - 4}" y="{PAD}" text-anchor="end">{top}</text>'
        f'<line x1="{PAD}" y1="{HEIGHT - PAD}" x2="{WIDTH - PAD}" y2="{HEIGHT - PAD}"/>'
    )
    n = len(values)
    mean = sum(values) / n
    return (
        head
        + f'<svg viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{escape(title)}">'
        + "".join(bars)
        + axis
        + f'</svg><p class="stat">n = {n:,} · mean {mean:,.2f} · max {_label(max(values), integer)}</p></figure>'
    )
