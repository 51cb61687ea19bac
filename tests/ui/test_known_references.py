"""A served session sends the server no model it already knows (Bokeh's ``reference already known``).

BokehJS counted the models a server patch brought as new until the browser
sent a patch of its own, so a model's first event after arriving carried the
whole model (effdim_app/compat.py, ``SERVER_MODELS_KNOWN_JS``): the file
dropper the Data tab puts in place of the previous one, uploading, did so on
every second upload.
"""

from __future__ import annotations

import warnings

import pytest
from bokeh.util.warnings import BokehUserWarning
from pages import FIG2, TIMEOUT, apply_notation, click_node, data_tab, open_app, stat, upload
from playwright.sync_api import Page, expect

from effdim_app.state import ModelState

pytestmark = pytest.mark.browser
EDITED = "4(3(2,2),2,3(2,2))"


def test_edits_and_uploads_send_no_known_model_again(page: Page, app_url):
    with warnings.catch_warnings(record=True) as seen:  # the served session runs in this process
        warnings.simplefilter("always", BokehUserWarning)
        open_app(page, app_url)
        click_node(page, FIG2, "H2")
        expect(page.locator(".effdim-sel")).to_contain_text("Selected: H2", timeout=TIMEOUT)
        apply_notation(page, EDITED)
        expect(stat(page, "ds")).to_have_text(str(ModelState(EDITED).report.ds), timeout=TIMEOUT)
        data_tab(page)
        upload(page, "ragged.csv", b"A,B,C\n1,2,3\n1,2\n")
        expect(page.get_by_text("line 3 has 2 fields")).to_be_visible(timeout=TIMEOUT)
        upload(page, "ok.csv", b"freq,rating\nsometimes,10 Not at all\nnever,2 Very well\n")
        expect(page.get_by_text("Loaded upload 'ok.csv'")).to_be_visible(timeout=TIMEOUT)
        upload(page, "again.csv", b"a,b\nx,y\ny,x\n")
        expect(page.get_by_text("Loaded upload 'again.csv'")).to_be_visible(timeout=TIMEOUT)
    known = [str(w.message) for w in seen if "reference already known" in str(w.message)]
    assert not known, known
