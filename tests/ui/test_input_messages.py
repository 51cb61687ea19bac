"""Inputs past a limit get a message saying which limit, in the notation box's message area or the data's."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from effdim_app.config import ServerLimits

from pages import TIMEOUT, apply_notation, open_app

pytestmark = pytest.mark.browser


def message(page: Page):
    return page.locator(".effdim-message").first


def test_a_notation_longer_than_the_box_takes_gets_a_length_message(page: Page, app_url):
    limit = ServerLimits().notation_chars
    open_app(page, app_url)
    apply_notation(page, "3:" + ",".join(["2"] * 10_000))  # 20,001 characters
    expect(message(page)).to_contain_text(f"the notation is longer than {limit:,} characters", timeout=TIMEOUT)
    expect(message(page)).not_to_contain_text("position")
