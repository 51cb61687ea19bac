"""The Experiments tab in headless Chromium: shipped results drawn, generator switchable."""

import pytest
from playwright.sync_api import Page, expect

from test_dashboard import TIMEOUT, open_app

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


def test_experiments_tab_shows_figures_and_table2(page: Page, app_url, shots):
    open_app(page, app_url)
    page.get_by_text("Experiments", exact=True).click()
    expect(page.get_by_text("Section 6: HLC 5,3,3:2,2,2,2,2, hill climbing per score")).to_be_visible(timeout=TIMEOUT)
    expect(page.locator("table").filter(has_text="243k").first).to_be_visible(timeout=TIMEOUT)
    # units, abbreviations and a takeaway per figure, in words
    for said in ("in 1e-3 bits", "SS", "|X|", "docs/experiments.md"):
        expect(page.locator(".effdim-how-to-read, .markdown").filter(has_text=said).first).to_be_visible()
    expect(page.get_by_text("Takeaway:")).to_have_count(2)
    page.wait_for_function(f"() => ({TITLES})().includes('KL: 8:2,2,2,2, 10 replicates')", timeout=TIMEOUT)
    assert any(t.startswith("KL of the selected model, 50 replicates") for t in page.evaluate(TITLES))
    assert len(frames_drawn(page)) == 3
    page.locator("select").filter(has_text="8:2,2,2,2").first.select_option("2:2,2,2,2")
    page.wait_for_function(f"() => ({TITLES})().includes('KL: 2:2,2,2,2, 10 replicates')", timeout=TIMEOUT)
    page.wait_for_timeout(500)  # the new panels' layout
    assert "Selected |X|: 2:2,2,2,2" in frames_drawn(page)
    page.screenshot(path=str(shots / "experiments.png"), full_page=True)
