"""The data demo (issue 60, item 9), walked end to end as a teacher clicks it: the bundled survey loaded, the sweep
run, BIC+'s pick's profile read, the residual map of one class fewer, the proposal it gives, applied; each step's
sentence agrees with what the page shows. Screenshots at 1366 and 1024 px, normal and projector mode, go to
tests/ui/screenshots/data-demo-*.png."""

from __future__ import annotations

import re

import pytest
from pages import TIMEOUT, open_app
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.browser

#: Two sweeps of four LC models on 1,202 rows, the first step's sweep on a loaded machine included.
SWEEP_TIMEOUT = 180_000


def test_the_data_demo_walks_a_survey_from_its_data_to_a_proposal(page: Page, app_url, shots):
    open_app(page, app_url)
    page.get_by_role("button", name="▶ Data demo").click()
    bar = page.locator(".effdim-data-demo-text")
    line = bar.locator(".effdim-demo-line")  # the sentence inside the pane's shadow root, for its text
    back, next_, end = (page.get_by_role("button", name=n, exact=True) for n in ("◀ Back", "Next ▶", "End demo"))
    expect(bar).to_contain_text("Data demo, step 1 of 5 · Data.", timeout=TIMEOUT)
    expect(bar).to_contain_text("Loaded the bundled survey 'gss82' (1,202 rows")
    expect(bar).to_contain_text("PURPOSE, ACCURACY, UNDERSTA, COOPERAT")
    expect(page.get_by_text("Loaded bundled data set 'gss82'")).to_be_visible()  # the data panel's own message
    expect(back).to_be_disabled()
    page.screenshot(path=str(shots / "data-demo-1-data.png"))

    next_.click()
    expect(bar).to_contain_text("step 2 of 5 · Sweep.", timeout=TIMEOUT)
    expect(bar).to_contain_text("Fitted LC models with 1 to 4 classes", timeout=SWEEP_TIMEOUT)
    picks = page.locator(".effdim-best .effdim-best-item")
    shown = {re.match(r"(\S+) (\d+)", t).groups() for t in picks.all_inner_texts()}  # the star row's picks
    said = set(re.findall(r"(\S+) (\d+)(?=[,.])", line.inner_text().split("pick: ")[1]))
    assert said == shown and len(shown) >= 6, (said, shown)
    pick = int(dict(shown)["BIC+"])
    page.screenshot(path=str(shots / "data-demo-2-sweep.png"))

    next_.click()
    expect(bar).to_contain_text("step 3 of 5 · Profile.", timeout=TIMEOUT)
    expect(bar).to_contain_text(f"The profile of BIC+'s pick, {pick} classes")
    choice = page.locator(".effdim-fit-choice select")
    expect(choice).to_have_value(re.compile(rf"\|X\| = {pick}: "))
    shares = re.findall(r"class (\d) \((\d+)%\)", line.inner_text())
    assert [c for c, _ in shares] == [str(k + 1) for k in range(pick)], shares
    assert abs(sum(int(s) for _, s in shares) - 100) <= pick, shares  # each rounded
    page.locator(".effdim-profile").scroll_into_view_if_needed()
    page.screenshot(path=str(shots / "data-demo-3-profile.png"))

    next_.click()
    expect(bar).to_contain_text("step 4 of 5 · Residuals.", timeout=TIMEOUT)
    fewer = pick - 1
    expect(bar).to_contain_text(f"The residual map of the model with {fewer} class")
    expect(choice).to_have_value(re.compile(rf"\|X\| = {fewer}: "))
    a, b, large, small = re.search(
        r"largest bivariate residual is (\d+\.\d), between (\w+) and (\w+).*same pair.s residual is (\d+\.\d)",
        line.inner_text(),
    ).group(2, 3, 1, 4)
    assert float(large) > float(small), (large, small)  # the extra class explains that pair
    page.locator(".effdim-bvr").scroll_into_view_if_needed()
    page.screenshot(path=str(shots / "data-demo-4-residuals.png"))

    next_.click()
    expect(bar).to_contain_text("step 5 of 5 · Proposal.", timeout=TIMEOUT)
    expect(bar).to_contain_text(f"Clicking the cell {a} × {b}")
    proposal = page.locator(".effdim-model-proposal")
    expect(proposal).to_contain_text(f"a new hidden node over {a} and {b}")
    expect(next_).to_be_disabled()
    page.locator(".effdim-model-proposal").scroll_into_view_if_needed()
    page.screenshot(path=str(shots / "data-demo-5-proposal.png"))
    proposed = re.search(r"Proposed: (\S+),", proposal.locator("p").inner_text()).group(1)
    page.get_by_role("button", name="Apply proposed model").click()
    expect(page.locator(".effdim-notation textarea")).to_have_value(proposed, timeout=TIMEOUT)

    back.click()  # the residuals again, on the sweep the proposal's Undo brings back
    expect(bar).to_contain_text("step 4 of 5 · Residuals.", timeout=TIMEOUT)
    end.click()
    expect(bar).to_be_hidden()


@pytest.mark.parametrize("width", [1366, 1024])
@pytest.mark.parametrize("projector", [0, 1])
def test_the_data_demos_first_step_on_a_class_screen(page: Page, app_url, shots, width, projector):
    """The start button fits the header beside the guided demo's, and the first step's bar is on screen."""
    page.set_viewport_size({"width": width, "height": 768})
    open_app(page, app_url + f"?projector={projector}")
    start = page.get_by_role("button", name="▶ Data demo")
    box, projector_button = start.bounding_box(), page.locator(".effdim-projector-toggle").bounding_box()
    assert box["y"] < 64 and projector_button["x"] + projector_button["width"] <= width, (box, projector_button)
    start.click()
    bar = page.locator(".effdim-data-demo-text")
    expect(bar).to_contain_text("Data demo, step 1 of 5 · Data.", timeout=TIMEOUT)
    bar_box = bar.bounding_box()
    assert bar_box["x"] + bar_box["width"] <= width and bar_box["y"] < 768, bar_box
    page.screenshot(path=str(shots / f"data-demo-{width}-{'projector' if projector else 'normal'}.png"))
