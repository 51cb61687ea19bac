"""Learn structure from the dashboard (issue 11): a job with progress, the result in the tree editor."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from pages import DATA, TIMEOUT, data_tab, open_app, stat, upload

pytestmark = pytest.mark.browser


def test_learn_structure_runs_as_a_job_and_opens_the_tree_in_the_editor(page: Page, app_url, shots):
    open_app(page, app_url)
    expect(stat(page, "ds")).to_have_text("41")
    data_tab(page)
    upload(page, "stouffer-toby.csv", DATA.read_bytes())
    expect(page.get_by_text("216 rows")).to_be_visible(timeout=TIMEOUT)
    page.get_by_role("button", name="Learn structure").click()
    status = page.locator(".effdim-status")
    expect(status).to_contain_text("Structure learned", timeout=TIMEOUT)
    page.screenshot(path=str(shots / "learn-structure.png"))
    expect(status).to_contain_text("now in the tree editor")
    page.get_by_text("Model & dimensions", exact=True).click()
    notation = page.locator(".effdim-notation textarea")
    for column in ("A", "B", "C", "D"):  # the learned tree's leaves are the data's columns
        expect(notation).to_have_value(re.compile(rf"\b{column}:2\b"))
    expect(stat(page, "ds")).not_to_have_text("41")
