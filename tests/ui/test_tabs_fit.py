"""The Data & scores tab and its fitted view at the widths people use (1366 and 1024 px): nothing runs
past the page's edge, the profiles are drawn per item as poLCA draws them, and the heatmap and the fit
statistics show aligned numbers (a fit that no longer matches the model on screen says so:
tests/ui/test_proposal.py).

The widths are read on the page of Stouffer-Toby swept that the browser tests share
(``stouffer_toby_swept``, tests/ui/conftest.py)."""

import re

import pytest
from conftest import VIEWPORT
from pages import DEEP, POLL, TIMEOUT, data_tab, open_app
from playwright.sync_api import Page

pytestmark = pytest.mark.browser

VIEWS = """
  const views = [];
  const walk = (v) => { views.push(v); for (const c of (v.child_views || [])) walk(c); };
  for (const root of Bokeh.index.roots ?? Object.values(Bokeh.index)) walk(root);
"""
# The profile panels (SVG, one per item, effdim.charts): each panel's name and its category labels, and the
# heading above them with whether it fits its pane.
PROFILE = f"""
() => {{
  {DEEP}
  const pane = deep('.effdim-h', '.effdim-profile')[0];
  if (!pane) return null;
  const panels = deep('.effdim-panels svg');
  return {{title: pane.textContent, fits: pane.scrollWidth <= pane.clientWidth + 1,
           items: panels.map((p) => p.getAttribute('aria-label')),
           categories: panels.map((p) => [...p.querySelectorAll('text.category tspan')].map((t) => t.textContent)),
           lines: panels.reduce((n, p) => n + p.querySelectorAll('polyline, path').length, 0)}};
}}
"""
# The texts written in the bivariate-residual heatmap's cells.
CELL_TEXTS = f"""
() => {{
  {VIEWS}
  const plot = views.find((v) => v.frame && v.model.title && v.model.title.text.startsWith('Bivariate'));
  if (!plot) return null;
  const texts = plot.model.renderers.filter((r) => r.glyph.type === 'Text');
  return texts.length ? texts[0].data_source.data.value : [];
}}
"""
# Right edge of the first element matching a selector (through shadow roots), and the page's width.
RIGHT = f"(s) => {{ {DEEP} const e = deep(s)[0]; return e ? [e.getBoundingClientRect().right, innerWidth] : null; }}"
# Left edge of the fitted view against the tab's left edge.
LEFTS = f"""() => {{ {DEEP}
  return [deep('.effdim-fitted')[0].getBoundingClientRect().left,
          deep('.effdim-tabs')[0].getBoundingClientRect().left]; }}"""
STAT_CELLS = f"""() => {{ {DEEP}
  return deep('.effdim-fit-table:not(.effdim-classification) td.v').filter((c) => c.offsetParent !== null)
    .map((c) => [c.textContent, getComputedStyle(c).textAlign]); }}"""


@pytest.mark.parametrize("width", [1366, 1024])
def test_fitted_view_fits_the_page_and_draws_profiles_per_item(stouffer_toby_swept: Page, shots, width):
    page = stouffer_toby_swept
    page.set_viewport_size({"width": width, "height": 768})
    _settle(page)
    try:
        _check_fitted_view(page, shots, width)
    finally:
        page.set_viewport_size(VIEWPORT)


def _settle(page: Page) -> None:
    """Waits (up to 9 s) until the page's layout at its new width holds still: the fitted view and the tab
    measure the same in two reads 300 ms apart."""
    measure = f"() => {{ {DEEP} return [deep('.effdim-fitted')[0].getBoundingClientRect().width, innerWidth]; }}"
    last = page.evaluate(measure)
    for _ in range(30):
        page.wait_for_timeout(300)
        now = page.evaluate(measure)
        if now == last:
            return
        last = now


def _check_fitted_view(page: Page, shots, width: int) -> None:
    page.wait_for_function(f"() => ({PROFILE})() !== null && ({CELL_TEXTS})() !== null", timeout=TIMEOUT, polling=POLL)
    profile = page.evaluate(PROFILE)
    assert profile["fits"], f"the profiles' heading is cut: {profile['title']!r}"
    # poLCA-style: a panel per item, in it the bars of each category (its labels under them), no line joining
    # different items' categories
    assert profile["items"] == [f"profile of {item}" for item in "ABCD"], profile["items"]
    assert profile["categories"] == [["+", "-"]] * 4 and profile["lines"] == 0, profile
    # the heatmap writes its values
    texts = page.evaluate(CELL_TEXTS)
    assert texts and all(re.fullmatch(r"\d+\.\d\d", t) for t in texts), texts
    # fit statistics: right-aligned numbers with the same decimals
    cells = page.evaluate(STAT_CELLS)
    assert cells and all(align == "right" for _, align in cells), cells
    assert all(re.fullmatch(r"-?\d+(\.\d{4})?|n/a", text) for text, _ in cells), cells
    # the fitted view starts at the tab's left edge: no blank column beside it
    fitted_left, tab_left = page.evaluate(LEFTS)
    assert fitted_left - tab_left < 40, (fitted_left, tab_left)
    main = page.evaluate("() => { const m = document.getElementById('main'); return [m.scrollWidth, m.clientWidth]; }")
    assert main[0] <= main[1] + 1, f"the Data & scores tab is {main[0]} px wide in {main[1]} px"
    page.locator(".effdim-fitted").scroll_into_view_if_needed()
    page.screenshot(path=str(shots / f"fitted-{width}.png"))


def test_edited_model_controls_stay_inside_the_page(page: Page, app_url):
    open_app(page, app_url)
    data_tab(page)
    page.get_by_role("button", name="Edited model (leaves = columns)").click()
    page.wait_for_function(f"() => ({RIGHT})('.effdim-seed') !== null", timeout=TIMEOUT, polling=POLL)
    page.wait_for_timeout(500)  # its layout
    right, width = page.evaluate(RIGHT, ".effdim-seed")
    assert right <= width, f"the Seed box ends at {right:.0f} px of {width}"
