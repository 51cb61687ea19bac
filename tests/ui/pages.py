"""What the browser tests do on the dashboard's page: open it, click a node, apply a notation, find a number.

(The browser tests import it as ``pages``, pytest putting this folder on ``sys.path``; the benchmarks as
``tests.ui.pages``.)
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import Page, expect

from effdim import parse_model
from effdim.treelayout import tree_layout

FIG2 = "5(3(2,2),2,3(2,2))"
TIMEOUT = 60_000
#: Milliseconds between two checks of a ``page.wait_for_function`` condition. Playwright's default checks it on
#: every animation frame, which keeps Chromium drawing frames (and walking the page's shadow roots or Bokeh views)
#: 60 times a second for as long as a test waits.
POLL = 100
DATA = Path(__file__).resolve().parents[2] / "core" / "datasets" / "stouffer_toby.csv"

# Screen position of a layout point in the tree plot (the Bokeh figure named "effdim-tree").
TREE_XY = """
([x, y]) => {
  const views = [];
  const walk = (v) => { views.push(v); for (const c of (v.child_views || [])) walk(c); };
  for (const root of Bokeh.index.roots ?? Object.values(Bokeh.index)) walk(root);
  const plot = views.find((v) => v.model && v.model.name === "effdim-tree" && v.frame);
  if (!plot) return null;
  const box = plot.canvas_view.el.getBoundingClientRect();
  return [box.left + plot.frame.x_scale.compute(x), box.top + plot.frame.y_scale.compute(y)];
}
"""


# Every element matching a selector, through Panel's shadow roots; with `within`, only inside
# the components whose host matches `within` (a CSS selector cannot cross a shadow root).
DEEP = """
const deep = (selector, within) => {
  const out = [];
  const walk = (root, inside) => {
    for (const el of root.querySelectorAll('*')) {
      if (inside && el.matches(selector)) out.push(el);
      if (el.shadowRoot) walk(el.shadowRoot, inside || el.matches(within));
    }
  };
  walk(document, !within);
  return out;
};
"""


def css(page: Page, selector: str, prop: str, within: str = "") -> list[str]:
    """The computed ``prop`` of every element matching ``selector`` (inside shadow roots too; with
    ``within``, inside the components matching it only)."""
    return page.evaluate(
        f"([s, p, w]) => {{ {DEEP} return deep(s, w).map((e) => getComputedStyle(e)[p]); }}", [selector, prop, within]
    )


def box(page: Page, selector: str) -> dict:
    """The bounding box of the first element matching ``selector`` (inside shadow roots too)."""
    return page.evaluate(
        f"(s) => {{ {DEEP} const r = deep(s)[0].getBoundingClientRect(); "
        "return {x: r.x, y: r.y, right: r.right, bottom: r.bottom}; }",
        selector,
    )


def cut_off(page: Page) -> dict:
    """What does not fit: the page's scroll width, the Selected-node card's right edge, and the texts
    of table cells shortened to "…"."""
    return page.evaluate(f"""() => {{ {DEEP}
      const card = deep('.effdim-card')[0].getBoundingClientRect().right;
      const cells = deep('.tabulator-cell, .tabulator-col-title').filter(  // not Tabulator's empty filler
        (c) => c.offsetParent !== null && c.textContent.trim() && c.scrollWidth > c.clientWidth + 1
      ).map((c) => c.textContent);
      return {{scroll: document.scrollingElement.scrollWidth, card: card, cells: cells}};
    }}""")


#: Whether the page's FilePond joined the painter of ``effdim_app/quiet_filepond.js`` (``compat.quiet_filepond``).
QUIET_FILEPOND_JOINED = "() => { const p = window.__framePainter; return !!(p && p.quiet && p.readers.length); }"
#: The failure message when it did not.
FILEPOND_LOUD = (
    "the page's FilePond did not join the painter of effdim_app/quiet_filepond.js (window.__framePainter; "
    "effdim_app/compat.py, quiet_filepond): it redraws 60 times a second for as long as the page is open"
)


def open_app(page: Page, url: str) -> None:
    page.goto(url)
    see_the_dimensions(page)
    page.wait_for_function(f"() => ({TREE_XY})([0, 0]) !== null", timeout=TIMEOUT, polling=POLL)
    assert page.evaluate(QUIET_FILEPOND_JOINED), FILEPOND_LOUD


def see_the_dimensions(page: Page) -> None:
    """Scroll to the Dimensions section, as a student does, which builds its table
    (effdim_app/views/first_sight.py), wait for the table's rows, and scroll back to the top of the page."""
    rows, mark = page.locator(".effdim-dims .tabulator-row").first, page.locator(".effdim-first-sight")
    expect(rows.or_(mark)).to_be_attached(timeout=TIMEOUT)
    if not rows.count():
        # a window showing the mark at first paint builds the section at once, which removes the mark
        with contextlib.suppress(PlaywrightError):
            mark.scroll_into_view_if_needed(timeout=TIMEOUT)
    expect(rows).to_be_visible(timeout=TIMEOUT)
    page.evaluate(TO_THE_TOP)


