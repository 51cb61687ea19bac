"""An SPSS survey (tests/questionnaire.py: short variable names, the questions as variable labels) after a sweep:
the data panel's table shows each column's name with its question whole (wrapped, not cut at the cell's edge),
and the profile panels side by side share their baseline though one question takes two lines of title."""

from __future__ import annotations

import pytest
from pages import DEEP, POLL, TIMEOUT, data_tab, open_app
from playwright.sync_api import Page, expect
from questionnaire import ITEMS, survey_sav

pytestmark = pytest.mark.browser

# Each cell of the columns table's "column" field: its text, the width it needs and the width it has.
COLUMN_CELLS = f"""() => {{ {DEEP}
  return deep(".tabulator-cell[tabulator-field='column']").filter((c) => c.offsetParent)
    .map((c) => [c.innerText, c.scrollWidth, c.clientWidth]);
}}"""
# [top, bottom] of every profile panel on screen.
PANEL_BOXES = f"""() => {{ {DEEP}
  return deep('.effdim-panels svg').map((s) => {{ const r = s.getBoundingClientRect(); return [r.top, r.bottom]; }});
}}"""


def test_an_spss_surveys_questions_are_whole_in_the_table_and_its_panels_share_a_baseline(page: Page, app_url):
    open_app(page, app_url)
    data_tab(page)
    page.locator("input.filepond--browser").set_input_files(
        {"name": "survey.sav", "mimeType": "application/octet-stream", "buffer": survey_sav()}
    )
    expect(page.get_by_text("800 rows").first).to_be_visible(timeout=TIMEOUT)
    page.wait_for_function(f"() => ({COLUMN_CELLS})().length >= 2", timeout=TIMEOUT, polling=POLL)
    cells = page.evaluate(COLUMN_CELLS)
    first = " ".join(cells[0][0].split())
    assert first == f"{next(iter(ITEMS))}: {next(iter(ITEMS.values()))}", cells[0]
    assert [c for c in cells if c[1] > c[2] + 1] == [], cells
    to = page.locator(".effdim-card-max input")
    to.fill("3")
    to.press("Enter")
    page.get_by_role("button", name="▶ Sweep cardinality").click()
    expect(page.locator(".effdim-fit-stats")).to_contain_text("G²", timeout=TIMEOUT)
    page.wait_for_function(f"() => ({PANEL_BOXES})().length === {len(ITEMS)}", timeout=TIMEOUT, polling=POLL)
    boxes = page.evaluate(PANEL_BOXES)
    rows: list[list] = []
    for top, bottom in boxes:  # panels whose heights overlap stand in one row
        row = next((r for r in rows if top < r[0][1] and bottom > r[0][0]), None)
        (row.append if row is not None else lambda b: rows.append([b]))((top, bottom))
    assert any(len(row) > 1 for row in rows), boxes
    assert any(len({round(b - t) for t, b in row}) > 1 for row in rows), ("no title of two lines beside one", boxes)
    for row in rows:
        assert max(b for _, b in row) - min(b for _, b in row) <= 1, row
