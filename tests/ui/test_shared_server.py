"""Two students on one server: page A's huge and heavy inputs never delay page B's edits.

Page A applies ``3:1000000000,2`` (once killed the server), ``61:50,50,50``
(once blocked it for 87 s), a heavy model whose exact de runs as a job, and
a JSON file of a 2,001-node model; after each, page B changes a cardinality
and must see its new ds within 2 s. A always shows a clear message and
keeps a valid model.
"""

from __future__ import annotations

import json
import time

import numpy as np
import pytest
from conftest import VIEWPORT
from pages import TIMEOUT, apply_notation, console_errors, data_tab, model_tab, open_app, stat, upload
from playwright.sync_api import Page, expect

from effdim import HLCModel, model_to_json, parse_model
from effdim.bounds import standard_dimension
from effdim_app.views.widgets import compact

pytestmark = [pytest.mark.browser, pytest.mark.exclusive]  # bounds on seconds

FIG2 = parse_model("5(3(2,2),2,3(2,2))")


def edit_root(page: Page, card: int) -> float:
    """Set |H1| (selected at start) on page B; seconds until its new ds is on screen (at most 2)."""
    box = page.locator(".effdim-card-input input")
    box.fill(str(card))
    start = time.perf_counter()
    box.press("Enter")
    expect(stat(page, "ds")).to_have_text(str(standard_dimension(FIG2.with_card("H1", card))), timeout=2000)
    return time.perf_counter() - start


@pytest.fixture
def students(browser):
    """Two students' pages, each in a browser context of its own (a first visit: nothing cached), closed after
    the test."""
    contexts = [browser.new_context(viewport=VIEWPORT) for _ in range(2)]
    yield [context.new_page() for context in contexts]
    for context in contexts:
        context.close()


def test_one_student_cannot_stall_or_kill_another(students, app_url, tmp_path, shots):
    a, b = students
    errors = console_errors(a, warnings=True)  # what page A's console said went wrong, for the failure below
    a.on("pageerror", lambda error: errors.append(str(error)))
    open_app(a, app_url)
    open_app(b, app_url)
    waits = [edit_root(b, 4)]

    apply_notation(a, "3:1000000000,2")
    expect(a.locator(".effdim-de-note")).to_contain_text("de was not computed", timeout=TIMEOUT)
    expect(a.locator(".effdim-de-note")).to_contain_text("more than one computation may use on this server")
    expect(stat(a, "ds")).to_have_text(compact(2_000_000_001))  # the closed forms of its regular equivalent
    expect(stat(a, "de")).to_have_text("—")
    waits.append(edit_root(b, 3))

    apply_notation(a, "61:50,50,50")
    expect(a.locator(".effdim-de-note")).to_contain_text("de was not computed", timeout=TIMEOUT)
    expect(stat(a, "ds")).to_have_text("9027")
    waits.append(edit_root(b, 2))

    apply_notation(a, "40:30,30,30,30")  # heavy: its exact de is computed in a worker process
    expect(a.locator(".effdim-de_job")).to_contain_text("Exact de:", timeout=TIMEOUT)
    expect(stat(a, "ds")).to_have_text(str(standard_dimension(parse_model("40:30,30,30,30"))))
    waits.append(edit_root(b, 5))
    waits.append(edit_root(b, 3))
    a.screenshot(path=str(shots / "20-shared-server-job.png"))
    a.locator(".effdim-de_job-cancel button").click()
    try:
        expect(a.locator(".effdim-de-note")).to_contain_text("cancelled", timeout=TIMEOUT)
    except AssertionError as failure:  # twice in about 90 runs (not understood yet): keep what the page showed
        a.screenshot(path=str(shots / "20-shared-server-cancel-failed.png"))
        shown = {"de": stat(a, "de").inner_text(), "job line": a.locator(".effdim-de_job").all_inner_texts()}
        apply_notation(a, "3:2,2,2,2")  # does the page still get the server's updates?
        try:
            expect(stat(a, "ds")).to_have_text("14", timeout=10_000)
            answers = "yes"
        except AssertionError:
            answers = "no"
        raise AssertionError(
            f"Cancel left no note; the page showed {shown}; its console: {errors}; a later edit reached it: {answers}"
        ) from failure

    huge = tmp_path / "huge.json"
    huge.write_text(json.dumps(model_to_json(HLCModel.lc(3, [2] * 2000))))
    a.locator("input[type=file]").set_input_files(str(huge))
    expect(a.get_by_text("JSON import refused").first).to_be_visible(timeout=TIMEOUT)
    expect(a.get_by_text("at most 200 nodes").first).to_be_visible()
    expect(a.locator(".effdim-notation textarea")).to_have_value("40:30,30,30,30")  # A keeps its valid model
    waits.append(edit_root(b, 4))
    a.screenshot(path=str(shots / "21-shared-server-refused.png"))
    assert max(waits) < 2.0, waits


