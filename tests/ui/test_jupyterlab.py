"""The example notebook in real JupyterLab with every request off this machine refused.

Run All, then: no cell shows an error, the first prints Figure 2's
dimensions, no output names Bokeh's CDN, the dashboard shows the last
cell's model with the tree in step with the numbers, fits a 934 px output (JupyterLab at 1366 px with the
file browser open) without blank space below it, Enter in the States box
applies, and a sweep of a bundled data set runs as a job and shows its curves. The screenshot of the cell
goes to ``tests/ui/screenshots/dashboard-jupyterlab.png`` (the one in
``docs/`` is a copy).
"""

from __future__ import annotations

import pytest
from jupyterlab_session import KERNEL_IDLE, refuse_other_hosts
from pages import (
    CURVE_POINTS,
    DEEP,
    FIG2,
    FILEPOND_LOUD,
    POLL,
    QUIET_FILEPOND_JOINED,
    TIMEOUT,
    click_node,
    console_errors,
    data_tab,
    load_bundled_data,
    stat,
    sweep,
)
from playwright.sync_api import Page, expect

from effdim import parse_model
from effdim_app.state import ModelState

pytestmark = pytest.mark.browser

#: Width of a notebook output in JupyterLab 4 at 1366 px with the file browser open.
OUTPUT_WIDTH = 934
#: A 1366 px wide screen, tall enough for the whole dashboard.
LAB_VIEWPORT = {"width": 1366, "height": 1400}
#: Blank space allowed below the dashboard's lowest drawn element, inside its output.
BLANK_BELOW = 60


# Labels of the tree as BokehJS draws it (the figure named "effdim-tree").
TREE_LABELS = """
() => {
  const views = [];
  const walk = (v) => { views.push(v); for (const c of (v.child_views || [])) walk(c); };
  for (const root of Bokeh.index.roots ?? Object.values(Bokeh.index)) walk(root);
  const plot = views.find((v) => v.model && v.model.name === "effdim-tree");
  const source = plot.model.renderers.map((r) => r.data_source).find((s) => s.data.label !== undefined);
  return [...source.data.label];
}
"""

# Bottom of the lowest drawn element (a leaf with a size) inside `el`, shadow roots included.
LOWEST_DRAWN = """
(el) => {
  let lowest = el.getBoundingClientRect().top;
  const walk = (node) => {
    const children = [...node.children, ...(node.shadowRoot ? node.shadowRoot.children : [])];
    const box = node.getBoundingClientRect();
    if (!children.length && box.height > 0 && box.width > 0 && getComputedStyle(node).visibility !== "hidden") {
      lowest = Math.max(lowest, box.bottom);
    }
    children.forEach(walk);
  };
  walk(el);
  return lowest;
}
"""

# Type `text` into the notation box and click "Apply notation" in one task: one comm message.
TYPE_AND_APPLY = f"""
(text) => {{
  {DEEP}
  const box = deep("textarea", ".effdim-notation")[0];
  box.value = text;
  box.dispatchEvent(new Event("input", {{bubbles: true, composed: true}}));
  deep("button").find((b) => b.textContent.trim() === "Apply notation").click();
}}
"""


def notebook_state() -> ModelState:
    """The dashboard's state after the example notebook's last cell, computed here."""
    state = ModelState(FIG2)
    state.select("H2")
    state.set_card(2)
    return state


@pytest.fixture
def offline_page(warm_browser):
    """A page whose requests to any host but this machine are refused (routed, it loads nothing from the browser's
    cache), and the list of those refused; closed after the test (JupyterLab polls its server for as long as its
    page is open)."""
    page, refused = warm_browser.new_page(), []
    page.set_viewport_size(LAB_VIEWPORT)
    refuse_other_hosts(page, refused)
    yield page, refused
    page.close()


