"""Keyboard shortcuts in the browser: Enter applies the notation, Ctrl+Z / Ctrl+Y undo and redo."""

from __future__ import annotations

import pytest
from pages import TIMEOUT, open_app, stat
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.browser


def test_enter_applies_notation_and_ctrl_z_y_undo_redo(page: Page, app_url):
    open_app(page, app_url)
    expect(stat(page, "ds")).to_have_text("41")
    box = page.locator(".effdim-notation textarea")
    box.fill("3:2,2,2,2")
    box.press("Enter")  # applies; no new line
    expect(stat(page, "ds")).to_have_text("14", timeout=TIMEOUT)
    expect(box).to_have_value("3:2,2,2,2")
    box.press("Shift+Enter")  # a line break, nothing applied
    expect(box).to_have_value("3:2,2,2,2\n")
    # inside the text box Ctrl+Z is the browser's own text undo, not the model's
    box.press("Control+z")
    expect(stat(page, "ds")).to_have_text("14")
    page.locator("body").click(position={"x": 5, "y": 5})  # focus outside any text box
    page.keyboard.press("Control+z")
    expect(stat(page, "ds")).to_have_text("41", timeout=TIMEOUT)
    page.keyboard.press("Control+y")
    expect(stat(page, "ds")).to_have_text("14", timeout=TIMEOUT)
    page.keyboard.press("Control+Shift+Z")  # nothing left to redo: unchanged
    page.keyboard.press("Control+z")
    expect(stat(page, "ds")).to_have_text("41", timeout=TIMEOUT)
