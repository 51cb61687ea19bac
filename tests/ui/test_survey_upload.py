"""A researcher's own survey, uploaded as a new user would (tests/questionnaire.py: 800 respondents, an ID column,
six items worded as the form asked them, three answers each, some blank): the profiles are legible with its long
labels, its answers come in one order in every panel, and projector mode enlarges every figure.

Screenshots of the CSV and the .sav upload at 1366 and 1024 px, normal and projector mode, go to
tests/ui/screenshots/survey-*.png."""

from __future__ import annotations

import pytest
from conftest import VIEWPORT
from pages import DEEP, POLL, TIMEOUT, data_tab, open_app
from playwright.sync_api import Page, expect
from questionnaire import ID, ITEMS, survey_csv, survey_sav

pytestmark = pytest.mark.browser

#: The answers of the survey's CSV along their scale (effdim.data.ordinal), in every panel.
SCALE = ["Disagree", "Neither agree nor disagree", "Agree"]

# Every profile panel: its item (aria-label), its category labels with their whole text (the tooltip) and the
# boxes of their lines on screen, and the boxes of its title's lines.
PANELS = f"""() => {{ {DEEP}
  const boxes = (text) => [...text.querySelectorAll('tspan')].map((s) => {{
    const r = s.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom, s.textContent]; }});
  return deep('.effdim-panels svg').map((svg) => ({{
    item: svg.getAttribute('aria-label').replace('profile of ', ''),
    width: svg.getBoundingClientRect().width,
    labels: [...svg.querySelectorAll('text.category')].map((t) => ({{
      whole: t.querySelector('title').textContent, boxes: boxes(t), turned: !!t.getAttribute('transform') }})),
    title: [...svg.querySelectorAll('text.panel-title')].map((t) => ({{
      whole: t.querySelector('title').textContent, boxes: boxes(t) }}))[0],
  }}));
}}"""


def overlaps(boxes: list) -> list:
    """The pairs of boxes ``[left, top, right, bottom, text]`` that share more than a pixel each way."""
    return [
        (a[4], b[4])
        for i, a in enumerate(boxes)
        for b in boxes[i + 1 :]
        if min(a[2], b[2]) - max(a[0], b[0]) > 1 and min(a[3], b[3]) - max(a[1], b[1]) > 1
    ]


def upload_survey(page: Page, name: str, content: bytes) -> None:
    """On the Data tab: upload the survey; the reader leaves the ID column out (800 distinct values)."""
    data_tab(page)
    page.locator("input.filepond--browser").set_input_files(
        {"name": name, "mimeType": "application/octet-stream", "buffer": content}
    )
    expect(page.get_by_text("800 rows").first).to_be_visible(timeout=TIMEOUT)


def sweep_to(page: Page, top: int) -> None:
    to = page.locator(".effdim-card-max input")
    to.fill(str(top))
    to.press("Enter")
    page.get_by_role("button", name="▶ Sweep cardinality").click()
    expect(page.locator(".effdim-fit-stats")).to_contain_text("G²", timeout=TIMEOUT)


def test_the_profiles_of_a_survey_are_legible_and_its_answers_in_one_order(page: Page, app_url, shots):
    """Item 2: one panel per item, no label running into another (long ones wrapped, or shortened with the whole
    text in their tooltip); item 3: every panel lists the answers along the scale, and so does the Data tab's list
    of a column's answers."""
    open_app(page, app_url)
    upload_survey(page, "survey.csv", survey_csv())
    order = page.locator(".effdim-order-states select option")
    expect(order).to_have_count(3, timeout=TIMEOUT)
    assert order.all_text_contents() == SCALE
    sweep_to(page, 3)
    page.locator(".effdim-profile").scroll_into_view_if_needed()
    page.wait_for_function(f"() => ({PANELS})().length === 6", timeout=TIMEOUT, polling=POLL)
    panels = page.evaluate(PANELS)
    assert [p["item"] for p in panels] == list(ITEMS.values())
    for panel in panels:
        assert [label["whole"] for label in panel["labels"]] == SCALE, panel["item"]
        lines = [box for label in panel["labels"] for box in label["boxes"]] + panel["title"]["boxes"]
        assert overlaps(lines) == [], (panel["item"], overlaps(lines))
        for label in panel["labels"] + [panel["title"]]:
            shown = " ".join(box[4] for box in label["boxes"])
            assert shown == label["whole"] or (shown.endswith("…") and label["whole"].startswith(shown[:-1])), label
        assert all(box[2] - box[0] <= panel["width"] for box in panel["title"]["boxes"])
    page.screenshot(path=str(shots / "survey-profiles-1366.png"))


