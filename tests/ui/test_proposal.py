"""A click on a bivariate residual proposes a model; nothing changes until it is applied, and Undo
brings the earlier sweep back with the model, its table's rows and its curves (effdim_app.views.proposal_view).
A fit that no longer matches the model on screen says so, whether a proposal or the notation box changed it."""

import pytest
from pages import CURVE_POINTS, POLL, TIMEOUT, apply_notation, data_tab, model_tab, open_app, stat, sweep_stouffer_toby
from playwright.sync_api import Page, expect
from test_fitted_view import CELL_XY

pytestmark = pytest.mark.browser


def test_a_residual_click_proposes_applies_on_confirmation_and_undo_restores_the_sweep(page: Page, app_url):
    open_app(page, app_url)
    sweep_stouffer_toby(page, up_to=3)
    stats = page.locator(".effdim-fit-stats")
    expect(stats).to_contain_text("df = dc − de", timeout=TIMEOUT)
    page.locator(".effdim-fit-choice select").select_option("|X| = 3: X:3(A:2,B:2,C:2,D:2)")
    expect(stats).to_contain_text("other tools: dc − ds = 1", timeout=TIMEOUT)
    results = page.locator(".effdim-results .tabulator-row")
    expect(results).to_have_count(3, timeout=TIMEOUT)

    page.locator(".effdim-bvr").scroll_into_view_if_needed()
    page.wait_for_function(
        f"() => ({CELL_XY})(['Bivariate residuals', 'C', 'D']) !== null", timeout=TIMEOUT, polling=POLL
    )
    page.mouse.click(*page.evaluate(CELL_XY, ["Bivariate residuals", "C", "D"]))
    proposal = page.locator(".effdim-model-proposal")
    expect(proposal).to_contain_text("Proposed: X:3(A:2,B:2,H1:2(C:2,D:2))", timeout=TIMEOUT)
    expect(proposal).to_contain_text("ds = 15, de = 11")
    # still on this tab, the sweep and the model as they were
    expect(results).to_have_count(3)
    assert page.get_by_text("Data & scores", exact=True).get_attribute("aria-selected") != "false"

    page.get_by_role("button", name="Apply proposed model").click()
    expect(proposal).to_contain_text("Applied", timeout=TIMEOUT)
    expect(results.first).to_be_hidden(timeout=TIMEOUT)  # a new model: its own sweep is still to run
    expect(stats).to_contain_text("df = dc − de")  # the fit shown stays, marked as not of the model on screen
    stale = page.get_by_text("This fit no longer matches the model on screen")
    expect(stale.last).to_be_visible(timeout=TIMEOUT)

    page.get_by_role("button", name="Undo", exact=True).click()
    expect(proposal).to_contain_text("previous model and its results are back", timeout=TIMEOUT)
    expect(page.locator(".effdim-results")).to_be_visible(timeout=TIMEOUT)
    expect(page.get_by_text("★ Best cardinality by score")).to_be_visible(timeout=TIMEOUT)
    expect(results).to_have_count(3, timeout=TIMEOUT)  # every row of the sweep table back ...
    page.wait_for_function(f"() => ({CURVE_POINTS})() === 3", timeout=TIMEOUT, polling=POLL)  # ... and the curves
    # ... and the fit that was shown before, not the sweep's BIC+ pick (|X| = 2), no longer marked
    expect(stats).to_contain_text("other tools: dc − ds = 1", timeout=TIMEOUT)
    expect(stale).to_have_count(0)
    choice = page.locator(".effdim-fit-choice select")
    expect(choice).to_have_value("|X| = 3: X:3(A:2,B:2,C:2,D:2)")
    # the menu still chooses the fit shown after the undo, and the choice stays (a watcher or a late job result
    # putting the restored |X| = 3 back would do so within a second or two)
    choice.select_option("|X| = 1: X:1(A:2,B:2,C:2,D:2)")
    one = page.get_by_text("Fitted model: X:1(A:2,B:2,C:2,D:2)")
    expect(one).to_be_visible(timeout=TIMEOUT)
    page.wait_for_timeout(3000)
    expect(choice).to_have_value("|X| = 1: X:1(A:2,B:2,C:2,D:2)")
    expect(one).to_be_visible()
    model_tab(page)
    expect(page.locator(".effdim-notation textarea")).not_to_have_value("X:3(A:2,B:2,H1:2(C:2,D:2))", timeout=TIMEOUT)

    # another model applied in the notation box: the fit shown is not of it; scoring the edited tree clears the
    # sweep's results, and the fit stays, marked
    apply_notation(page, "X:3(A:2,B:2,C:2,D:2)")
    expect(page.locator(".effdim-notation textarea")).to_have_value("X:3(A:2,B:2,C:2,D:2)")
    expect(stat(page, "ds")).to_have_text("14", timeout=TIMEOUT)  # the applied model is the session's
    data_tab(page)
    cleared = page.get_by_text(
        "The scores were cleared: the model, the data or the mapping changed; the last fit stays below"
    )
    expect(cleared).to_have_count(0)
    mapping = page.get_by_role("button", name="Edited model (leaves = columns)")
    expect(mapping).to_be_visible(timeout=TIMEOUT)
    mapping.click()
    expect(cleared).to_be_visible(timeout=TIMEOUT)
    expect(stale.last).to_be_visible(timeout=TIMEOUT)
