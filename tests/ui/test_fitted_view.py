"""The "Fitted model" view in headless Chromium: profiles, fit statistics,
posterior download (a click on the BVR heatmap: test_proposal.py)."""

import pytest
from conftest import show_the_first_fit
from pages import TIMEOUT
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.browser

# Every Bokeh figure view on the page.
VIEWS = """
  const views = [];
  const walk = (v) => { views.push(v); for (const c of (v.child_views || [])) walk(c); };
  for (const root of Bokeh.index.roots ?? Object.values(Bokeh.index)) walk(root);
"""
# Screen position of the cell (x, y) of the categorical plot whose title starts with ``prefix``.
CELL_XY = f"""
([prefix, x, y]) => {{
  {VIEWS}
  const plot = views.find((v) => v.frame && v.model.title && v.model.title.text.startsWith(prefix));
  if (!plot) return null;
  const box = plot.canvas_view.el.getBoundingClientRect();
  return [box.left + plot.frame.x_scale.compute(plot.model.x_range.synthetic(x)),
          box.top + plot.frame.y_scale.compute(plot.model.y_range.synthetic(y))];
}}
"""


def test_fitted_view_shows_the_fit_and_downloads_posteriors(stouffer_toby_swept: Page, shots, tmp_path):
    page = stouffer_toby_swept
    try:
        _check_the_fits_and_the_download(page, shots, tmp_path)
    finally:
        show_the_first_fit(page)


def _check_the_fits_and_the_download(page: Page, shots, tmp_path) -> None:
    stats = page.locator(".effdim-fit-stats")
    expect(stats).to_contain_text("df = dc − de", timeout=TIMEOUT)
    expect(stats).to_contain_text("entropy R²")
    expect(stats).to_contain_text("2.7199")  # G2 of the 2-class model, chosen as best by BIC+
    expect(page.locator(".effdim-profile")).to_contain_text("Profiles of X: P(item = category | X)")
    # the 3-class fit: de < ds, and the view says so
    page.locator(".effdim-fit-choice select").select_option("|X| = 3: X:3(A:2,B:2,C:2,D:2)")
    expect(stats).to_contain_text("other tools: dc − ds = 1", timeout=TIMEOUT)
    page.locator(".effdim-fitted").scroll_into_view_if_needed()
    page.screenshot(path=str(shots / "fitted-view.png"), full_page=True)

    with page.expect_download(timeout=TIMEOUT) as download:
        page.get_by_role("button", name="Download posteriors (CSV)").click()
    saved = tmp_path / "post.csv"
    download.value.save_as(saved)
    lines = saved.read_text().splitlines()
    assert lines[0].startswith("A,B,C,D,count,P(X=1)") and len(lines) == 17