def test_example_notebook_offline_in_jupyterlab(offline_page: tuple[Page, list[str]], jupyterlab_url, shots):
    page, refused = offline_page
    errors = console_errors(page)
    page.goto(jupyterlab_url)
    page.wait_for_function(KERNEL_IDLE, timeout=TIMEOUT, polling=POLL)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")

    expected = notebook_state()
    expect(stat(page, "ds")).to_have_text(str(expected.report.ds), timeout=TIMEOUT)
    expect(stat(page, "de")).to_have_text(str(expected.report.de))
    page.wait_for_function(KERNEL_IDLE, timeout=TIMEOUT, polling=POLL)
    # every cell ran without an error (JupyterLab shows a traceback as the stderr type), the first printed the
    # dimensions of Figure 2
    expect(page.locator('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]')).to_have_count(0)
    expect(page.locator(".jp-OutputArea-output").filter(has_text="ds = 41, de = 23").first).to_be_visible()
    # BokehJS is in the outputs themselves (a classroom may have no internet): none even names Bokeh's CDN
    outputs = "() => [...document.querySelectorAll('.jp-OutputArea-output')].map((o) => o.innerHTML).join()"
    assert "cdn.bokeh.org" not in page.evaluate(outputs)
    expect(page.locator(".effdim-notation textarea")).to_have_value(expected.notation)
    # the Run All race: the tree showed the model before the last cell's edit
    page.wait_for_function(
        f"() => ({TREE_LABELS})().join() === {','.join(expected.drawing()['nodes']['label'])!r}",
        timeout=TIMEOUT,
        polling=POLL,
    )

    output = page.locator(".jp-OutputArea-output").filter(has=stat(page, "ds"))
    output.scroll_into_view_if_needed()
    width, scroll_width = output.evaluate("(el) => [el.clientWidth, el.scrollWidth]")
    assert abs(width - OUTPUT_WIDTH) <= 10, f"output {width} px wide, not JupyterLab's {OUTPUT_WIDTH}"
    assert scroll_width <= width, f"dashboard {scroll_width} px wide overflows its {width} px output"
    card = page.locator(".effdim-card").bounding_box()
    box = output.bounding_box()
    assert card["x"] + card["width"] <= box["x"] + box["width"], "Selected-node card cut off"
    blank = box["y"] + box["height"] - output.evaluate(LOWEST_DRAWN)
    assert blank <= BLANK_BELOW, f"{blank:.0f} px blank below the dashboard"
    page.locator(".jp-Cell").filter(has=output).evaluate("(el) => el.scrollIntoView({block: 'start'})")
    box = output.bounding_box()
    page.screenshot(
        path=shots / "dashboard-jupyterlab.png",
        clip={"x": 0, "y": 0, "width": LAB_VIEWPORT["width"], "height": box["y"] + box["height"] + 8},
    )

    # Enter in the States box applies (JupyterLab must not swallow it)
    click_node(page, expected.notation, "O3")
    expect(page.locator(".effdim-sel")).to_contain_text("Selected: O3", timeout=TIMEOUT)
    states = page.locator(".effdim-card-input input")
    states.fill("3")
    states.press("Enter")
    expected.select("O3")
    expected.set_card(3)
    expect(page.locator(".effdim-notation textarea")).to_have_value(expected.notation, timeout=TIMEOUT)
    expect(stat(page, "ds")).to_have_text(str(expected.report.ds))

    # "Apply notation" clicked in the same instant as the typing applies what was typed: the typed
    # text and the click reach the kernel in one message, and Panel runs the click first
    # (effdim_app/views/widgets.py)
    typed = "H1:4(O1:2,O2:2,H2:3(O3:2,O4:2,O5:2),O6:3)"
    page.evaluate(TYPE_AND_APPLY, typed)
    applied = ModelState(parse_model(typed))
    expect(page.locator(".effdim-notation textarea")).to_have_value(applied.notation, timeout=TIMEOUT)
    expect(stat(page, "ds")).to_have_text(str(applied.report.ds))

    # a job from the notebook's kernel: the bundled data set loaded, a sweep in a worker process, its end shown
    # (one comm message, effdim_app/views/widgets.py: one_message) with the curves drawn
    data_tab(page)
    load_bundled_data(page)
    sweep(page, up_to=3)
    expect(page.locator(".effdim-status")).to_contain_text("Sweep done: 3 cardinalities (|X| = 1-3).", timeout=TIMEOUT)
    page.wait_for_function(f"() => ({CURVE_POINTS})() === 3", timeout=TIMEOUT, polling=POLL)

    assert not refused, f"requests off this machine: {refused}"
    assert not [e for e in errors if "isn't known" in e], errors
    assert page.evaluate(QUIET_FILEPOND_JOINED), FILEPOND_LOUD  # the notebook's output loads the painter first too
