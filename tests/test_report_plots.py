"""The report's plots and pairs, as an analyst reads them: scales that follow the values,
counts that read as counts, margins that say why they are missing, pairs side by side and a
score on every branch of a fork.  Each test first reproduced what a newcomer met."""

from __future__ import annotations

import os
import re
from contextlib import contextmanager
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.conftest import benchmark_corpus
from tests.test_report import BROWSER, BROWSER_FLAGS, DOCS
from trajset.pipeline import ExportOptions, RunOptions, run_export
from trajset.pipeline.report import render, report_data, write_report
from trajset.pipeline.report.plots import bin_values, number

CLAUDE = Path(__file__).parent / "data" / "upstream" / "claude-code"


def _export(store: Path, out: Path) -> Path:
    run_export([store], out, ExportOptions(), RunOptions(workers=1))
    return out


@pytest.fixture(scope="module")
def claude(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _export(CLAUDE, tmp_path_factory.mktemp("claude") / "claude-code")


@pytest.fixture(scope="module")
def one_sided(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The generated corpus: answers scored, their regenerations not."""
    root = tmp_path_factory.mktemp("one-sided")
    benchmark_corpus().build_corpus(root / "store", 40, seed=7)
    return _export(root / "store", root / "out")


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The generated corpus with every regenerated answer scored too."""
    root = tmp_path_factory.mktemp("scored")
    benchmark_corpus().build_corpus(root / "store", 40, seed=7, score_branches=True)
    return _export(root / "store", root / "generated-scored")


def _figure(page: str, title: str) -> str:
    for fig in re.findall(r"<figure class=\"plot\".*?</figure>", page, re.S):
        if f"<figcaption>{title}" in fig:
            return str(fig)
    raise AssertionError(f"no plot titled {title!r}")


def _bars(fig: str) -> list[int]:
    return [int(c) for c in re.findall(r"<title>[^<]*: (\d+)</title>", fig)]


def test_tokens_spanning_orders_of_magnitude_get_log_bins(claude: Path) -> None:
    data = report_data(claude)
    tokens = data["distributions"]["tokens"]
    assert max(tokens) / min(t for t in tokens if t) > 1000  # 30 … 5.98M: the reported case
    fig = _figure(render(data), "Tokens per trajectory")
    assert 'data-scale="log"' in fig and "log scale" in fig
    assert sum(_bars(fig)) == len(tokens)
    assert max(_bars(fig)) < 9  # a linear scale put 9 of the 14 in one bar
    ticks = re.findall(r'text-anchor="middle">([^<]+)</text>', fig)
    assert {"100", "1k", "10k", "1M"} <= set(ticks)  # a tick at each power of ten


def test_branches_per_fork_get_one_bar_per_value(claude: Path) -> None:
    data = report_data(claude)
    assert data["distributions"]["branching"] == [2, 2]
    fig = _figure(render(data), "Branches per fork")
    assert 'data-scale="values"' in fig
    assert _bars(fig) == [2]  # one bar, labelled 2: not an axis from 2 to 3
    assert re.findall(r'text-anchor="middle">([^<]+)</text>', fig) == ["2"]
    assert "every value 2" in fig
    assert bin_values([1, 2, 2, 5], integer=True).counts == [1, 2, 0, 0, 1]


def test_scores_and_margins_keep_their_whole_range_on_a_linear_scale(scored: Path) -> None:
    scores = bin_values([0.001, 0.5, 1.0], integer=False)  # spans 1000x, still a score
    assert (scores.scale, scores.edges[0], scores.edges[-1], len(scores.counts)) == (
        "linear", 0.0, 1.0, 20,
    )  # fmt: skip
    margins = bin_values([-0.85, 0.06, 0.96], integer=False)
    assert (margins.edges[0], margins.edges[-1]) == (-1.0, 1.0)
    page = render(report_data(scored))
    for title, ticks in (("Outcome score", ["0.00", "0.50", "1.00"]),
                         ("Preference pair margin", ["-1.00", "0.00", "1.00"])):  # fmt: skip
        fig = _figure(page, title)
        assert 'data-scale="linear"' in fig
        assert re.findall(r'text-anchor="middle">([^<]+)</text>', fig) == ticks


def test_counts_read_as_counts_and_scores_with_two_decimals(claude: Path) -> None:
    assert number(660_024.57, True) == "660k"
    assert number(5_983_114, True) == "5.98M"
    assert number(16.666, True) == "16.7"
    assert number(7, True) == "7"
    assert number(0.5, False) == "0.50"
    stats = re.findall(
        r'<p class="stat">([^<]+)</p>', _figure(render(report_data(claude)), "Tokens")
    )
    compact = r"(\d{1,3}|\d\.\d\d?[kMB]|\d\d\.\d?[kMB]|\d{3}[kMB])"  # 3 digits at most
    stat = rf"n = 14 · median {compact} · mean {compact} · max {compact}"
    assert stats and re.fullmatch(stat, stats[0]), stats  # not "mean 660,024.57"


def test_margins_say_when_pairs_are_scored_on_one_side_only(one_sided: Path) -> None:
    prefs = pq.read_table(one_sided / "data" / "preferences").to_pylist()
    one = sum((p["chosen_score"] is None) != (p["rejected_score"] is None) for p in prefs)
    assert prefs and one == len(prefs)  # the reported case: scores on one side, no margins
    fig = _figure(render(report_data(one_sided)), "Preference pair margin")
    assert f"no pair is scored on both sides ({one:,} scored on one side only)" in fig
    assert "no values" not in fig


def test_margins_plot_the_pairs_scored_on_both_sides(scored: Path) -> None:
    data = report_data(scored)
    sides = data["pair_sides"]
    assert sides["both"] > 0
    fig = _figure(render(data), "Preference pair margin")
    assert sum(_bars(fig)) == sides["both"] == len(data["distributions"]["margin"])
    if sides["one"]:
        assert f"{sides['one']:,} scored on one side only" in fig


def test_partly_scored_outcomes_say_how_many_are_scored(one_sided: Path) -> None:
    data = report_data(one_sided)
    n, with_score = data["scored"]["trajectories"], data["scored"]["outcome_score"]
    assert 0 < with_score < n
    fig = _figure(render(data), "Outcome score per trajectory")
    assert f"{with_score:,} of {n:,} trajectories scored" in fig


@contextmanager
def _opened(sync_api, page_file: Path):  # type: ignore[no-untyped-def]
    """The report opened in headless Chromium; no console or page error may occur in it."""
    errors: list[str] = []
    p = sync_api.sync_playwright().start()
    browser = p.chromium.launch(executable_path=BROWSER, args=BROWSER_FLAGS)
    try:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(page_file.as_uri())
        yield page
    finally:
        browser.close()
        p.stop()
    assert errors == []


def _shot(page, tmp_path: Path, name: str) -> None:  # type: ignore[no-untyped-def]
    shot = DOCS / name if os.environ.get("TRAJSET_UPDATE_SCREENSHOT") else tmp_path / name
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 10_000


browser_test = pytest.mark.skipif(
    BROWSER is None, reason="no Chromium here (.ci/run installs Debian's chromium)"
)


@pytest.mark.browser
@browser_test
def test_a_pair_shows_its_prompt_and_both_sides_in_chromium(scored: Path, tmp_path: Path) -> None:
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is a dev dependency")
    write_report(scored, tmp_path / "r.html")
    prefs = pq.read_table(scored / "data" / "preferences").to_pylist()
    with _opened(sync_api, tmp_path / "r.html") as page:
        rows = page.locator(".pair-row")
        assert rows.count() == min(15, len(prefs))  # a page of pairs
        assert f"{len(prefs)} of {len(prefs)} pairs" in page.locator("#pair-page-info").inner_text()
        rows.nth(1).click()
        want = prefs[1]
        prompt = page.locator("#pair-prompt").inner_text()
        assert want["prompt"][-1]["content"][:60] in prompt
        chosen, rejected = page.locator("#pair-chosen"), page.locator("#pair-rejected")
        for side, box in (("chosen", chosen), ("rejected", rejected)):
            assert next(m["content"][:60] for m in want[side] if m["content"]) in box.inner_text()
        assert f"score {want['chosen_score']:.2f}" in chosen.inner_text()
        assert f"score {want['rejected_score']:.2f}" in rejected.inner_text()
        a, b = chosen.bounding_box(), rejected.bounding_box()
        assert (
            a and b and a["x"] + a["width"] <= b["x"] and abs(a["y"] - b["y"]) < 2
        )  # side by side
        page.fill("#pair-search", want["session_id"])
        assert rows.count() == min(15, sum(x["session_id"] == want["session_id"] for x in prefs))


@pytest.mark.browser
@browser_test
def test_each_branch_of_a_fork_shows_its_best_score_in_chromium(
    scored: Path, tmp_path: Path
) -> None:
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is a dev dependency")
    data = report_data(scored)
    write_report(scored, tmp_path / "r.html")
    i, s = next((i, s) for i, s in enumerate(data["sessions"]) if s["forks"] >= 2)
    children: dict[int, list[int]] = {}
    for k, n in enumerate(s["nodes"]):
        children.setdefault(n["p"], []).append(k)

    def best(k: int) -> float | None:
        here = [lf["score"] for lf in s["leaves"] if lf["node"] == k and lf["score"] is not None]
        below = [b for c in children.get(k, []) if (b := best(c)) is not None]
        return max(here + below) if here + below else None

    forked = [k for ks in children.values() if len(ks) > 1 for k in ks]
    want = {str(k): f"best {best(k):.2f}" if best(k) is not None else "unscored" for k in forked}
    with _opened(sync_api, tmp_path / "r.html") as page:
        page.locator(f'.session-row[data-session="{i}"]').click()
        labels = page.locator("#tree .branch-score")
        got = {
            labels.nth(j).get_attribute("data-node"): labels.nth(j).text_content()
            for j in range(labels.count())
        }
        assert got == want


@pytest.mark.browser
@browser_test
@pytest.mark.parametrize("store", ["claude-code", "generated"])
def test_report_screenshots(store: str, claude: Path, scored: Path, tmp_path: Path) -> None:
    """The README's screenshots: the real Claude Code fixtures and a generated store with
    scores, a forked session and a pair open (``TRAJSET_UPDATE_SCREENSHOT=1`` rewrites them)."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is a dev dependency")
    folder = claude if store == "claude-code" else scored
    data = report_data(folder)
    write_report(folder, tmp_path / "r.html")
    i = max(range(len(data["sessions"])), key=lambda j: (data["sessions"][j]["forks"], -j))
    sid = data["sessions"][i]["id"]
    with _opened(sync_api, tmp_path / "r.html") as page:
        page.fill("#search", sid)  # both lists searched for the session drawn: a shorter picture
        page.fill("#pair-search", sid)
        page.locator(f'.session-row[data-session="{i}"]').click()
        page.locator("#tree .node").nth(1).click()
        page.locator(".pair-row").first.click()
        assert page.locator("#pair-view").is_visible()
        _shot(page, tmp_path, f"report-{store}.png")
