"""Inputs past a limit get a message saying which limit, in the notation box's message area or the data's."""

from __future__ import annotations

from urllib.parse import quote

import pytest
from pages import TIMEOUT, apply_notation, data_tab, open_app, stat, upload
from playwright.sync_api import Page, expect

from effdim_app.config import ServerLimits

pytestmark = pytest.mark.browser


def message(page: Page):
    return page.locator(".effdim-message").first


DEEP = "2(" * 1000 + "2" + ")" * 1000


def test_a_notation_too_long_or_nested_a_thousand_deep_is_refused_and_a_utf16_upload_is_read_each_in_its_message_area(
    page: Page, app_url
):
    limit = ServerLimits().notation_chars
    open_app(page, app_url)
    apply_notation(page, "3:" + ",".join(["2"] * 10_000))  # 20,001 characters
    expect(message(page)).to_contain_text(f"the notation is longer than {limit:,} characters", timeout=TIMEOUT)
    expect(message(page)).not_to_contain_text("position")
    apply_notation(page, DEEP)
    expect(message(page)).to_contain_text("nested more than 200 levels deep", timeout=TIMEOUT)
    expect(stat(page, "ds")).to_have_text("41")  # the model in use stays
    # the Data tab's message area: a UTF-16 file is read and says so
    data_tab(page)
    upload(page, "utf16.csv", "rating,région\ntrès bien,nord\nbien,sud\nmal,nord\n".encode("utf-16"))
    # read by a job: on the shared test server it may wait for one of the two workers, each freed within a
    # computation's 60 s limit (a fresh-clone run once timed out at 60 s with a session of an earlier test alive)
    expect(message(page)).to_contain_text("Loaded upload 'utf16.csv'", timeout=2 * TIMEOUT)
    expect(message(page)).to_contain_text("UTF-16")


def test_a_link_with_a_deeply_nested_model_opens_the_page_with_the_message(page: Page, app_url):
    open_app(page, f"{app_url}?model={quote(DEEP)}")  # the page, its tree and table drawn: not blank
    expect(message(page)).to_contain_text("nested more than 200 levels deep", timeout=TIMEOUT)
    # the link's text stays in the notation box, so it can be mended in place (the model on screen is unchanged)
    expect(page.locator(".effdim-notation textarea")).to_have_value(DEEP)
