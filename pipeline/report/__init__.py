"""``trajset report``: one self-contained HTML page of an export (DESIGN §3).

The page holds its data, styles and script inline (no network, no CDN):
counts per table, histograms of outcome scores, steps, tokens, branching
and pair margins (``plots.py``), the redaction summary, every task's
outcome scores with pass@k (``outputs/scores.py``), the preference pairs
with a prompt above its chosen and rejected sides (``pairs.py``), and every
session's tree with forks, the preferred path, abandoned branches, outcome
scores at the leaves and on each branch, and a view of each step
(``data.py`` reads them, ``page.js`` draws them).  An export with no preferences, no outcomes or one session
renders its empty states.
"""

from __future__ import annotations

import json
from html import escape
from importlib import resources
from pathlib import Path
from typing import Any

from ..outputs.files import atomic_write
from ..outputs.scores import score_text
from . import pairs
from .data import report_data
from .plots import histogram

JSON = Any


def _asset(name: str) -> str:
    return (resources.files("trajset.pipeline.report") / name).read_text(encoding="utf-8")


def _rows(pairs: list[tuple[str, Any]], attr: str = "") -> str:
    return "".join(
        f"<tr><td>{escape(str(k))}</td>"
        f'<td class="num"{f" data-{attr}={json.dumps(str(k))}" if attr else ""}>'
        f"{v:,}</td></tr>"
        if isinstance(v, int)
        else f"<tr><td>{escape(str(k))}</td><td>{escape(str(v))}</td></tr>"
        for k, v in pairs
    )


def _redaction(manifest: JSON) -> str:
    red = manifest.get("redaction") or {}
    if not red:
        return '<p class="empty">the export has no manifest (not finished?)</p>'
    findings = sorted((red.get("findings") or {}).items())
    options = manifest.get("options") or {}
    lines = [f"<p>{len(red.get('rules') or [])} rules; redaction "
             f"{'on' if options.get('redact', True) else 'off'}; "
             f"{red.get('entries_changed', 0):,} entries changed.</p>"]  # fmt: skip
    if findings:
        lines.append(
            "<table><thead><tr><th>rule</th><th class='num'>findings</th></tr></thead><tbody>"
            + _rows(findings)
            + "</tbody></table>"
        )
    else:
        lines.append('<p class="empty">no findings</p>')
    return "".join(lines)


def _distribution(counts: list[list[float]]) -> str:
    """A task's scores as ``value ×count``, or a summary when they take many values."""
    if len(counts) <= 8:
        return " · ".join(f"{score_text(v)} ×{int(c)}" for v, c in counts)
    return (
        f"{len(counts)} distinct scores, {score_text(counts[0][0])} to {score_text(counts[-1][0])}"
    )


def _tasks(data: JSON) -> str:
    """Every task whose attempts were scored: its score distribution and pass@k."""
    tasks = data["tasks"]
    if not tasks:
        return '<p class="empty">no task has scored attempts (test or task outcomes)</p>'
    ks = sorted({int(k) for t in tasks for k in t["pass_at_k"]})
    over = data["tasks_pass_at_k"]
    lines = [f"<p>{len(tasks):,} tasks with scored attempts"
             + ("; over all tasks: " + ", ".join(f"pass@{k} {v:.3f}" for k, v in over.items())
                if over else "") + ".</p>"]  # fmt: skip
    head = "".join(f"<th class='num'>pass@{k}</th>" for k in ks)
    lines.append("<table id='tasks'><thead><tr><th>task</th><th>agent</th><th class='num'>attempts</th>"
                 "<th class='num'>scored</th><th class='num'>mean</th><th>scores</th>"
                 f"{head}</tr></thead><tbody>")  # fmt: skip
    for t in tasks:
        cells = "".join(
            f"<td class='num'>{score_text(t['pass_at_k'].get(str(k)))}</td>" for k in ks
        )
        lines.append(f"<tr><td title='{escape(t['session_id'])}'>{escape(t['name'])}</td>"
                     f"<td>{escape(t['agent'])}</td>"
                     f"<td class='num'>{t['attempts']}</td><td class='num'>{t['scored']}</td>"
                     f"<td class='num'>{score_text(t['mean'])}</td>"
                     f"<td>{escape(_distribution(t['distribution']))}</td>{cells}</tr>")  # fmt: skip
    return "".join(lines) + "</tbody></table>"


def _plots(data: JSON) -> list[str]:
    """The histograms, each empty one saying why; the tokenized rows' only with that config."""
    d, scored = data["distributions"], data["scored"]
    n, with_score = scored["trajectories"], scored["outcome_score"]
    partly = f"{with_score:,} of {n:,} trajectories scored" if 0 < with_score < n else ""
    no_margin, margin_note = pairs.margin_note(data["pair_sides"])
    plots = [
        histogram(d["outcome_score"], "Outcome score per trajectory",
                  empty="no trajectory has an outcome score", note=partly),
        histogram(d["steps"], "Steps per trajectory", integer=True, empty="no trajectories"),
        histogram(d["tokens"], "Tokens per trajectory (prompt + completion)", integer=True,
                  empty="no step records token usage"),
        histogram(d["branching"], "Branches per fork", integer=True,
                  empty="no session forks: every session is one path"),
        histogram(d["margin"], "Preference pair margin (chosen − rejected score)",
                  empty=no_margin, note=margin_note),
        histogram(d["task_mean"], "Mean outcome score per task",
                  empty="no task has scored attempts"),
    ]  # fmt: skip
    if d["tokenized"]:
        plots.append(histogram(d["tokenized"], "Tokens per tokenized row", integer=True))
    return plots


