"""Issue 9's defects, each seen in headless Chromium (see tests/ui/test_dashboard.py for the helpers)."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from pages import FIG2, TIMEOUT, apply_notation, click_node, open_app, stat

pytestmark = pytest.mark.browser


def message(page: Page):
    return page.locator(".effdim-message").first


@pytest.mark.parametrize("typed", ["0", "-2", "1001", "two"])
def test_states_box_refuses_bad_values_visibly_and_resets(page: Page, app_url, typed):
    open_app(page, app_url)
    click_node(page, FIG2, "O3")
    expect(page.locator(".effdim-sel")).to_contain_text("Selected: O3")
    box = page.locator(".effdim-card-input input")
    box.fill(typed)
    box.press("Enter")
    expect(message(page)).to_contain_text(f"Set |O3| = {typed} refused", timeout=TIMEOUT)
    expect(box).to_have_value("2")  # the box shows the node's states again, not the refused value
    expect(stat(page, "ds")).to_have_text("41")
    expect(page.locator(".effdim-notation textarea")).to_have_value(FIG2)


def test_states_set_button_applies_without_enter(page: Page, app_url):
    """JupyterLab can swallow Enter in outputs: the Set button does the same."""
    open_app(page, app_url)
    click_node(page, FIG2, "O3")
    expect(page.locator(".effdim-sel")).to_contain_text("Selected: O3")
    page.locator(".effdim-card-input input").fill("3")
    page.get_by_role("button", name="Set", exact=True).click()
    expect(page.locator(".effdim-notation textarea")).to_have_value("5(3(2,2),3,3(2,2))", timeout=TIMEOUT)


def test_messages_are_plain_text_underscores_kept(page: Page, app_url):
    open_app(page, app_url)
    click_node(page, FIG2, "O3")
    expect(page.locator(".effdim-sel")).to_contain_text("Selected: O3")
    name = page.locator(".effdim-name-input input")
    name.fill("my_new_*name*")
    page.get_by_role("button", name="Rename").click()
    expect(message(page)).to_contain_text("'my_new_*name*'", timeout=TIMEOUT)
    apply_notation(page, "3(2,2")  # the engine's refusal, shown as written
    expect(message(page)).to_contain_text("Model from notation refused", timeout=TIMEOUT)
    assert message(page).locator("em, strong, code").count() == 0
