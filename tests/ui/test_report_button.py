"""The dashboard's report button: the HTML report of the analysis on screen (effdim.report), written in a
worker, with the uploaded file's name, the model, the sweep, the fit shown and the command that reproduces it."""

import pytest
from pages import TIMEOUT
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.browser


def test_report_button_downloads_the_analysis_on_screen(stouffer_toby_swept: Page, tmp_path):
    page = stouffer_toby_swept
    stats = page.locator(".effdim-fit-stats")
    expect(stats).to_contain_text("2.7199", timeout=TIMEOUT)  # the 2-class fit, BIC+'s pick
    with page.expect_download(timeout=TIMEOUT) as download:
        page.get_by_role("button", name="Download report (HTML)").click()
    saved = tmp_path / "report.html"
    download.value.save_as(saved)
    assert download.value.suggested_filename == "effdim-report.html"
    text = saved.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>")
    assert "stouffer-toby.csv" in text  # the uploaded file
    assert "X:2(A:2,B:2,C:2,D:2)" in text  # the fit shown
    assert "<h2>Sweep</h2>" in text and "|X| = 1" in text and "|X| = 3" in text  # the sweep, every cardinality
    assert "the BIC+ pick, detailed below" in text
    assert "2.7199" in text  # the fit's G2
    # the command that writes this report again, the file named as uploaded, the sweep's settings
    assert "effdim sweep stouffer-toby.csv --max-card 3 --restarts 5 --seed 0 --cs-prior" in text
    assert "--pick bic+ --report effdim-report.html" in text