@pytest.mark.parametrize(("name", "content"), [("survey.csv", survey_csv), ("survey.sav", survey_sav)])
def test_projector_mode_enlarges_every_figure_of_a_survey(page: Page, app_url, shots, name, content):
    """Item 6: with projector mode on, the score curves' title, ticks and legend, the residual map's cell values and
    the profile panels are drawn 1.5 times larger than with it off; screenshots at 1366 and 1024 px either way."""
    open_app(page, app_url)
    upload_survey(page, name, content())
    sweep_to(page, 3)
    normal = page.evaluate(SIZES)
    stem = name.replace(".", "-")
    _screenshots(page, shots, f"survey-{stem}")
    page.get_by_role("button", name="Projector: off").click()
    expect(page.get_by_role("button", name="Projector: on ✓")).to_be_visible()
    page.wait_for_function(f"(n) => ({SIZES})().curves.title > n", arg=normal["curves"]["title"], polling=POLL)
    page.wait_for_timeout(500)  # the figures' layout at their new sizes
    big = page.evaluate(SIZES)
    for figure in ("curves", "residuals"):
        for part, size in normal[figure].items():
            assert big[figure][part] == pytest.approx(1.5 * size, rel=0.02), (figure, part, normal, big)
    assert big["panel"] == pytest.approx(1.5 * normal["panel"], rel=0.02)
    _screenshots(page, shots, f"survey-{stem}-projector")


# The point sizes of the score curves' title, ticks and legend, the residual map's title and cell values (Bokeh
# models), and the width of the first profile panel on screen.
SIZES = f"""() => {{ {DEEP}
  const views = [];
  const walk = (v) => {{ views.push(v); for (const c of (v.child_views || [])) walk(c); }};
  for (const root of Bokeh.index.roots ?? Object.values(Bokeh.index)) walk(root);
  const plot = (start) => views.find((v) => v.frame && v.model.title && v.model.title.text.startsWith(start)).model;
  const pt = (size) => parseFloat(typeof size === 'string' ? size : size.value);
  const curves = plot('Scores against'), bvr = plot('Bivariate');
  const text = bvr.renderers.find((r) => r.glyph.type === 'Text').glyph;
  const legend = curves.right.find((m) => m.type === 'Legend');
  return {{
    curves: {{title: pt(curves.title.text_font_size), ticks: pt(curves.below[0].major_label_text_font_size),
              legend: pt(legend.label_text_font_size)}},
    residuals: {{title: pt(bvr.title.text_font_size), cells: pt(text.text_font_size)}},
    panel: deep('.effdim-panels svg')[0].getBoundingClientRect().width,
  }};
}}"""


def _screenshots(page: Page, shots, stem: str) -> None:
    """The scores and the fitted view at 1366 and 1024 px."""
    try:
        for width in (1366, 1024):
            page.set_viewport_size({"width": width, "height": 768})
            page.wait_for_timeout(400)
            for part in ("curves", "profile", "bvr"):
                page.locator(f".effdim-{part}").first.scroll_into_view_if_needed()
                page.screenshot(path=str(shots / f"{stem}-{width}-{part}.png"))
    finally:
        page.set_viewport_size(VIEWPORT)


def test_the_reports_command_of_a_survey_runs_and_gives_the_pages_numbers_and_posteriors_keep_its_id(
    page: Page, app_url, tmp_path, monkeypatch, capsys
):
    """Items 4 and 5: the report's command leaves the identifier out (--drop), runs where the file is and gives the
    log-likelihoods of the page's table; the posteriors' download starts with the identifier column."""
    import html
    import json
    import re
    import shlex

    import pandas as pd

    from effdim.cli import main

    open_app(page, app_url)
    upload_survey(page, "survey.csv", survey_csv())
    expect(page.get_by_text("an identifier, kept for the posteriors' download")).to_be_visible()
    sweep_to(page, 2)
    expect(page.locator(".effdim-results .tabulator-row")).to_have_count(2)
    logliks = page.locator(".effdim-results .tabulator-cell[tabulator-field='loglik']").all_text_contents()
    with page.expect_download(timeout=TIMEOUT) as report:
        page.get_by_role("button", name="Download report (HTML)").click()
    text = tmp_path / "report.html"
    report.value.save_as(text)
    command = html.unescape(re.search(r'<pre class="command"><code>(.*?)</code></pre>', text.read_text()).group(1))
    assert f"--drop {ID}" in command
    (tmp_path / "survey.csv").write_bytes(survey_csv())
    monkeypatch.chdir(tmp_path)
    assert main([*shlex.split(command)[1:], "--json", "--quiet"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert [f"{f['loglik']:,.2f}" for f in again] == logliks
    with page.expect_download(timeout=TIMEOUT) as posteriors:
        page.get_by_role("button", name="Download posteriors (CSV)").click()
    table = pd.read_csv(posteriors.value.path())
    assert table.columns[0] == ID and table[ID].tolist()[:3] == ["R0001", "R0002", "R0003"] and len(table) == 800