#: Every scrolled box of the page back at its top (the page as it opened).
TO_THE_TOP = "() => { for (const el of document.querySelectorAll('*')) { if (el.scrollTop) el.scrollTop = 0 } }"


def console_errors(page: Page, *, warnings: bool = False) -> list[str]:
    """A list that fills with what ``page``'s console reports as errors (and warnings, if asked) from now on."""
    kinds = ("error", "warning") if warnings else ("error",)
    said: list[str] = []
    page.on("console", lambda message: said.append(message.text) if message.type in kinds else None)
    return said


def stat(page: Page, key: str):
    return page.locator(f"[data-stat={key}]")


def table_rows(page: Page):
    return page.locator(".effdim-dims .tabulator-row")


def click_node(page: Page, model_text: str, node: str) -> None:
    """Click ``node`` of the drawn model (positions from the app's own layout function)."""
    x, y = tree_layout(parse_model(model_text))[node]
    page.wait_for_function(f"() => ({TREE_XY})([0, 0]) !== null", timeout=TIMEOUT, polling=POLL)  # drawn (tab shown)
    point = page.evaluate(TREE_XY, [x, y])
    page.mouse.click(*point)


def apply_notation(page: Page, text: str) -> None:
    box = page.locator(".effdim-notation textarea")
    box.fill(text)
    page.get_by_role("button", name="Apply notation").click()


def data_tab(page: Page) -> None:
    page.get_by_text("Data & scores", exact=True).click()


def model_tab(page: Page) -> None:
    """Back to the Model tab, once its table and tree are drawn again (the tabs are drawn when shown)."""
    page.get_by_text("Model & dimensions", exact=True).click()
    expect(table_rows(page).first).to_be_visible(timeout=TIMEOUT)
    page.wait_for_function(f"() => ({TREE_XY})([0, 0]) !== null", timeout=TIMEOUT, polling=POLL)


def load_bundled_data(page: Page) -> None:
    """On the Data tab: load the bundled data set (Figure 2's model's), once the page says so."""
    page.get_by_role("button", name="Load data set").click()
    expect(page.get_by_text("Loaded bundled data set")).to_be_visible(timeout=TIMEOUT)


def upload(page: Page, name: str, content: bytes) -> None:
    page.locator("input.filepond--browser").set_input_files({"name": name, "mimeType": "text/csv", "buffer": content})


def sweep(page: Page, up_to: int) -> None:
    """On the Data tab, with data loaded: sweep |X| = 1 .. ``up_to``."""
    to = page.locator(".effdim-card-max input")
    to.fill(str(up_to))
    to.press("Enter")
    page.get_by_role("button", name="▶ Sweep cardinality").click()


def sweep_stouffer_toby(page: Page, up_to: int) -> None:
    """Upload the Stouffer-Toby data on the Data tab and sweep |X| = 1 .. ``up_to``."""
    data_tab(page)
    upload(page, "stouffer-toby.csv", DATA.read_bytes())
    expect(page.get_by_text("216 rows")).to_be_visible(timeout=TIMEOUT)
    sweep(page, up_to)


# Defines `views` (every Bokeh view of the page), `walk(view)` (adds a view and those under it, renderers
# included) and `plot`: the view of the scores plot (the figure whose title starts "Scores against"), or
# undefined. The tab also holds the fitted model's plots (effdim_app.views.fitted_view).
SCORES_PLOT = """
  const views = [];
  const walk = (v) => {
    views.push(v);
    for (const c of [...(v.child_views || []), ...(v.renderer_views ? v.renderer_views.values() : [])]) walk(c);
  };
  for (const root of Bokeh.index.roots ?? Object.values(Bokeh.index)) walk(root);
  const plot = views.find((v) => v.model && v.model.title && v.model.title.text
                                 && v.model.title.text.startsWith("Scores against"));
"""

# The number of cardinalities the score curves show on screen: the scores plot drawn with a visible canvas
# and a laid-out frame (the area inside the axes: a canvas of full size once held a 0x0 frame, every tick at
# its top left corner), and the most points a curve's view draws (not only its data source); 0 while the
# plot is missing, hidden, not laid out or still being built.
CURVE_POINTS = (
    "() => {"
    + SCORES_PLOT
    + """
  if (!plot || !plot.el.isConnected) return 0;
  const box = plot.canvas_view.el.getBoundingClientRect();
  if (box.height < 100 || box.width < 100 || plot.el.offsetParent === null) return 0;
  if (plot.frame.bbox.height < 100 || plot.frame.bbox.width < 100) return 0;
  let most = 0;
  for (const v of plot.renderer_views.values()) {
    const g = v.model && v.model.glyph;
    if (g && g.type === "Line" && v.glyph) most = Math.max(most, v.glyph.data_size);  // the data the view draws
  }
  return most;
}"""
)
