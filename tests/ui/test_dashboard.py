"""The dashboard in headless Chromium: the browser checks of every tab.

Each test opens a fresh browser page, hence a fresh server session; checks that follow one another on the
same page, as a user's steps do, are one test (a page open costs seconds of Chromium's CPU).
"""

from __future__ import annotations

import pytest
from pages import (
    FIG2,
    TIMEOUT,
    apply_notation,
    click_node,
    open_app,
    stat,
    sweep_stouffer_toby,
    table_rows,
)
from playwright.sync_api import Page, expect

from effdim import parse_model
from effdim.dimensions import dimensions

pytestmark = pytest.mark.browser


def test_load_then_click_node_change_cardinality_then_preset_notation_and_irregular_model(page: Page, app_url, shots):
    """Figure 2 on the first screen; then a node's states edited, the table and the totals following, and undone;
    then a preset, the notation box and an irregular model's regularization log."""
    open_app(page, app_url)
    expect(page.locator(".effdim-notation textarea")).to_have_value(FIG2)
    expect(stat(page, "ds")).to_have_text("41")
    expect(stat(page, "de")).to_have_text("23")
    expect(stat(page, "gap")).to_have_text("18")
    expect(table_rows(page)).to_have_count(3)
    expect(page.locator(".effdim-corollary")).to_contain_text("12 + 3 + 3")
    page.screenshot(path=str(shots / "01-load-figure2.png"))

    click_node(page, FIG2, "O3")
    expect(page.locator(".effdim-sel")).to_contain_text("Selected: O3")
    expect(table_rows(page).nth(0)).to_contain_text("5:3,3,2")
    card = page.locator(".effdim-card-input input")
    card.fill("3")
    card.press("Enter")
    edited = "5(3(2,2),3,3(2,2))"
    expect(page.locator(".effdim-notation textarea")).to_have_value(edited, timeout=TIMEOUT)
    expect(table_rows(page).nth(0)).to_contain_text("5:3,3,3")
    expect(stat(page, "ds")).to_have_text(str(dimensions(parse_model(edited)).ds))
    # a table row highlights its hidden node and explains its numbers
    table_rows(page).nth(0).locator("[tabulator-field=hidden]").click()
    expect(page.get_by_text("Local LC model of H1")).to_be_visible()
    page.mouse.move(5, 5)  # no hover tooltip in the picture
    page.locator(".effdim-legend").hover()
    page.wait_for_timeout(800)
    page.screenshot(path=str(shots / "02-edit-cardinality.png"))
    page.get_by_role("button", name="↶ Undo").click()
    expect(page.locator(".effdim-notation textarea")).to_have_value(FIG2)
    expect(table_rows(page).nth(0)).to_contain_text("5:3,3,2")

    # a preset loaded; then a model typed in the notation box, and a syntax error refused with the model kept;
    # then an irregular model, its regularization log, and the model said irregular with auto-regularize off
    page.locator("select").first.select_option("Table 1: LC 4:3,3,3")
    page.get_by_role("button", name="Load preset").click()
    expect(page.locator(".effdim-notation textarea")).to_have_value("4:3,3,3", timeout=TIMEOUT)
    expect(stat(page, "ds")).to_have_text("27")
    expect(stat(page, "de")).to_have_text("25")  # one below db = 26 (Table 1)
    expect(table_rows(page)).to_have_count(1)
    expect(table_rows(page).first).to_contain_text("26")
    page.screenshot(path=str(shots / "03-preset-table1.png"))

    apply_notation(page, "Q:3(A:2,B:2,C:2)")
    expect(table_rows(page)).to_have_count(1, timeout=TIMEOUT)
    expect(table_rows(page).first).to_contain_text("3:2,2,2")
    expect(stat(page, "ds")).to_have_text("11")
    expect(stat(page, "de")).to_have_text("7")
    apply_notation(page, "3(2,2")  # a syntax error: refused, model kept
    expect(page.get_by_text("position")).to_be_visible()
    expect(stat(page, "ds")).to_have_text("11")
    page.screenshot(path=str(shots / "04-notation.png"))

    apply_notation(page, "H1:3(H2:9(O1:2,O2:2),O3:2,H3:4(H4:2(O4:2,O5:2,O6:2)))")
    page.locator(".effdim-steps").scroll_into_view_if_needed()
    steps = page.locator(".effdim-steps .tabulator-row")
    expect(steps).to_have_count(3, timeout=TIMEOUT)
    expect(steps.nth(0)).to_contain_text("shrink")
    expect(steps.nth(0)).to_contain_text("9 → 4")
    expect(steps.nth(2)).to_contain_text("remove")
    expect(page.get_by_text("regular equivalent", exact=False).first).to_be_visible()
    page.screenshot(path=str(shots / "05-irregular-regularized.png"))
    page.locator(".effdim-auto").click()  # auto-regularize off
    expect(page.get_by_text("The model is irregular")).to_be_visible(timeout=TIMEOUT)


def test_upload_csv_and_see_curves(page: Page, app_url, shots):
    open_app(page, app_url)
    sweep_stouffer_toby(page, up_to=4)
    expect(page.locator(".effdim-best")).to_contain_text("Best cardinality by score", timeout=TIMEOUT)
    expect(page.locator(".effdim-best")).to_contain_text("CS+")
    page.locator(".effdim-results").scroll_into_view_if_needed()
    results = page.locator(".effdim-results .tabulator-row")
    expect(results).to_have_count(4)
    expect(page.get_by_role("button", name="Download curves (CSV)")).to_be_visible()
    page.screenshot(path=str(shots / "06-sweep-curves.png"))
    # stale results vanish when the data change
    page.get_by_role("button", name="Load data set").click()
    expect(page.locator(".effdim-best")).not_to_contain_text("Best cardinality", timeout=TIMEOUT)
    expect(
        page.get_by_text(
            "The scores were cleared: the model, the data or the mapping changed; the last fit stays below, greyed"
        )
    ).to_be_visible()


def test_two_sessions_do_not_share_state(page: Page, app_url):
    other = page.context.new_page()
    open_app(page, app_url)
    open_app(other, app_url)
    apply_notation(page, "2:3,3")
    expect(stat(page, "ds")).to_have_text("9", timeout=TIMEOUT)
    open_app(other, app_url)  # the other page opened again: a new session, with the default model
    expect(other.locator(".effdim-notation textarea")).to_have_value(FIG2)
    expect(stat(other, "ds")).to_have_text("41")
    apply_notation(other, "3:2,2,2,2")
    expect(stat(other, "ds")).to_have_text("14", timeout=TIMEOUT)
    expect(stat(page, "ds")).to_have_text("9")
    other.close()
