"""Uploads of survey files other than CSV: an SPSS file's value labels become the category labels shown."""

import pandas as pd
import pyreadstat
import pytest
from pages import TIMEOUT, data_tab, open_app
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.browser


def test_an_spss_upload_shows_its_value_labels_as_categories(page: Page, app_url, tmp_path):
    path = tmp_path / "survey.sav"
    frame = pd.DataFrame({"smoker": [1, 2, 1, 2, 1, 1], "opinion": [1, 1, 2, 2, 3, 1]})
    pyreadstat.write_sav(
        frame,
        str(path),
        variable_value_labels={"smoker": {1: "yes", 2: "no"}, "opinion": {1: "agree", 2: "neutral", 3: "disagree"}},
    )
    open_app(page, app_url)
    data_tab(page)
    dropper = page.locator("input.filepond--browser")
    assert ".sav" in dropper.get_attribute("accept").split(",")  # the file chooser offers it
    dropper.set_input_files({"name": "survey.sav", "mimeType": "application/octet-stream", "buffer": path.read_bytes()})
    expect(page.get_by_text("6 rows")).to_be_visible(timeout=TIMEOUT)
    columns = page.locator(".tabulator").filter(has_text="opinion").first  # the data's columns and their values
    for label in ("yes", "no", "agree", "neutral", "disagree"):
        expect(columns).to_contain_text(label, timeout=TIMEOUT)
