"""What a researcher looks for on screen after a sweep (item 7 of the survey review): the scores on poLCA's -2LL
scale, the classification table and error, EM's starts, the bootstrap p-value of G2 as a job, the SPSS file's
variable labels as the items' titles, and a sign over profiles that are not unique, with the share ranges."""

from __future__ import annotations

import pytest
from conftest import show_the_first_fit
from pages import DEEP, POLL, TIMEOUT, open_app
from playwright.sync_api import Page, expect
from questionnaire import ITEMS, survey_sav
from test_survey_upload import PANELS, sweep_to, upload_survey

pytestmark = pytest.mark.browser

# The scores plot's y-axis label (the Bokeh figure titled "Scores against ...").
Y_LABEL = f"""() => {{ {DEEP}
  const views = [];
  const walk = (v) => {{ views.push(v); for (const c of (v.child_views || [])) walk(c); }};
  for (const root of Bokeh.index.roots ?? Object.values(Bokeh.index)) walk(root);
  const plot = views.find((v) => v.frame && v.model.title && v.model.title.text.startsWith('Scores against'));
  return plot ? plot.model.left[0].axis_label : null;
}}"""


def test_an_spss_survey_shows_its_questions_the_minus_2ll_scale_classification_starts_and_a_bootstrap(
    page: Page, app_url
):
    open_app(page, app_url)
    upload_survey(page, "survey.sav", survey_sav())
    sweep_to(page, 3)
    # the variable labels are the panels' titles (the short names in their tooltips)
    page.wait_for_function(f"() => ({PANELS})().length === 6", timeout=TIMEOUT, polling=POLL)
    titles = [" ".join(box[4] for box in p["title"]["boxes"]) for p in page.evaluate(PANELS)]
    assert titles[0] == ITEMS["q1_satisfied"] and [p["title"]["whole"] for p in page.evaluate(PANELS)][0] == (
        f"q1_satisfied: {ITEMS['q1_satisfied']}"
    )
    # poLCA's and Mplus's scale on screen: the table's first column and the curves' axis
    assert "higher is better" in page.evaluate(Y_LABEL)
    page.locator(".effdim-scale").get_by_text("−2 log L + penalty, as poLCA, Mplus").click()
    expect(page.locator(".effdim-results .tabulator-col-title").filter(has_text="-2LL")).to_have_count(1)
    page.wait_for_function(f"() => ({Y_LABEL})().includes('lower is better')", timeout=TIMEOUT, polling=POLL)
    minus_2ll = page.locator(".effdim-results .tabulator-cell[tabulator-field='-2LL']").first.inner_text()
    assert float(minus_2ll.replace(",", "")) > 0
    # the classification table and its error, EM's starts
    stats = page.locator(".effdim-fit-stats")
    expect(stats).to_contain_text("Classification error")
    expect(stats).to_contain_text("assigned 1")
    expect(stats).to_contain_text("the best log-likelihood reached by")
    expect(stats).to_contain_text("each start ended at")
    # the bootstrap p-value of G2: a job with its progress, then its answer
    box = page.locator(".effdim-bootstrap-b input")
    box.fill("20")
    box.press("Enter")
    page.get_by_role("button", name="▶ Bootstrap p-value of G²").click()
    expect(page.locator(".effdim-checks")).to_contain_text("Bootstrap p-value of G² = ", timeout=TIMEOUT)
    expect(page.locator(".effdim-checks")).to_contain_text("B = 20")


def test_profiles_that_are_not_unique_carry_a_sign_and_the_share_ranges_are_a_click_away(stouffer_toby_swept: Page):
    page = stouffer_toby_swept
    try:
        page.locator(".effdim-fit-choice select").select_option("|X| = 3: X:3(A:2,B:2,C:2,D:2)")
        expect(page.locator(".effdim-profile")).to_contain_text("Not unique.", timeout=TIMEOUT)
        expect(page.locator(".effdim-profile")).to_contain_text("de = 13 < ds = 14")
        page.get_by_role("button", name="▶ How far do the class shares move? (4 refits)").click()
        expect(page.locator(".effdim-checks")).to_contain_text("equally good fits", timeout=TIMEOUT)
        expect(page.locator(".effdim-checks")).to_contain_text("1: 0.")
    finally:
        show_the_first_fit(page)
    expect(page.locator(".effdim-profile")).not_to_contain_text("Not unique.")
    expect(page.get_by_role("button", name="▶ How far do the class shares move? (4 refits)")).to_be_hidden()
