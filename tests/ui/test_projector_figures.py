"""Projector mode scales the figures that tests/ui/test_survey_upload.py does not measure: the class shares' bars
above the profiles and the hill climb's chart (its title, ticks, axis labels and legend), each 1.5 times its
size with projector mode off, and back again when it is switched off; the score curves' y-axis label, on
either scale, still fits beside its plot."""

from __future__ import annotations

import pytest
from conftest import VIEWPORT
from pages import DEEP, POLL, TIMEOUT, apply_notation, open_app, sweep_stouffer_toby
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.browser

# The point sizes of the hill climb chart's title, tick labels, axis label and legend (Bokeh models), and the width
# of the class shares' bars above the profile panels.
SIZES = f"""() => {{ {DEEP}
  const views = [];
  const walk = (v) => {{ views.push(v); for (const c of (v.child_views || [])) walk(c); }};
  for (const root of Bokeh.index.roots ?? Object.values(Bokeh.index)) walk(root);
  const pt = (size) => parseFloat(typeof size === 'string' ? size : size.value);
  const climb = views.find((v) => v.frame && v.model.title && v.model.title.text.startsWith('Hill climb on'));
  const shares = deep('.effdim-legend-bars svg')[0];
  const out = {{shares: shares ? shares.getBoundingClientRect().width : 0}};
  if (climb) {{
    const plot = climb.model, legend = [...plot.right, ...plot.center].find((m) => m.type === 'Legend');
    out.climb = {{title: pt(plot.title.text_font_size), ticks: pt(plot.below[0].major_label_text_font_size),
                  axis: pt(plot.below[0].axis_label_text_font_size),
                  legend: legend ? pt(legend.label_text_font_size) : 0}};
  }}
  return out;
}}"""


# The length in px of the score curves' y-axis label in its font, and the height of its plot.
Y_LABEL_FITS = """() => {
  const views = [];
  const walk = (v) => { views.push(v); for (const c of (v.child_views || [])) walk(c); };
  for (const root of Bokeh.index.roots ?? Object.values(Bokeh.index)) walk(root);
  const view = views.find((v) => v.frame && v.model.title && v.model.title.text.startsWith('Scores against'));
  const axis = view.model.left[0];
  const size = typeof axis.axis_label_text_font_size === 'string' ? axis.axis_label_text_font_size
    : axis.axis_label_text_font_size.value;
  const context = document.createElement('canvas').getContext('2d');
  context.font = `${axis.axis_label_text_font_style} ${size} ${axis.axis_label_text_font}`;
  return [context.measureText(axis.axis_label).width, view.bbox.height, axis.axis_label];
}"""


def _toggle(page: Page, to: str) -> None:
    page.get_by_role("button", name="Projector: off" if to == "on" else "Projector: on ✓").click()
    expect(page.get_by_role("button", name="Projector: on ✓" if to == "on" else "Projector: off")).to_be_visible()
    page.wait_for_timeout(500)  # the figures' layout at their new sizes


def test_projector_mode_scales_the_class_shares_and_the_hill_climb_chart(page: Page, app_url):
    open_app(page, app_url)
    apply_notation(page, "2(2,2,2,2)")
    sweep_stouffer_toby(page, up_to=2)
    expect(page.locator(".effdim-fit-stats")).to_contain_text("G²", timeout=TIMEOUT)
    page.wait_for_function(f"() => ({SIZES})().shares > 0", timeout=TIMEOUT, polling=POLL)
    shares = page.evaluate(SIZES)["shares"]
    page.set_viewport_size({"width": 1024, "height": 768})
    try:
        _toggle(page, "on")
        for deviance in (False, True):
            if deviance:
                page.get_by_text("−2 log L + penalty, as poLCA, Mplus").click()
                page.wait_for_function(f"() => ({Y_LABEL_FITS})()[2].includes('lower')", timeout=TIMEOUT, polling=POLL)
            length, height, label = page.evaluate(Y_LABEL_FITS)
            assert length < height - 20, (label, length, height)
        assert page.evaluate(SIZES)["shares"] == pytest.approx(1.5 * shares, rel=0.02)
        _toggle(page, "off")
    finally:
        page.set_viewport_size(VIEWPORT)
    page.get_by_role("button", name="Edited model (leaves = columns)").click()
    page.get_by_role("button", name="Hill climb").click()
    page.wait_for_function(f"() => !!({SIZES})().climb", timeout=TIMEOUT, polling=POLL)
    normal = page.evaluate(SIZES)
    assert normal["climb"]["legend"] > 0, normal
    _toggle(page, "on")
    page.wait_for_function(f"(n) => ({SIZES})().climb.title > n", arg=normal["climb"]["title"], polling=POLL)
    big = page.evaluate(SIZES)
    for part, size in normal["climb"].items():
        assert big["climb"][part] == pytest.approx(1.5 * size, rel=0.02), (part, normal, big)
    assert big["shares"] == pytest.approx(1.5 * normal["shares"], rel=0.02), (normal, big)
    _toggle(page, "off")
    back = page.evaluate(SIZES)
    assert back["climb"] == normal["climb"] and back["shares"] == pytest.approx(normal["shares"], rel=0.02), back
