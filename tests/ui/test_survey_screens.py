"""A researcher's survey on the screens a class uses (issue 60, item 8): 1366 and 1024 px, normal and projector mode,
and 1366 px at 150 % zoom. The Scores controls keep the EM settings together, select boxes show a long choice whole
on hover, the number cards keep their "i" with its label, and the sidebar says which model the Data tab scores.

Screenshots go to tests/ui/screenshots/screens-*.png."""

from __future__ import annotations

import pytest
from pages import DEEP, TIMEOUT, open_app
from playwright.sync_api import Page, expect
from questionnaire import ITEMS, survey_csv
from test_survey_upload import sweep_to, upload_survey

pytestmark = pytest.mark.browser

#: A sweep of the survey's LC models with 1 to 3 classes, on a loaded machine.
SWEEP_SECONDS = 120

#: The top of the input box in the component whose host matches the selector.
TOP = f"(within) => {{ {DEEP} return deep('input', within)[0].getBoundingClientRect().top; }}"

# Each number card's label: whether its "i" shares a line with the text before it (the last line box of the
# label's text overlaps the icon vertically).
ICON_WITH_TEXT = f"""() => {{ {DEEP}
  return deep('.effdim-stat-label').map((label) => {{
    const icon = label.querySelector('.effdim-i').getBoundingClientRect();
    const range = document.createRange();
    range.setStartBefore(label.firstChild);
    range.setEndBefore(label.querySelector('.effdim-i'));
    const lines = [...range.getClientRects()].filter((r) => r.width > 0);
    const last = lines[lines.length - 1];
    return [label.textContent, last.top < icon.bottom && icon.top < last.bottom];
  }});
}}"""


@pytest.mark.parametrize("width", [1366, 1024])
@pytest.mark.parametrize("projector", [0, 1])
def test_the_em_settings_stay_together_and_the_sidebar_says_which_model_is_scored(
    page: Page, app_url, shots, width, projector
):
    """The survey uploaded, then the edited model chosen: the Seed box is on the line of the EM restarts (it wrapped
    alone), and the sidebar, which shows the tree editor's model, says which model the Data tab scores."""
    page.set_viewport_size({"width": width, "height": 768})
    open_app(page, app_url + f"?projector={projector}")
    note = page.locator(".effdim-scored-note")
    expect(note).to_have_text("")  # nothing scored yet
    upload_survey(page, "survey.csv", survey_csv())
    expect(note).to_contain_text("The Data tab scores an LC model over the data's 6 columns, not this model")
    page.get_by_role("button", name="Edited model (leaves = columns)").click()
    expect(note).to_contain_text("The Data tab scores this model", timeout=TIMEOUT)
    expect(page.locator(".effdim-seed input")).to_be_visible()
    page.wait_for_timeout(500)  # laid out with the sweep's node box
    restarts, seed = (page.evaluate(TOP, s) for s in (".effdim-restarts", ".effdim-seed"))
    assert abs(seed - restarts) < 2, f"the Seed box is {seed - restarts:.0f} px below the EM restarts at {width} px"
    page.locator(".effdim-seed").scroll_into_view_if_needed()
    page.screenshot(path=str(shots / f"screens-scores-{width}-{'projector' if projector else 'normal'}.png"))


def test_a_select_box_shows_its_long_choice_whole_on_hover(page: Page, app_url):
    """The column whose answers to order is a survey's question, longer than its box: hovering the box shows it
    whole (the box cut it at its edge)."""
    open_app(page, app_url)
    upload_survey(page, "survey.csv", survey_csv())
    question = ITEMS["q5_tools"]
    column = page.locator(".effdim-order-column select")
    column.select_option(question)
    cut = column.evaluate(
        "(box) => { const c = document.createElement('canvas').getContext('2d'); c.font = getComputedStyle(box).font;"
        " return c.measureText(box.selectedOptions[0].textContent).width > box.clientWidth; }"
    )
    assert cut, "the question fits its box: the test no longer shows a cut choice"
    assert page.evaluate("() => window.__effdimSelectTitles === true"), "effdim_app/select_titles.js did not run"
    column.hover()
    expect(column).to_have_attribute("title", question)
    # and the sidebar's preset menu, reached by the keyboard
    preset = page.locator(".effdim-preset select")
    preset.focus()
    expect(preset).to_have_attribute("title", preset.evaluate("(box) => box.selectedOptions[0].textContent"))


def test_the_number_cards_keep_their_i_with_the_label_at_150_percent_zoom_in_projector_mode(page: Page, app_url, shots):
    """1366x768 at 150 % zoom is a 910x512 window of 1.5 device pixels per px: the cards are narrow in projector
    mode, and their labels wrap; the "i" stays on the line of the label's last word."""
    page.set_viewport_size({"width": 910, "height": 512})
    open_app(page, app_url + "?projector=1")
    page.locator(".effdim-totals").scroll_into_view_if_needed()
    labels = page.evaluate(ICON_WITH_TEXT)
    assert len(labels) == 4 and all(together for _, together in labels), labels
    page.screenshot(path=str(shots / "screens-cards-150-percent.png"))


# The scroller of a wide table (inside the component matching `within`): [scrollWidth, clientWidth, its right edge,
# the card's right edge, its mask now, its mask scrolled to the end].
WIDE_TABLE = f"""([scroller, within]) => {{ {DEEP}
  const box = deep(scroller, within)[0];
  const card = deep(within)[0].getBoundingClientRect().right;
  const before = [box.scrollWidth, box.clientWidth, box.getBoundingClientRect().right, card,
                  getComputedStyle(box).maskImage];
  box.scrollLeft = box.scrollWidth;
  return new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(() => {{
    const after = getComputedStyle(box).maskImage;
    box.scrollLeft = 0;
    done([...before, after]);
  }})));
}}"""


def test_a_table_wider_than_its_card_scrolls_inside_it_with_its_edge_faded(page: Page, app_url, shots):
    """The survey swept at 1024 px: the score table (11 columns of numbers like -4,913.17) and the class-enumeration
    table (19 columns) are wider than their cards; each scrolls inside its card, its right edge faded while columns
    lie beyond it (they were cut at the card's edge with no sign of more), not once scrolled to the end."""
    page.set_viewport_size({"width": 1024, "height": 768})
    open_app(page, app_url)
    upload_survey(page, "survey.csv", survey_csv())
    sweep_to(page, 3)
    expect(page.locator(".effdim-enumeration table")).to_be_visible(timeout=SWEEP_SECONDS * 1000)
    page.wait_for_timeout(500)  # the tables laid out
    for scroller, within in ((".tabulator-tableholder", ".effdim-results"), (".scroll", ".effdim-enumeration")):
        wide, shown, right, card, mask, at_end = page.evaluate(WIDE_TABLE, [scroller, within])
        assert wide > shown + 20, f"{within} fits its card at 1024 px ({wide} in {shown} px): nothing to check"
        assert right <= card + 1, f"{within}'s box ends at {right:.0f} px, past its card's {card:.0f}"
        assert "linear-gradient" in mask, f"no fade at the right edge of {within}, with columns beyond it: {mask}"
        assert at_end == "none", f"the fade stays at the end of {within}'s scroll: {at_end}"
        page.locator(within).scroll_into_view_if_needed()
        page.screenshot(path=str(shots / f"screens-wide-table-{within.strip('.')}-1024.png"))
