"""The sweep's "Class enumeration" card in headless Chromium: a researcher's survey (tests/questionnaire.py)
swept over 1-4 classes, its table as a paper prints it, the bootstrap LRT run on the server's workers with
progress, the CSV and LaTeX downloads, and the table in the report.

Screenshots at 1366 and 1024 px go to tests/ui/screenshots/enumeration-*.png."""

from __future__ import annotations

import csv

import pytest
from pages import TIMEOUT, data_tab, open_app, sweep, upload
from playwright.sync_api import Page, expect
from questionnaire import survey_csv

from effdim.enumeration import COLUMNS

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("width", [1366, 1024])
def test_the_class_enumeration_table_its_blrt_and_its_exports(page: Page, app_url, shots, width, tmp_path):
    page.set_viewport_size({"width": width, "height": 768})
    open_app(page, app_url)
    data_tab(page)
    upload(page, "staff-survey.csv", survey_csv())
    expect(page.get_by_text("800 rows")).to_be_visible(timeout=TIMEOUT)
    sweep(page, 4)
    card = page.locator(".effdim-enumeration-card")
    rows = card.locator("table.enumeration tbody tr")
    expect(rows).to_have_count(4, timeout=TIMEOUT)
    headers = card.locator("table.enumeration th").all_text_contents()
    assert headers == [c.label for c in COLUMNS]
    expect(card).to_contain_text("Picks: BIC 3")  # the survey's three classes
    assert rows.nth(2).locator("td").first.text_content() == "3"
    card.scroll_into_view_if_needed()
    page.screenshot(path=str(shots / f"enumeration-{width}.png"))
    edges = page.evaluate("() => document.documentElement.scrollWidth")
    assert edges <= width, f"the page scrolls sideways: {edges} px at {width}"
    if width != 1366:
        return

    blrt = COLUMNS.index(next(c for c in COLUMNS if c.key == "blrt_p"))
    assert rows.nth(1).locator("td").nth(blrt).text_content() == ""
    replicates = card.locator(".effdim-blrt-b input")
    replicates.fill("5")
    replicates.press("Enter")
    card.locator(".effdim-blrt-run button").click()
    expect(card.locator(".effdim-blrt-status")).to_contain_text("Bootstrap LRT", timeout=TIMEOUT)
    expect(card.locator(".effdim-blrt-status")).to_contain_text("with the bootstrap LRT (B = 5)", timeout=3 * TIMEOUT)
    for row in (1, 2, 3):
        assert float(rows.nth(row).locator("td").nth(blrt).text_content()) >= 1 / 6
    expect(card).to_contain_text("BLRT with B = 5 replicates")

    with page.expect_download(timeout=TIMEOUT) as download:
        card.locator(".effdim-enum-csv button").click()
    saved = tmp_path / "table.csv"
    download.value.save_as(saved)
    table = list(csv.DictReader(saved.read_text(encoding="utf-8").splitlines()))
    assert [r["k"] for r in table] == ["1", "2", "3", "4"] and table[0]["blrt_p"] == "" and table[1]["blrt_p"]
    with page.expect_download(timeout=TIMEOUT) as download:
        card.locator(".effdim-enum-tex button").click()
    download.value.save_as(tmp_path / "table.tex")
    assert "BLRT $p$" in (tmp_path / "table.tex").read_text(encoding="utf-8")

    with page.expect_download(timeout=TIMEOUT) as download:
        page.get_by_role("button", name="Download report (HTML)").click()
    download.value.save_as(tmp_path / "report.html")
    report = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert '<section id="enumeration"' in report and "BLRT with B = 5 replicates" in report
