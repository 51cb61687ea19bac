"""Learn structure from the dashboard: a job with progress, the best tree drawn as it improves,
the result in the tree editor."""

from __future__ import annotations

import re
import time

import pytest
from conftest import served
from pages import TIMEOUT, data_tab, open_app, stat, sweep_stouffer_toby, upload
from playwright.sync_api import Page, expect

from effdim import parse_model
from effdim.distribution import random_parameters, sample
from effdim_app.config import ServerLimits

pytestmark = pytest.mark.browser

#: A known latent tree over 13 columns (binary and ternary): its first moves take the search a few seconds
#: on 1,000 rows, the whole search a minute or more.
TRUTH = "H1:3(H2:3(A:3,B:2,C:3,D:2),H3:3(E:3,F:2,G:3,I:2),H4:3(J:3,K:2,L:3,M:2),P:2)"
#: Seconds per computation on the test's server: the structure search of the second test then stops by its time
#: limit after 6 s (ScoresState.run_learn: the limit less 5 s); it improves its tree in the first 1.5 s of an idle
#: machine and not after, and the rest of its time was the test's largest cost. Its worker runs below the tests and
#: Chromium (effdim_app.jobs.WORKER_NICENESS): beside two study processes and a busy core it tried 28 candidates in
#: 10 s and accepted its first move (a relocation, same nodes elsewhere) after 4 s.
TIME_LIMIT = 11.0


@pytest.fixture(scope="module")
def app_url():
    """The dashboard with an 11 s limit per computation, so the structure search ends by its time limit in 6 s."""
    with served(ServerLimits(time_limit=TIME_LIMIT)) as url:
        yield url


# The nodes the live drawing (the Bokeh figure named "effdim-learned-tree") shows: [[node, kind, x, y, label], ...]
# (positions and labels too: a relocation or a new state redraws the same nodes elsewhere or relabelled).
LEARNED_NODES = """
() => {
  for (const doc of Bokeh.documents) {
    const fig = doc.get_model_by_name("effdim-learned-tree");
    if (!fig) continue;
    for (const r of fig.renderers) {
      const data = r.data_source.data;
      const get = (k) => (data instanceof Map ? data.get(k) : data[k]);
      if (get("kind"))
        return Array.from(get("node"), (n, i) => [n, get("kind")[i], get("x")[i], get("y")[i], get("label")[i]]);
    }
  }
  return null;
}
"""


def test_learn_structure_runs_as_a_job_opens_the_tree_in_the_editor_and_marks_the_fit_shown(page: Page, app_url, shots):
    """The learned tree replaces the model in the editor; the fitted view keeps the sweep's fit shown before,
    said to no longer match the model on screen (as after any model change, tests/ui/test_tabs_fit.py)."""
    open_app(page, app_url)
    expect(stat(page, "ds")).to_have_text("41")
    sweep_stouffer_toby(page, up_to=2)
    expect(page.locator(".effdim-fit-stats")).to_contain_text("df = dc − de", timeout=TIMEOUT)
    stale = page.get_by_text("This fit no longer matches the model on screen")
    expect(stale).to_have_count(0)
    page.get_by_role("button", name="Learn structure").click()
    status = page.locator(".effdim-status")
    expect(status).to_contain_text("Structure learned", timeout=TIMEOUT)
    page.screenshot(path=str(shots / "learn-structure.png"))
    expect(status).to_contain_text("now in the tree editor")
    expect(stale.last).to_be_visible(timeout=TIMEOUT)
    page.get_by_text("Model & dimensions", exact=True).click()
    notation = page.locator(".effdim-notation textarea")
    for column in ("A", "B", "C", "D"):  # the learned tree's leaves are the data's columns
        expect(notation).to_have_value(re.compile(rf"\b{column}:2\b"))
    expect(stat(page, "ds")).not_to_have_text("41")


def test_the_best_tree_is_drawn_while_the_search_runs_and_the_result_opens_in_the_editor(page: Page, app_url, shots):
    data = sample(random_parameters(parse_model(TRUTH), 7), 1000, 8)
    csv = data.to_frame().to_csv(index=False).encode()
    open_app(page, app_url)
    data_tab(page)
    upload(page, "latent-tree.csv", csv)
    expect(page.get_by_text("1,000 rows")).to_be_visible(timeout=TIMEOUT)
    page.get_by_role("button", name="Learn structure").click()
    status = page.locator(".effdim-status")
    drawn_while_running = []
    deadline = time.monotonic() + TIMEOUT / 1000
    while time.monotonic() < deadline:
        # the drawing first, then the status line: if the job still runs, it ran when the drawing was read
        nodes = page.evaluate(LEARNED_NODES)
        text = status.evaluate("el => (el.shadowRoot ?? el).textContent")  # Panel renders it in a shadow root
        if "Structure learned" in text:
            break
        if nodes and "running" in text and (not drawn_while_running or nodes != drawn_while_running[-1]):
            drawn_while_running.append(nodes)
            if len(drawn_while_running) == 1:
                page.screenshot(path=str(shots / "learn-structure-live.png"))
        time.sleep(0.1)
    expect(status).to_contain_text("Structure learned")
    assert drawn_while_running, "no tree was drawn while the search ran"
    hidden = [sum(kind == "hidden" for _, kind, *_ in nodes) for nodes in drawn_while_running]
    assert max(hidden) > 1, hidden
    assert len(drawn_while_running) > 1  # redrawn as the search improved the tree
    expect(page.locator(".effdim-learned")).to_contain_text("now in the tree editor")
    final = page.evaluate(LEARNED_NODES)
    page.screenshot(path=str(shots / "learn-structure-final.png"))
    page.get_by_text("Model & dimensions", exact=True).click()
    notation = page.locator(".effdim-notation textarea")
    expect(notation).to_have_value(re.compile(r"\bA:3\b"))
    in_editor = parse_model(notation.input_value())
    # the final drawing is the tree now in the editor, its leaves the data's columns
    assert sorted((node, kind) for node, kind, *_ in final) == sorted(
        (n, "hidden" if in_editor.is_hidden(n) else "observed") for n in in_editor.nodes
    )
    assert set(in_editor.observed) == set(data.columns)