def ten_binary_columns(rows: int = 2000) -> bytes:
    """A CSV of ten binary items: a sweep with 'to' = 0 runs until |X| reaches de = dc = 1,023."""
    rng = np.random.default_rng(5)
    cells = rng.integers(0, 2, size=(rows, 10))
    return ("\n".join([",".join(f"Q{i}" for i in range(10))] + [",".join(map(str, r)) for r in cells]) + "\n").encode()


def wide_csv(columns: int = 22_000) -> bytes:
    """231 kB with 22,000 columns: once read on the server's loop (31 s of another student's edit)."""
    return (
        ",".join(f"c{i}" for i in range(columns))
        + "\n"
        + "\n".join(",".join("01"[(i + r) % 2] for i in range(columns)) for r in range(2))
        + "\n"
    ).encode()


def test_another_students_edit_round_trips_within_a_second_during_each_heavy_action(students, app_url):
    """Page A uploads a wide CSV, sweeps ten binary columns with 'to' = 0, learns a structure and applies a
    huge notation; during each, page B's edit must be on screen within about a second."""
    a, b = students
    open_app(a, app_url)
    open_app(b, app_url)
    edit_root(b, 4)  # warm
    waits = {}
    data_tab(a)

    upload(a, "wide.csv", wide_csv())
    waits["wide upload"] = [edit_root(b, 3), edit_root(b, 5)]
    expect(a.locator(".effdim-message").first).to_contain_text("more than the limit of 2,000", timeout=TIMEOUT)

    upload(a, "ten.csv", ten_binary_columns())
    expect(a.get_by_text("2,000 rows")).to_be_visible(timeout=TIMEOUT)
    a.get_by_role("button", name="▶ Sweep cardinality").click()  # 'to' left at 0
    status = a.locator(".effdim-status")
    expect(status).to_contain_text("running", timeout=TIMEOUT)
    waits["sweep to saturation"] = [edit_root(b, 2), edit_root(b, 4)]
    expect(status).to_contain_text("running")  # B's edits were made while the sweep ran
    a.get_by_role("button", name="■ Cancel").click()
    expect(status).to_contain_text("cancelled", timeout=TIMEOUT)

    a.get_by_role("button", name="Learn structure").click()
    expect(status).to_contain_text("running", timeout=TIMEOUT)
    waits["learn structure"] = [edit_root(b, 3), edit_root(b, 5)]
    expect(status).to_contain_text("running")
    a.get_by_role("button", name="■ Cancel").click()
    expect(status).to_contain_text("cancelled", timeout=TIMEOUT)

    model_tab(a)
    apply_notation(a, "3:" + ",".join(["2"] * 10_000))  # past the notation limit: refused for its length
    expect(a.locator(".effdim-message").first).to_contain_text("longer than", timeout=TIMEOUT)
    waits["huge notation"] = [edit_root(b, 2)]
    apply_notation(a, "9:" + ",".join(["3"] * 198))  # 199 leaves, the most a model may have here
    waits["largest model"] = [edit_root(b, 4), edit_root(b, 3)]
    expect(stat(a, "ds")).to_have_text(
        str(standard_dimension(parse_model("9:" + ",".join(["3"] * 198)))), timeout=TIMEOUT
    )
    slowest = {what: max(times) for what, times in waits.items()}
    print("another student's edit during each heavy action (s):", {k: round(v, 2) for k, v in slowest.items()})
    # 0.3-1.0 s each with the machine's load at 14 on 2 cores (Chromium's two pages compete for them);
    # a sweep with 'to' = 0 and a 22,000-column upload once held every session for 20-30 s
    assert max(slowest.values()) < 1.5, slowest
