"""The Experiments tab in headless Chromium: shipped results drawn, generator switchable; and every tab of the
served page and of the notebook (inline) form loaded with each request to another host refused, none attempted
(no web font, no CDN), on the same pages (a page open costs seconds of Chromium's CPU)."""

import pytest
from jupyterlab_session import refuse_other_hosts
from pages import DEEP, POLL, TIMEOUT, console_errors, data_tab, open_app
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.browser

# Titles of every Bokeh figure on the page (the plots are drawn on canvas).
TITLES = """
() => {
  const titles = [];
  const walk = (v) => {
    if (v.model && v.model.title && v.model.title.text) titles.push(v.model.title.text);
    for (const c of (v.child_views || [])) walk(c);
  };
  for (const root of Bokeh.index.roots ?? Object.values(Bokeh.index)) walk(root);
  return titles;
}
"""
# Height in px of the plotting frame of each titled figure: 0 means only the legend is drawn.
FRAME_HEIGHTS = """
() => {
  const out = {};
  const walk = (v) => {
    if (v.frame && v.model.title && v.model.title.text) out[v.model.title.text] = v.frame.bbox.height;
    for (const c of (v.child_views || [])) walk(c);
  };
  for (const root of Bokeh.index.roots ?? Object.values(Bokeh.index)) walk(root);
  return out;
}
"""


def frames_drawn(page: Page) -> dict:
    heights = page.evaluate(FRAME_HEIGHTS)
    assert heights and all(h > 100 for h in heights.values()), heights  # Section 5 drew bare legends (0 px)
    return heights


# Per titled figure: its y scale, y range and the smallest and largest y of its drawn points.
Y_EXTENTS = """
() => {
  const out = {};
  const walk = (v) => {
    if (v.frame && v.model.title && v.model.title.text) {
      const ys = [];
      for (const r of v.model.renderers) {
        const data = r.data_source && r.data_source.data;
        if (data && data.value && r.glyph.type === "Scatter") ys.push(...data.value);
      }
      out[v.model.title.text] = {scale: v.model.y_scale.type, start: v.model.y_range.start,
                                 end: v.model.y_range.end, low: Math.min(...ys), high: Math.max(...ys)};
    }
    for (const c of (v.child_views || [])) walk(c);
  };
  for (const root of Bokeh.index.roots ?? Object.values(Bokeh.index)) walk(root);
  return out;
}
"""
# Width of the content against the width it is shown in: the templated page's scrolling main area,
# or the whole document inline.
OVERFLOW = """
() => { const main = document.getElementById('main') || document.scrollingElement;
        return [main.scrollWidth, main.clientWidth]; }
"""


def open_offline(page: Page, url: str) -> tuple[list[str], list[str]]:
    """Open ``url`` with every request to another host refused, and its Data tab (the tabs are built on first
    opening, and load their scripts then): the requests refused and the console's errors, as they grow."""
    refused, asked = [], []
    refuse_other_hosts(page, refused, asked)
    errors = console_errors(page)
    open_app(page, url)
    # every script fetched, none taken from the test browser's cache unseen (conftest.py, warm_browser)
    assert any("/bokeh.min.js" in fetched for fetched in asked), asked
    data_tab(page)
    return refused, errors


def assert_nothing_asked_of_another_host(page: Page, refused: list[str], errors: list[str]) -> None:
    page.wait_for_load_state("networkidle")
    assert refused == []
    assert errors == []
    assert "Open Sans" not in page.evaluate("() => getComputedStyle(document.body).fontFamily")  # no web font


# True once the three figures are drawn.
ALL_DRAWN = f"() => Object.keys(({Y_EXTENTS})()).length === 3"
# True once the tab shows something for Section 5: the figures, or the line saying they are being drawn. The first
# session of a server process waits seconds for the drawing, the others get copies within a fraction of one, which
# may replace the line before it was ever laid out (a check for the line alone failed such pages).
SECTION_5_SHOWN = f"""() => {{ {DEEP}
  const drawing = deep("span").some((el) => el.textContent.startsWith("Drawing the Section 5 figures")
                                            && el.checkVisibility());
  return drawing || ({ALL_DRAWN})();
}}"""


