"""``trajset report``: the page's content, its empty states, and the page in a real headless browser."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.builder import SessionBuilder
from trajset.pipeline import ExportOptions, RunOptions, run_export
from trajset.pipeline.cli import app
from trajset.pipeline.report import render, report_data

DOCS = Path(__file__).resolve().parents[1] / "docs"
BROWSER = shutil.which("chromium") or shutil.which("chromium-browser")
BROWSER_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip


@pytest.fixture(scope="module")
def sample(sample_export: Path) -> Path:
    return sample_export


def _payload(page: str) -> dict:  # type: ignore[type-arg]
    m = re.search(r'<script type="application/json" id="report-data">(.*?)</script>', page, re.S)
    assert m
    return dict(json.loads(m.group(1)))


def test_the_report_holds_every_session_tree_and_its_preferred_leaves(sample: Path) -> None:
    data = report_data(sample)
    manifest = json.loads((sample / "manifest.json").read_text())
    assert data["counts"]["trajectories"] == manifest["tables"]["trajectories"]["rows"]
    assert data["counts"]["errors"] == manifest["errors"] == 1  # errors.parquet, not data/
    trees = {s["id"]: s for s in data["sessions"]}
    assert len(trees) == manifest["counts"]["sessions_exported"]
    leaves = [lf for s in data["sessions"] for lf in s["leaves"]]
    assert len(leaves) == manifest["counts"]["trajectories"]
    assert all(lf["node"] >= 0 for lf in leaves)  # every trajectory ends on a drawn node
    forked = [s for s in data["sessions"] if len(s["leaves"]) > 1]
    assert forked and all(sum(lf["preferred"] for lf in s["leaves"]) == 1 for s in forked)
    page = render(data)
    assert "<script src" not in page and "http://" not in page.replace("http://www.w3.org", "")
    assert len(_payload(page)["sessions"]) == len(trees)


def _one_session_export(root: Path, session_id: str) -> Path:
    """An export of one session with no outcomes and no pairs: every empty state at once."""
    b = SessionBuilder(session_id, hashes=False)
    b.user("hi")
    b.respond(text="hello", usage=(3, 2, 0))
    (root / "store").mkdir()
    (root / "store" / "s.jsonl").write_text(b.text())
    run_export([root / "store"], root / "out", ExportOptions(), RunOptions(workers=1))
    return root / "out"


def test_empty_states_render_without_errors(tmp_path: Path) -> None:
    out = _one_session_export(tmp_path, "only-one")
    result = CliRunner().invoke(app, ["report", str(out), "--out", str(tmp_path / "r.html")])
    assert result.exit_code == 0, result.output
    page = (tmp_path / "r.html").read_text()
    empty = re.findall(r'<figure class="plot"><figcaption>([^<]+)</figcaption><p class="empty">'
                       r"([^<]+)</p>", page)  # fmt: skip
    assert dict(empty) == {
        "Outcome score per trajectory": "no trajectory has an outcome score",
        "Branches per fork": "no session forks: every session is one path",
        "Preference pair margin (chosen − rejected score)": "no preference pairs in this export",
        "Mean outcome score per task": "no task has scored attempts",
    }
    assert "no task has scored attempts (test or task outcomes)" in page
    assert "no preference pairs in this export (no session forks)" in page
    (tmp_path / "bare").mkdir()
    result = CliRunner().invoke(app, ["report", str(tmp_path / "bare")])
    assert result.exit_code == 2 and "no data/ folder" in result.output


@pytest.mark.browser
@pytest.mark.skipif(BROWSER is None, reason="no Chromium here (.ci/run installs Debian's chromium)")
def test_the_page_in_headless_chromium(sample: Path, tmp_path: Path) -> None:
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is a dev dependency")
    page_file = tmp_path / "report.html"
    assert CliRunner().invoke(app, ["report", str(sample), "--out", str(page_file)]).exit_code == 0
    manifest = json.loads((sample / "manifest.json").read_text())
    errors: list[str] = []
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=BROWSER, args=BROWSER_FLAGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(page_file.as_uri())
        for table, facts in manifest["tables"].items():
            cell = page.locator(f'#counts [data-table="{table}"]')
            assert cell.inner_text() == f"{facts['rows']:,}"
        rows = page.locator(".session-row")
        assert rows.count() == manifest["counts"]["sessions_exported"]
        page.fill("#search", "a002")  # the session with an edited prompt
        assert rows.count() == 1
        rows.first.click()
        assert page.locator("#tree .node").count() >= 4
        assert page.locator("#tree .edge.abandoned").count() >= 1
        page.locator("#tree .node").first.click()
        assert "write a regex for emails" in page.locator("#detail").inner_text()
        shot = (
            DOCS / "report.png"
            if os.environ.get("TRAJSET_UPDATE_SCREENSHOT")
            else tmp_path / "s.png"
        )
        page.screenshot(path=str(shot), full_page=True)
        browser.close()
    assert errors == []
    assert shot.stat().st_size > 10_000


@pytest.mark.browser
@pytest.mark.skipif(BROWSER is None, reason="no Chromium here (.ci/run installs Debian's chromium)")
def test_a_one_session_export_without_outcomes_or_pairs_renders_in_chromium(
    tmp_path: Path,
) -> None:
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is a dev dependency")
    out = _one_session_export(tmp_path, "lonely")
    page_file = tmp_path / "r.html"
    assert CliRunner().invoke(app, ["report", str(out), "--out", str(page_file)]).exit_code == 0
    errors: list[str] = []
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=BROWSER, args=BROWSER_FLAGS)
        page = browser.new_page()
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(page_file.as_uri())
        assert page.locator("#tree-title").inner_text() == "Session lonely"  # opened by itself
        assert page.locator("#tree .node").count() == 2
        assert page.locator(".plot .empty").count() == 4  # scores, branching, margins, tasks
        assert page.locator(".pair-row").count() == 0
        browser.close()
    assert errors == []
