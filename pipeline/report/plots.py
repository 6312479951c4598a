"""Histograms as inline SVG: drawn once in Python, no plotting library, no script needed.

The bins follow the values, as an analyst would choose them:

- counts that take few values (branches per fork, steps of short sessions) get one bar per
  value, labelled with it;
- positive values spanning two orders of magnitude or more (tokens per trajectory) get
  logarithmic bins with a tick at each power of ten, and zeros a bar of their own;
- scores between 0 and 1 (margins between -1 and 1) get twenty bins over that whole range,
  so reports compare at a glance;
- anything else gets equal bins from its minimum to its maximum.

Numbers read as numbers: counts as ``16.7``, ``9.26k`` or ``5.98M``, scores with two decimals.
"""

from __future__ import annotations

import math
import statistics
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape
from typing import Literal

WIDTH, HEIGHT, PAD = 360, 160, 28
BARS = 20  # bins of a log or linear scale, at most
VALUES = 30  # counts taking at most this many consecutive values get a bar each
LOG_SPAN = 100  # largest / smallest positive value from which bins are logarithmic
BAR_MAX = 36.0  # widest bar: one value alone is a bar, not the whole axis

Scale = Literal["values", "log", "linear"]


@dataclass(frozen=True)
class Bins:
    """Bar ``i`` holds ``edges[i] <= v < edges[i + 1]`` (the last bar its upper edge too);
    on a log scale ``zeros`` counts the zeros, drawn as a bar of their own before the rest."""

    scale: Scale
    edges: list[float]
    counts: list[int]
    zeros: int = 0


def _fill(scale: Scale, edges: list[float], values: Sequence[float], zeros: int = 0) -> Bins:
    counts = [0] * (len(edges) - 1)
    for v in values:
        counts[min(max(bisect_right(edges, v) - 1, 0), len(counts) - 1)] += 1
    return Bins(scale, edges, counts, zeros)


def bin_values(values: Sequence[float], integer: bool, count: int = BARS) -> Bins:
    """The bars for ``values`` (not empty), on the scale the module docstring describes."""
    lo, hi = min(values), max(values)
    if integer and hi - lo + 1 <= VALUES:
        return _fill("values", [lo + i for i in range(int(hi - lo) + 2)], values)
    if not integer and lo >= -1 and hi <= 1:  # a score (0 to 1) or a margin (-1 to 1)
        start = 0.0 if lo >= 0 else -1.0
        return _fill("linear", [start + (1 - start) * i / count for i in range(count + 1)], values)
    positive = [v for v in values if v > 0]
    if lo >= 0 and positive and hi / min(positive) >= LOG_SPAN:
        first = math.floor(math.log10(min(positive)))
        decades = max(1, math.ceil(math.log10(hi)) - first)
        per = max(1, count // decades)
        edges = [10.0 ** (first + i // per) * 10 ** ((i % per) / per) for i in range(decades * per)]
        edges.append(10.0 ** (first + decades))
        return _fill("log", edges, positive, zeros=len(values) - len(positive))
    if integer:
        step = math.ceil((hi - lo + 1) / count)
        edges = [lo + i * step for i in range(math.ceil((hi - lo + 1) / step) + 1)]
    else:
        hi = hi if hi > lo else lo + 1
        edges = [lo + (hi - lo) * i / count for i in range(count + 1)]
    return _fill("linear", edges, values)


def number(x: float, integer: bool) -> str:
    """``x`` as a reader wants it: a count compact (``16.7``, ``9.26k``), a score ``0.53``."""
    if not integer:
        return f"{x:.2f}"
    for div, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if abs(x) >= div:
            return f"{x / div:.3g}{suffix}"
    return str(int(x)) if float(x).is_integer() else f"{x:.1f}"


def _bars(b: Bins, integer: bool) -> list[tuple[int, str]]:
    """Each bar's count and tooltip, the zeros' bar first."""
    bars = [(b.zeros, f"0: {b.zeros}")] if b.zeros else []
    for i, c in enumerate(b.counts):
        lo, hi = b.edges[i], b.edges[i + 1]
        if b.scale == "values":
            span = number(lo, True)
        elif integer and b.scale == "linear" and hi - lo > 1:
            span = f"{number(lo, True)}–{number(hi - 1, True)}"
        else:
            span = f"{number(lo, integer)}–{number(hi, integer)}"
        bars.append((c, f"{span}: {c}"))
    return bars


def _ticks(b: Bins, integer: bool) -> list[tuple[float, str]]:
    """Axis labels as (position in bar widths, text)."""
    shift = 1 if b.zeros else 0
    zero = [(0.5, "0")] if b.zeros else []
    n = len(b.counts)
    if b.scale == "values":
        every = max(1, math.ceil(n / 12))
        return [(i + 0.5, number(b.edges[i], True)) for i in range(0, n, every)]
    if b.scale == "log":
        per = round(n / max(1, round(math.log10(b.edges[-1] / b.edges[0]))))
        return zero + [(i + shift, number(b.edges[i], True)) for i in range(0, n + 1, per)]
    return [(i, number(b.edges[i], integer)) for i in (0, n // 2, n)]


def _stat(values: Sequence[float], integer: bool, note: str) -> str:
    lo, hi = min(values), max(values)
    text = f"n = {len(values):,}"
    if lo == hi:
        text += f" · every value {number(lo, integer)}"
    else:
        med, mean = statistics.median(values), statistics.fmean(values)
        text += f" · median {number(med, integer)} · mean {number(mean, integer)}"
        text += f" · max {number(hi, integer)}"
    return text + (f" · {note}" if note else "")


def histogram(
    values: Sequence[float],
    title: str,
    *,
    integer: bool = False,
    empty: str = "no values in this export",
    note: str = "",
) -> str:
    """An SVG histogram of ``values``; ``empty`` says why there are none, ``note`` adds a fact."""
    if not values:
        head = f'<figure class="plot"><figcaption>{escape(title)}</figcaption>'
        return head + f'<p class="empty">{escape(empty)}</p></figure>'
    b = bin_values(values, integer)
    scale = ' <span class="scale">log scale</span>' if b.scale == "log" else ""
    head = f'<figure class="plot" data-scale="{b.scale}"><figcaption>{escape(title)}{scale}</figcaption>'
    bars = _bars(b, integer)
    top = max(c for c, _ in bars) or 1
    w = min((WIDTH - 2 * PAD) / len(bars), BAR_MAX)
    x0 = PAD + ((WIDTH - 2 * PAD) - w * len(bars)) / 2
    rects = []
    for i, (c, tip) in enumerate(bars):
        h = (HEIGHT - 2 * PAD) * c / top
        rects.append(
            f'<rect x="{x0 + i * w:.1f}" y="{HEIGHT - PAD - h:.1f}" width="{max(w - 1, 1):.1f}" '
            f'height="{h:.1f}"><title>{escape(tip)}</title></rect>'
        )
    ticks = "".join(
        f'<text x="{x0 + at * w:.1f}" y="{HEIGHT - 10}" text-anchor="middle">{escape(t)}</text>'
        for at, t in _ticks(b, integer)
    )
    axis = (
        f'<text x="{PAD - 4}" y="{PAD}" text-anchor="end">{top:,}</text>'
        f'<line x1="{PAD}" y1="{HEIGHT - PAD}" x2="{WIDTH - PAD}" y2="{HEIGHT - PAD}"/>'
    )
    return (
        head
        + f'<svg viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{escape(title)}">'
        + "".join(rects)
        + ticks
        + axis
        + f'</svg><p class="stat">{escape(_stat(values, integer, note))}</p></figure>'
    )
