"""The HTML report (effdim.report) in headless Chromium, with every request off the file refused: nothing is
requested, every SVG figure renders, the page fits 1366 and 1024 px."""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest
from pages import console_errors
from playwright.sync_api import Page

from effdim import datasets, fit, sweep
from effdim.report import command_line, write_report
from effdim.scores import best

pytestmark = pytest.mark.browser


STAMP = datetime.datetime(2026, 11, 26, 12, 0, tzinfo=datetime.UTC)


@pytest.fixture(scope="module")
def reports(tmp_path_factory) -> dict[str, Path]:
    """Two reports, with a fixed time stamp:
    a Stouffer-Toby sweep as `effdim sweep stouffer-toby --seed 1 --report ...` writes it, and the
    Figure 2 model fitted to hlc-figure2 (three hidden nodes, so three sets of profiles)."""
    folder = tmp_path_factory.mktemp("report")
    data = datasets.load("stouffer-toby")
    fits = sweep(data, seed=1)
    st = folder / "stouffer-toby-report.html"
    command = command_line("sweep", "stouffer-toby", {"--pick": "bic+", "--seed": 1, "--report": st.name})
    write_report(st, best(fits, "bic+"), data=data, sweep=fits, pick="bic+", command=command, generated=STAMP)
    figure2 = folder / "hlc-figure2-report.html"
    model = "5(3(2,2),2,3(2,2))"
    result = fit(datasets.load("hlc-figure2"), model, seed=1, restarts=2, warn=False)
    command = command_line("fit", "hlc-figure2", {"--model": model, "--seed": 1, "--report": figure2.name})
    write_report(figure2, result, data=datasets.load("hlc-figure2"), command=command, generated=STAMP)
    return {"stouffer-toby": st, "hlc-figure2": figure2}


#: Per report: its items, hidden nodes, classes per node, and the title of its selection section.
EXPECTED = {
    "stouffer-toby": ("ABCD", {"X": 2}, "Sweep"),
    "hlc-figure2": (["O1", "O2", "O3", "O4", "O5"], {"H1": 5, "H2": 3, "H3": 3}, "Scores"),
}


def open_offline(page: Page, path: Path) -> tuple[list[str], list[str], list[str]]:
    """Open ``path`` with every request that is not the file itself refused; returns
    (requests refused, every request made, console errors)."""
    refused, made = [], []

    def route(request_route):
        if request_route.request.url.startswith("file://"):
            request_route.continue_()
        else:
            refused.append(request_route.request.url)
            request_route.abort()

    page.route("**/*", route)
    page.on("request", lambda request: made.append(request.url))
    errors = console_errors(page)
    page.goto(path.as_uri())
    page.wait_for_load_state("load")
    return refused, made, errors


@pytest.mark.parametrize("name", list(EXPECTED))
def test_report_opens_offline_and_its_figures_render(page: Page, reports: dict[str, Path], name: str):
    items, hidden, selection = EXPECTED[name]
    refused, made, errors = open_offline(page, reports[name])
    assert refused == [] and made == [reports[name].as_uri()] and errors == []
    boxes = page.evaluate("""() => [...document.querySelectorAll('svg')].map(s => {
        const b = s.getBoundingClientRect(); return [s.getAttribute('aria-label') || 'tree', b.width, b.height]; })""")
    labels = [b[0] for b in boxes]
    assert labels.count("tree") == 1
    assert [x for x in labels if x.startswith("class shares of ")] == [f"class shares of {h}" for h in hidden]
    assert [x for x in labels if x.startswith("profile of ")] == [f"profile of {c}" for c in items] * len(hidden)
    assert all(w > 50 and h > 20 for _, w, h in boxes), boxes
    # the bars are painted: bars of positive height in every panel, one per class and category
    heights = page.evaluate("""() => [...document.querySelectorAll('svg[aria-label^="profile of"]')]
        .map(svg => [...svg.querySelectorAll('rect')].map(r => r.getBoundingClientRect().height))""")
    assert [len(h) for h in heights] == [2 * k for k in hidden.values() for _ in items]
    assert all(sum(x > 0 for x in panel) >= len(panel) // 2 for panel in heights)
    for section in (
        "Command",
        "Data",
        "Model",
        selection,
        "Classes and profiles",
        "Fit statistics",
        "Bivariate residuals",
    ):
        assert page.get_by_role("heading", name=section, exact=True).is_visible()


@pytest.mark.parametrize("width", [1366, 1024])
def test_report_fits_the_window(page: Page, reports: dict[str, Path], width: int):
    page.set_viewport_size({"width": width, "height": 768})
    for name, path in reports.items():
        open_offline(page, path)
        assert page.evaluate("() => document.documentElement.scrollWidth") <= width, name
