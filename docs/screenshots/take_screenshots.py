"""Screenshots of every tab of the dashboard, served by the real ``effdim app`` and in a JupyterLab cell.

Starts ``effdim app`` in a subprocess (as ``benchmarks/bench_classroom.py`` does) and, in headless
Chromium (``/usr/bin/chromium``, or ``EFFDIM_CHROMIUM``), at 1366x768 and 1024x768, saves into this
folder:

* ``model-W.png``: the Model & dimensions tab on the default model;
* ``data-W.png``: the Data & scores tab after the Stouffer-Toby data is uploaded and its root swept
  |X| = 1..3 (the controls); ``sweep-W.png``: the curves and the sweep table; ``fitted-W.png``: the
  fitted view of the pick;
* ``experiments-W.png``: the Experiments tab once its plots are drawn;
* ``projector-W.png``: projector mode on an irregular model (the regularization log shown);

then ``dashboard-jupyterlab.png`` (one folder up, as the README and docs/dashboard.md show it): the example
notebook run in JupyterLab, every request off this machine refused (``tests/ui/jupyterlab_session.py``).

Run: ``python docs/screenshots/take_screenshots.py [--widths 1366 1024] [--no-jupyterlab]``
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from urllib.parse import quote

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path[:0] = [str(REPO / "tests" / "ui"), str(REPO / "benchmarks")]  # the browser tests' page helpers

from bench_classroom import start_server, stop_server  # noqa: E402
from jupyterlab_session import KERNEL_IDLE, jupyterlab, refuse_other_hosts  # noqa: E402
from pages import CURVE_POINTS, TIMEOUT, open_app, sweep_stouffer_toby  # noqa: E402
from playwright.sync_api import Page, expect, sync_playwright  # noqa: E402

CHROMIUM = os.environ.get("EFFDIM_CHROMIUM", "/usr/bin/chromium")
#: An irregular model (its root has more states than its neighbours allow): the step log shows.
IRREGULAR = "4(3(2,2,2),3(2,2))"
# Every Bokeh figure with a title has its frame drawn (more than 100 px high).
FRAMES_DRAWN = """() => {
  const heights = [];
  const walk = (v) => {
    if (v.frame && v.model.title && v.model.title.text) heights.push(v.frame.bbox.height);
    for (const c of (v.child_views || [])) walk(c);
  };
  for (const root of Bokeh.index.roots ?? Object.values(Bokeh.index)) walk(root);
  return heights.length > 0 && heights.every((h) => h > 100);
}"""


def _settle(page: Page) -> None:
    page.mouse.move(1, 1)  # no hover tooltip in the picture
    page.wait_for_timeout(600)


def _to_top(page: Page, selector: str) -> None:
    """Scroll the page so that the first element matching ``selector`` is at the top of the window."""
    page.locator(selector).first.evaluate("(el) => el.scrollIntoView({block: 'start'})")


def served(url: str, page: Page, width: int) -> list[Path]:
    """The screenshots of the served page at ``width`` x 768."""
    shots = []

    def shot(name: str) -> None:
        _settle(page)
        path = HERE / f"{name}-{width}.png"
        page.screenshot(path=str(path))
        shots.append(path)

    open_app(page, url)
    shot("model")
    sweep_stouffer_toby(page, up_to=3)
    expect(page.locator(".effdim-results .tabulator-row")).to_have_count(3, timeout=TIMEOUT)
    page.wait_for_function(f"() => ({CURVE_POINTS})() === 3", timeout=TIMEOUT)
    expect(page.locator(".effdim-fit-stats")).to_contain_text("df = dc − de", timeout=TIMEOUT)
    page.evaluate("() => window.scrollTo(0, 0)")
    shot("data")
    _to_top(page, ".effdim-curves")
    shot("sweep")
    _to_top(page, ".effdim-fit-choice")
    shot("fitted")
    page.evaluate("() => window.scrollTo(0, 0)")
    page.get_by_text("Experiments", exact=True).click()
    expect(page.get_by_text("Section 6: HLC 5,3,3:2,2,2,2,2, hill climbing per score")).to_be_visible(timeout=TIMEOUT)
    page.wait_for_function(FRAMES_DRAWN, timeout=TIMEOUT)
    shot("experiments")
    open_app(page, f"{url}?projector=1&model={quote(IRREGULAR)}")
    expect(page.locator(".effdim-steps .tabulator-row").first).to_be_visible(timeout=TIMEOUT)
    shot("projector")
    return shots


def in_jupyterlab(browser) -> Path:
    """The example notebook run in JupyterLab (1366 px, offline), the dashboard's cell on screen."""
    notebook = REPO / "examples" / "effdim_dashboard.ipynb"
    path = HERE.parent / "dashboard-jupyterlab.png"
    with tempfile.TemporaryDirectory() as home, jupyterlab(notebook, Path(home)) as url:
        page = browser.new_context(viewport={"width": 1366, "height": 1400}).new_page()
        refuse_other_hosts(page, [])
        page.goto(url)
        page.wait_for_function(KERNEL_IDLE, timeout=TIMEOUT)
        page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
        output = page.locator(".jp-OutputArea-output").filter(has=page.locator("[data-stat=ds]"))
        expect(output).to_be_visible(timeout=TIMEOUT)
        page.wait_for_function(KERNEL_IDLE, timeout=TIMEOUT)
        page.locator(".jp-Cell").filter(has=output).evaluate("(el) => el.scrollIntoView({block: 'start'})")
        _settle(page)
        box = output.bounding_box()
        page.screenshot(path=str(path), clip={"x": 0, "y": 0, "width": 1366, "height": box["y"] + box["height"] + 8})
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--widths", type=int, nargs="+", default=[1366, 1024], help="window widths (768 high)")
    parser.add_argument("--no-jupyterlab", action="store_true", help="skip the JupyterLab screenshot")
    args = parser.parse_args()
    process, url = start_server([])
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
            for width in args.widths:
                page = browser.new_page(viewport={"width": width, "height": 768})
                for path in served(url, page, width):
                    print(path.relative_to(REPO))
                page.close()
            if not args.no_jupyterlab:
                print(in_jupyterlab(browser).relative_to(REPO))
            browser.close()
    finally:
        stop_server(process)


if __name__ == "__main__":
    main()