def open_experiments(page: Page) -> None:
    page.get_by_text("Experiments", exact=True).click()
    # the figures may take seconds to draw: the tab says so instead of staying blank
    page.wait_for_function(SECTION_5_SHOWN, timeout=TIMEOUT, polling=POLL)
    page.wait_for_function(ALL_DRAWN, timeout=TIMEOUT, polling=POLL)
    expect(page.get_by_text("Drawing the Section")).to_have_count(0)


def assert_kl_axes_fit_their_data(page: Page) -> None:
    extents = page.evaluate(Y_EXTENTS)
    kl = {title: e for title, e in extents.items() if title.startswith("KL")}
    assert len(kl) == 2, extents
    for title, e in kl.items():
        # a log axis spanning the data: Panel's linked axes gave it the |X| plot's range from 0 (no ticks,
        # the points of 2x10^4 rows and more below the frame)
        assert e["scale"] == "LogScale" and 0 < e["start"] <= e["low"] and e["high"] <= e["end"], (title, e)
        assert e["end"] / e["start"] < 1000, (title, e)  # not stretched far beyond the data


def assert_the_tab_fits(page: Page) -> None:
    page.wait_for_timeout(500)  # the figures' layout
    content, shown = page.evaluate(OVERFLOW)
    assert content <= shown + 1, f"the Experiments tab is {content} px wide in {shown} px"


def test_experiments_tab_shows_figures_and_table2_fits_the_page_and_nothing_leaves_the_machine(
    page: Page, app_url, shots
):
    """At 1366 px: the figures, Table 2, the KL plots' axes, the tab inside the page, the generator switched; the
    served page's tabs loaded with no request to another host."""
    refused, errors = open_offline(page, app_url)
    open_experiments(page)
    expect(page.get_by_text("Section 6: HLC 5,3,3:2,2,2,2,2, hill climbing per score")).to_be_visible(timeout=TIMEOUT)
    expect(page.locator("table").filter(has_text="243k").first).to_be_visible(timeout=TIMEOUT)
    # units, abbreviations and a takeaway per figure, in words
    for said in ("in 1e-3 bits", "SS", "|X|", "docs/experiments.md"):
        expect(page.locator(".effdim-how-to-read, .markdown").filter(has_text=said).first).to_be_visible()
    expect(page.get_by_text("Takeaway:")).to_have_count(2)
    # why the KL values differ from the paper's, on the tab (issue 60, item 9), not only in docs/experiments.md
    expect(page.get_by_text("Why our KL values are higher than the paper's Table 2")).to_be_visible()
    titles = page.evaluate(TITLES)
    assert "KL: 8:2,2,2,2, 10 replicates" in titles, titles
    assert any(t.startswith("KL of the selected model, 50 replicates") for t in titles), titles
    assert len(frames_drawn(page)) == 3
    assert_kl_axes_fit_their_data(page)
    assert_the_tab_fits(page)
    page.screenshot(path=str(shots / "experiments-1366.png"))

    page.locator("select").filter(has_text="8:2,2,2,2").first.select_option("2:2,2,2,2")
    page.wait_for_function(
        f"() => ({TITLES})().includes('KL: 2:2,2,2,2, 10 replicates')", timeout=TIMEOUT, polling=POLL
    )
    page.wait_for_timeout(500)  # the new panels' layout
    assert "Selected |X|: 2:2,2,2,2" in frames_drawn(page)
    page.screenshot(path=str(shots / "experiments.png"), full_page=True)
    assert_nothing_asked_of_another_host(page, refused, errors)


def test_kl_plots_fit_their_data_and_the_tab_fits_the_page_at_1024_px(page: Page, app_url, shots):
    page.set_viewport_size({"width": 1024, "height": 768})
    open_app(page, app_url)
    open_experiments(page)
    assert_kl_axes_fit_their_data(page)
    assert_the_tab_fits(page)
    page.screenshot(path=str(shots / "experiments-1024.png"))


def test_experiments_tab_fits_a_notebook_output_and_nothing_leaves_the_machine(page: Page, inline_url):
    page.set_viewport_size({"width": 930, "height": 768})
    refused, errors = open_offline(page, inline_url)
    open_experiments(page)
    assert_kl_axes_fit_their_data(page)  # the notebook form draws the same figures
    assert_the_tab_fits(page)
    assert_nothing_asked_of_another_host(page, refused, errors)
