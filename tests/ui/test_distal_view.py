"""The fitted model's "Distal outcomes" card in headless Chromium: a researcher's survey (tests/questionnaire.py)
uploaded with two columns beside its items, left out of the model, then related to the classes by the
three-step method; the results on screen and in the report.

Screenshots at 1366 and 1024 px go to tests/ui/screenshots/distal-*.png."""

from __future__ import annotations

import numpy as np
import pytest
from pages import TIMEOUT, data_tab, open_app, upload
from playwright.sync_api import Page, expect
from questionnaire import ITEMS, survey_frame

pytestmark = pytest.mark.browser

APPLIED = "Applied for another job this year"
YEARS = "Years of service"


def survey_with_outcomes() -> bytes:
    """The survey and two outcomes that follow its answers: whether the respondent applied elsewhere (more often
    the more items she disagreed with) and her years of service (fewer for the same)."""
    frame = survey_frame()
    rng = np.random.default_rng(61)
    disagree = (frame[list(ITEMS.values())] == "Disagree").sum(axis=1).to_numpy()
    frame[APPLIED] = np.where(rng.random(len(frame)) < 0.1 + 0.12 * disagree, "Yes", "No")
    frame[YEARS] = np.clip(np.round(rng.normal(14 - 1.5 * disagree, 4)), 0, 30).astype(int)
    return frame.to_csv(index=False).encode("utf-8")


@pytest.mark.parametrize("width", [1366, 1024])
def test_columns_left_out_of_the_model_by_class(page: Page, app_url, shots, width, tmp_path):
    page.set_viewport_size({"width": width, "height": 768})
    open_app(page, app_url)
    data_tab(page)
    upload(page, "staff-survey.csv", survey_with_outcomes())
    picker = page.locator(".effdim-columns-used")
    expect(picker).to_contain_text(YEARS, timeout=TIMEOUT)
    for column in (APPLIED, YEARS):  # out of the model: they are the outcomes
        picker.locator(".choices__list--multiple .choices__item", has_text=column).locator("button").click()
        expect(picker.locator(".choices__list--multiple")).not_to_contain_text(column, timeout=TIMEOUT)
    to = page.locator(".effdim-card-max input")
    to.fill("3")
    to.press("Enter")
    page.get_by_role("button", name="▶ Sweep cardinality").click()
    expect(page.locator(".effdim-fit-stats")).to_contain_text("G²", timeout=TIMEOUT)
    choice = page.locator(".effdim-fit-choice select")
    three = next(o for o in choice.locator("option").all_text_contents() if o.startswith("|X| = 3"))
    choice.select_option(label=three)

    card = page.locator(".effdim-distal-card")
    card.scroll_into_view_if_needed()
    outcomes = page.locator(".effdim-distal-outcomes")
    for column in (APPLIED, YEARS):
        outcomes.locator(".choices__inner").click()
        outcomes.get_by_role("option", name=column).click()
    page.keyboard.press("Escape")  # the list closes, as a user leaves it, off the button under it at 1024 px
    page.locator(".effdim-distal-run button").click()
    results = page.locator(".effdim-distal")
    expect(results).to_contain_text(f"{YEARS} (continuous; 800 rows with a value)", timeout=TIMEOUT)
    expect(results).to_contain_text(f"{APPLIED} (categorical; 800 rows with a value)")
    expect(results).to_contain_text("step 3 by the BCH correction")
    expect(results).to_contain_text("Wald test of equal means in every class")
    assert results.locator(f'svg[aria-label="class means of {YEARS}"]').count() == 1
    assert results.locator(f'svg[aria-label="profile of {APPLIED}"] path').count() == 6  # an interval per bar
    assert results.locator('svg[aria-label="colours of the classes of X"] rect').count() == 3  # its legend
    card.scroll_into_view_if_needed()
    page.screenshot(path=str(shots / f"distal-{width}.png"))
    edges = page.evaluate("() => document.documentElement.scrollWidth")
    assert edges <= width, f"the page scrolls sideways: {edges} px at {width}"

    if width == 1366:  # the report carries them too, with step 1's uncertainty when the box is ticked
        page.locator(".effdim-distal-step1 input").check()
        page.locator(".effdim-distal-run button").click()
        expect(results).to_contain_text("Standard errors robust, with step 1's uncertainty", timeout=TIMEOUT)
        with page.expect_download(timeout=TIMEOUT) as download:
            page.get_by_role("button", name="Download report (HTML)").click()
        saved = tmp_path / "report.html"
        download.value.save_as(saved)
        text = saved.read_text(encoding="utf-8")
        assert '<section id="distal"' in text and f"{YEARS} (continuous; 800 rows with a value)" in text
        assert "--distal &#x27;Applied for another job this year&#x27;" in text
        assert "--distal-method bch --step1-uncertainty" in text
