"""No request leaves the server: the served page and the notebook (inline) form load with every
request to another host refused, and none was attempted (no web font, no CDN)."""

import pytest
from jupyterlab_session import refuse_other_hosts
from pages import console_errors, open_app
from playwright.sync_api import Page

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("form", ["app_url", "inline_url"])
def test_no_request_leaves_the_server(page: Page, form, request):
    refused = []
    refuse_other_hosts(page, refused)
    errors = console_errors(page)
    open_app(page, request.getfixturevalue(form))
    page.get_by_text("Data & scores", exact=True).click()  # the tabs built on first opening load too
    page.get_by_text("Experiments", exact=True).click()
    page.wait_for_load_state("networkidle")
    assert refused == []
    assert errors == []
    font = page.evaluate("() => getComputedStyle(document.body).fontFamily")
    assert "Open Sans" not in font
