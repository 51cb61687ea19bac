"""The HTML report (effdim.report) in headless Chromium, with every request off the file refused: nothing is
requested, every SVG figure renders, the page fits 1366 and 1024 px, and docs/report-example.png is its picture."""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest
from effdim import datasets
from effdim.report import command_line, write_report
from effdim.scores import best
from effdim.search import sweep
from playwright.sync_api import Page

pytestmark = pytest.mark.browser

DOCS = Path(__file__).resolve().parents[2] / "docs"


@pytest.fixture(scope="module")
def report_file(tmp_path_factory) -> Path:
    """The report of a Stouffer-Toby sweep as `effdim sweep stouffer-toby --seed 1 --report ...` writes it,
    with a fixed time stamp so docs/report-example.png changes only when the report does."""
    data = datasets.load("stouffer-toby")
    fits = sweep(data, seed=1)
    path = tmp_path_factory.mktemp("report") / "stouffer-toby-report.html"
    command = command_line("sweep", "stouffer-toby", {"--pick": "bic+", "--seed": 1, "--report": path.name})
    return write_report(path, best(fits, "bic+"), data=data, sweep=fits, pick="bic+", command=command,
                        generated=datetime.datetime(2026, 11, 26, 12, 0, tzinfo=datetime.UTC))


def open_offline(page: Page, path: Path) -> tuple[list[str], list[str], list[str]]:
    """Open ``path`` with every request that is not the file itself refused; returns
    (requests refused, every request made, console errors)."""
    refused, made, errors = [], [], []

    def route(request_route):
        if request_route.request.url.startswith("file://"):
            request_route.continue_()
        else:
            refused.append(request_route.request.url)
            request_route.abort()

    page.route("**/*", route)
    page.on("request", lambda request: made.append(request.url))
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.goto(path.as_uri())
    page.wait_for_load_state("load")
    return refused, made, errors


def test_report_opens_offline_and_its_figures_render(page: Page, report_file: Path):
    refused, made, errors = open_offline(page, report_file)
    assert refused == [] and made == [report_file.as_uri()] and errors == []
    boxes = page.evaluate("""() => [...document.querySelectorAll('svg')].map(s => {
        const b = s.getBoundingClientRect(); return [s.getAttribute('aria-label') || 'tree', b.width, b.height]; })""")
    labels = [b[0] for b in boxes]
    assert labels.count("tree") == 1 and labels.count("class shares of X") == 1
    assert [x for x in labels if x.startswith("profile of ")] == [f"profile of {c}" for c in "ABCD"]
    assert all(w > 50 and h > 50 for _, w, h in boxes if _ != "class shares of X"), boxes
    # the bars are drawn: every profile panel has painted rectangles of positive height
    heights = page.evaluate("""() => [...document.querySelectorAll('svg[aria-label^="profile of"] rect')]
        .map(r => r.getBoundingClientRect().height)""")
    assert len(heights) == 4 * 2 * 2 and sum(h > 0 for h in heights) >= 12
    for section in ("Command", "Data", "Model", "Sweep", "Classes and profiles", "Fit statistics",
                    "Bivariate residuals"):
        assert page.get_by_role("heading", name=section, exact=True).is_visible()


@pytest.mark.parametrize("width", [1366, 1024])
def test_report_fits_the_window(page: Page, report_file: Path, width: int):
    page.set_viewport_size({"width": width, "height": 768})
    open_offline(page, report_file)
    assert page.evaluate("() => document.documentElement.scrollWidth") <= width
    if width == 1366:
        DOCS.mkdir(exist_ok=True)
        page.screenshot(path=str(DOCS / "report-example.png"), full_page=True)
