"""Every figure the Data tab shows is laid out: its frame (the area inside the axes) fills its canvas, after a
sweep and after a hill climb (effdim_app.dashboard's data tab keeps all its figures in one wrapping box;
with the fitted view's figures outside it, Bokeh never laid out the figures inside, leaving a 0x0 frame).

The widths only read the page on which Stouffer-Toby was swept (``stouffer_toby_swept``, tests/ui/conftest.py);
the hill climb runs on a page of its own."""

import pytest
from conftest import VIEWPORT
from pages import DEEP, POLL, SCORES_PLOT, TIMEOUT, apply_notation, open_app, sweep_stouffer_toby
from playwright.sync_api import Page

pytestmark = pytest.mark.browser

# [title, frame width, frame height] of every Bokeh plot on screen
FRAMES = (
    "() => {"
    + SCORES_PLOT
    + """
  return views.filter((v) => v.frame && v.canvas_view && v.is_displayed)
    .map((v) => [v.model.title ? v.model.title.text : v.model.name, v.frame.bbox.width, v.frame.bbox.height]);
}"""
)


def _shown(page: Page, title: str) -> list:
    """The frames on screen, once the plot titled ``title...`` is on screen."""
    page.wait_for_function(
        f"(t) => ({FRAMES})().some(([title]) => title && title.startsWith(t))", arg=title, timeout=TIMEOUT, polling=POLL
    )
    page.wait_for_timeout(500)  # a layout pass after the plot appeared
    return page.evaluate(FRAMES)


# Blank px between the bottom of what stands above the score curves (the scale switch under the sweep's status
# line) and the top of the curves.
GAP_ABOVE_CURVES = f"""() => {{ {DEEP}
  const above = deep('.effdim-scale')[0] || deep('.effdim-status')[0];
  return deep('.effdim-curves')[0].getBoundingClientRect().top - above.getBoundingClientRect().bottom;
}}"""


@pytest.mark.parametrize("width", [1366, 1024])
def test_no_blank_band_above_the_score_curves(stouffer_toby_swept: Page, width):
    page = stouffer_toby_swept
    page.set_viewport_size({"width": width, "height": 768})
    try:
        _shown(page, "Scores against")
        gap = page.evaluate(GAP_ABOVE_CURVES)
    finally:
        page.set_viewport_size(VIEWPORT)
    assert gap < 20, f"{gap:.0f} px blank between the sweep's status and its curves"  # an empty message is more


def test_the_score_and_climb_curves_are_laid_out(page: Page, app_url):
    """A model of the data's four columns (so that the hill climb can run), Stouffer-Toby swept for |X| = 1 .. 3,
    then the climb."""
    open_app(page, app_url)
    apply_notation(page, "2(2,2,2,2)")
    sweep_stouffer_toby(page, up_to=3)
    frames = _shown(page, "Scores against")
    assert [f for f in frames if f[1] < 100 or f[2] < 100] == [], frames
    page.get_by_role("button", name="Edited model (leaves = columns)").click()
    page.get_by_role("button", name="Hill climb").click()
    frames = _shown(page, "Hill climb on")
    assert [f for f in frames if f[1] < 100 or f[2] < 100] == [], frames
