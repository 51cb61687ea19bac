"""The covariates card on an uploaded survey: the columns left out of the model are offered as covariates and
weights, the regression runs as a job, and the card shows the coefficients with odds ratios and intervals and
the class probabilities along each covariate (a line per class for a number, bars for categories), at 1366
and 1024 px; its report carries the regression, its weights and the command that writes it."""

import pytest
from conftest import VIEWPORT
from pages import DEEP, POLL, TIMEOUT, data_tab, open_app, sweep, upload
from playwright.sync_api import Page, expect
from questionnaire import CONTRACT, ITEMS, WEIGHT, YEARS, survey_with_covariates

pytestmark = pytest.mark.browser

# The card's coefficient table (its rows' texts), its figures (their labels), and whether it runs past the page.
CARD = f"""() => {{ {DEEP}
  const card = deep('.effdim-regression')[0];
  if (!card) return null;
  const rows = deep('.effdim-coef tbody tr').map((r) => r.textContent);
  const figures = deep('.effdim-curves svg').map((s) => s.getAttribute('aria-label'));
  const box = card.getBoundingClientRect();
  return {{rows, figures, right: box.right, width: innerWidth}};
}}"""


def test_covariates_and_weights_left_out_of_the_model_are_fitted_read_and_reported(
    warm_browser, app_url, shots, tmp_path
):
    page: Page = warm_browser.new_page()
    try:
        open_app(page, app_url)
        data_tab(page)
        upload(page, "staff-survey.csv", survey_with_covariates().to_csv(index=False).encode("utf-8"))
        picker = page.locator(".effdim-columns-used")
        expect(picker).to_contain_text(WEIGHT, timeout=TIMEOUT)
        for column in (YEARS, CONTRACT, WEIGHT):  # out of the model: covariates and weights
            picker.locator(".choices__list--multiple .choices__item", has_text=column).locator("button").click()
            expect(picker.locator(".choices__list--multiple")).not_to_contain_text(column, timeout=TIMEOUT)
        sweep(page, 3)
        expect(page.locator(".effdim-fit-stats")).to_contain_text("G²", timeout=TIMEOUT)
        choice = page.locator(".effdim-fit-choice select")
        three = next(o for o in choice.locator("option").all_text_contents() if o.startswith("|X| = 3"))
        choice.select_option(label=three)

        card = page.locator(".effdim-regression-card")
        expect(card).to_be_visible(timeout=TIMEOUT)
        card.scroll_into_view_if_needed()
        chooser = card.locator(".effdim-covariates")
        for column in (YEARS, CONTRACT):
            chooser.locator(".choices__inner").click()
            chooser.get_by_role("option", name=column).click()
        expect(card.locator(".effdim-formula input")).to_have_value(f"`{YEARS}` + {CONTRACT}", timeout=TIMEOUT)
        card.locator(".effdim-weights select").select_option(label=WEIGHT)
        page.get_by_role("button", name="Fit with covariates").click()
        expect(card).to_contain_text("odds ratio", timeout=TIMEOUT)
        expect(card).to_contain_text("Fitted on 800 rows", timeout=TIMEOUT)
        expect(card).to_contain_text(f"800 rows, weighted by {WEIGHT}")
        expect(card).to_contain_text("standard errors from the robust information")
        for width in (1366, 1024):
            page.set_viewport_size({"width": width, "height": 768})
            page.wait_for_function(
                f"() => ({CARD})() && ({CARD})().right <= innerWidth + 1", timeout=TIMEOUT, polling=POLL
            )
            seen = page.evaluate(CARD)
            terms = [r.split("X = ")[0] for r in seen["rows"]]
            assert terms == ["(Intercept)"] * 2 + [f"`{YEARS}`"] * 2 + [f"{CONTRACT}[Fixed-term]"] * 2
            assert seen["figures"] == [
                f"class probabilities of X by {YEARS}",
                f"profile of {CONTRACT}",
                "colours of the classes of X",
            ]
            edges = page.evaluate("() => document.documentElement.scrollWidth")
            assert edges <= width, f"the page scrolls sideways: {edges} px at {width}"
            card.locator(".effdim-coef").scroll_into_view_if_needed()
            page.screenshot(path=str(shots / f"regression-card-{width}.png"), full_page=False)

        with page.expect_download(timeout=TIMEOUT) as download:
            card.get_by_role("button", name="Download report (HTML)").click()
        saved = tmp_path / "report.html"
        download.value.save_as(saved)
        text = saved.read_text(encoding="utf-8")
        assert '<section id="regression"' in text and "every score uses N = 800" in text
        assert f"--weights &#x27;{WEIGHT}&#x27;" in text and ITEMS["q1_satisfied"] in text

        # a formula the engine refuses is said in its words, the regression shown kept
        formula = card.locator(".effdim-formula input")
        formula.fill(f"`{YEARS}` +")
        formula.press("Enter")
        page.get_by_role("button", name="Fit with covariates").click()
        expect(card).to_contain_text("a column name is missing at the end", timeout=TIMEOUT)
        assert page.evaluate(CARD)["rows"]
    finally:
        page.set_viewport_size(VIEWPORT)
        page.close()