def _pairs_section(view: JSON) -> str:
    """The pairs list and the side-by-side view ``page.js`` fills in."""
    if not view["total"]:
        return '<p class="empty">no preference pairs in this export (no session forks)</p>'
    left = view["total"] - len(view["pairs"])
    shown = f"; the first {len(view['pairs']):,} are shown here" if left else ""
    return f"""<p class="meta">{view["total"]:,} pairs{shown}. Click one to read its prompt \
and both sides; the <code>preferences</code> table holds every message.</p>
<div class="controls"><input id="pair-search" type="search" placeholder="Search session, kind or text">
<button id="pair-prev" type="button">Previous</button><button id="pair-next" type="button">Next</button></div>
<p class="meta" id="pair-page-info"></p>
<table id="pair-list"><thead><tr><th>session</th><th>pair</th><th>policy</th><th class="num">chosen</th>
<th class="num">rejected</th><th class="num">margin</th><th>chosen side begins</th></tr></thead>
<tbody id="pair-rows"></tbody></table>
<div id="pair-view" hidden><h3 id="pair-title"></h3><div id="pair-prompt"></div>
<div class="sides"><div id="pair-chosen" class="side chosen"></div>
<div id="pair-rejected" class="side rejected"></div></div></div>"""


def render(data: JSON) -> str:
    """The page for ``report_data`` output."""
    plots = _plots(data)
    counts = list(data["counts"].items())
    pairs = sorted(data["pairs"].items()) or [("none", "no preference pairs in this export")]
    payload = json.dumps(
        {"sessions": data["sessions"], "pairs": data["pairs_view"]},
        ensure_ascii=False,
        separators=(",", ":"),
    ).replace("</", "<\\/")
    m = data["manifest"]
    sub = (
        f"{data['sessions_count']:,} sessions · {data['counts'].get('trajectories', 0):,} "
        f"trajectories · trajset {escape(str(m.get('version') or '?'))}"
        f" · prefer {escape(', '.join(m.get('options', {}).get('prefer') or ['latest']))}"
    )
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>trajset report: {escape(data["title"])}</title>
<style>{_asset("page.css")}</style></head>
<body><header><h1>{escape(data["title"])}</h1><p class="sub" id="summary">{sub}</p></header>
<main>
<section><h2>Tables</h2><div class="grid">
<table id="counts"><thead><tr><th>table</th><th class="num">rows</th></tr></thead>
<tbody>{_rows(counts, "table")}</tbody></table>
<table id="pairs"><thead><tr><th>pairs (granularity/kind)</th><th class="num">count</th></tr></thead>
<tbody>{_rows(pairs)}</tbody></table>
<div><h3>Redaction</h3>{_redaction(m)}</div>
</div></section>
<section><h2>Distributions</h2><div class="grid">{"".join(plots)}</div></section>
<section><h2>Outcome scores per task</h2>{_tasks(data)}</section>
<section><h2>Preference pairs</h2>{_pairs_section(data["pairs_view"])}</section>
<section><h2>Sessions</h2>
<div class="controls"><input id="search" type="search" placeholder="Search session id, leaf id or label">
<button id="prev" type="button">Previous</button><button id="next" type="button">Next</button></div>
<p class="meta" id="page-info"></p>
<table><thead><tr><th>session</th><th>trajectories</th><th>forks</th><th>best score</th></tr></thead>
<tbody id="session-rows"></tbody></table>
<h2 id="tree-title"></h2>
<div id="session-view" hidden>
<div><p class="legend"><span><i class="src-user" style="background:#f59e0b"></i>user</span>
<span><i style="background:#2563eb"></i>agent</span><span><i style="background:#7c3aed"></i>system</span>
<span>green: preferred path · dashed: abandoned branch · ★ preferred leaf</span></p>
<div id="tree"></div>
<table><thead><tr><th>leaf</th><th>status</th><th>steps</th><th>score</th><th>label</th><th>ATIF</th></tr></thead>
<tbody id="leaves"></tbody></table></div>
<div id="detail"></div>
</div></section></main>
<footer>Made by trajset report. Every step is cut to a few hundred characters; the ATIF documents hold the full text.</footer>
<script type="application/json" id="report-data">{payload}</script>
<script>{_asset("page.js")}</script>
</body></html>
"""


def write_report(folder: Path, out: Path) -> int:
    """Write the report of the export in ``folder`` to ``out``; returns its size in bytes."""
    page = render(report_data(folder)).encode()
    atomic_write(out, page)
    return len(page)


__all__ = ["render", "report_data", "write_report"]
