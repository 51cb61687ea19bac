"""Every help tooltip stays inside the window at 1366x768 and 1024x768: the "?" icons of the Model and
Data tabs (the Regularity "?" near the right edge among them) and the Learn structure button's
(effdim_app/compat.py, ``TOOLTIPS_IN_VIEWPORT_JS``)."""

import pytest
from pages import DEEP, POLL, TIMEOUT, data_tab, model_tab, open_app
from playwright.sync_api import Page

pytestmark = pytest.mark.browser

# The centre of every visible "?" icon of the active tab (Bokeh's description icons), scrolled into view.
ICONS = f"""() => {{
  {DEEP}
  return deep('.bk-description').filter((e) => e.offsetParent !== null).length;
}}"""
ICON_XY = f"""(i) => {{
  {DEEP}
  const icon = deep('.bk-description').filter((e) => e.offsetParent !== null)[i];
  icon.scrollIntoView({{block: 'center'}});
  const r = icon.getBoundingClientRect();
  return [r.left + r.width / 2, r.top + r.height / 2];
}}"""
# The box of the tooltip on screen (null while none is shown).
TOOLTIP = f"""() => {{
  {DEEP}
  const shown = deep('.bk-tooltip-content').map((e) => e.getBoundingClientRect()).filter((r) => r.width > 0);
  return shown.length ? {{left: shown[0].left, right: shown[0].right, top: shown[0].top, bottom: shown[0].bottom}} : null;
}}"""


def _shown_inside(page: Page, what: str) -> None:
    page.wait_for_function(f"() => ({TOOLTIP})() !== null", timeout=TIMEOUT, polling=POLL)
    page.wait_for_timeout(100)  # placed (BokehJS places it after drawing it)
    box = page.evaluate(TOOLTIP)
    width, height = page.viewport_size["width"], page.viewport_size["height"]
    assert box["left"] >= 0 and box["right"] <= width and box["top"] >= 0 and box["bottom"] <= height, (what, box)


def _hover_every_icon(page: Page, tab: str) -> int:
    count = page.evaluate(ICONS)
    for i in range(count):
        page.mouse.move(1, 1)
        page.wait_for_function(f"() => ({TOOLTIP})() === null", timeout=TIMEOUT, polling=POLL)
        page.mouse.move(*page.evaluate(ICON_XY, i))
        _shown_inside(page, f"{tab} tab, help icon {i + 1} of {count}")
    return count


def test_tooltips_stay_inside_the_window_at_1366_then_1024_px(page: Page, app_url):
    """One page, its window narrowed from 1366 to 1024 px (test_defects.py opens a page at 1024 px)."""
    open_app(page, app_url)
    learn = page.get_by_role("button", name="Learn structure")
    for width in (1366, 1024):
        page.set_viewport_size({"width": width, "height": 768})
        model_tab(page)
        assert _hover_every_icon(page, f"Model ({width} px)") >= 3  # Regularity, Selected node, Dimensions, ...
        data_tab(page)
        learn.wait_for(timeout=TIMEOUT)
        assert _hover_every_icon(page, f"Data ({width} px)") >= 3
        page.mouse.move(1, 1)
        learn.scroll_into_view_if_needed()
        learn.hover(force=True)  # disabled without data: its tooltip says what it does all the same
        _shown_inside(page, f"Learn structure button ({width} px)")
