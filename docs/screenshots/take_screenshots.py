"""Screenshots of every tab of the dashboard, served by the real ``effdim app`` and in a JupyterLab cell.

Starts ``effdim app`` in a subprocess (``benchmarks/common.py``) and, in headless
Chromium (``/usr/bin/chromium``, or ``EFFDIM_CHROMIUM``), at 1366x768 and 1024x768, saves into this
folder:

* ``model-W.png``: the Model & dimensions tab on the default model;
* ``data-W.png``: the Data & scores tab after the Stouffer-Toby data is uploaded and its root swept
  |X| = 1..3 (the controls); ``sweep-W.png``: the curves and the sweep table; ``fitted-W.png``: the
  fitted view of the pick;
* ``experiments-W.png``: the Experiments tab once its plots are drawn;
* ``projector-W.png``: projector mode switched on with an irregular model (the regularization log shown);

then ``dashboard-jupyterlab.png`` (one folder up, as the README and docs/dashboard.md show it): the example
notebook run in JupyterLab, every request off this machine refused (``tests/ui/jupyterlab_session.py``);
and ``jupyterlab-TAB-W.png``: the same tabs in a JupyterLab notebook cell (``effdim_app.app()``, offline) at
each width, JupyterLab's bars and file browser around it; and ``report-example.png`` (one folder up,
as docs/report.md shows it): the report of ``effdim sweep stouffer-toby --seed 1 --report``, opened offline
at 1366 px.

Run from the repository root: ``python -m docs.screenshots.take_screenshots [--widths 1366 1024] [--no-jupyterlab]``
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import Page, expect, sync_playwright

from benchmarks.common import start_server, stop_app
from tests.ui.jupyterlab_session import KERNEL_IDLE, jupyterlab, refuse_other_hosts
from tests.ui.pages import CURVE_POINTS, TIMEOUT, apply_notation, open_app, sweep_stouffer_toby

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]

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
    """Scroll the page so that the first element matching ``selector`` is at the top of its scrolling area
    (the served page's main area, the notebook), the window itself left at its top (the page's header whole)."""
    page.locator(selector).first.evaluate("(el) => el.scrollIntoView({block: 'start'})")
    page.evaluate("() => window.scrollTo(0, 0)")


def every_tab(page: Page, width: int, prefix: str, home) -> list[Path]:
    """The screenshots of every tab of the dashboard drawn on ``page`` (``width`` x 768), named
    ``{prefix}{tab}-{width}.png``; ``home()`` scrolls the dashboard's top into view."""
    shots = []

    def shot(name: str) -> None:
        _settle(page)
        path = HERE / f"{prefix}{name}-{width}.png"
        page.screenshot(path=str(path))
        shots.append(path)

    home()
    shot("model")
    sweep_stouffer_toby(page, up_to=3)
    expect(page.locator(".effdim-results .tabulator-row")).to_have_count(3, timeout=TIMEOUT)
    page.wait_for_function(f"() => ({CURVE_POINTS})() === 3", timeout=TIMEOUT)
    expect(page.locator(".effdim-fit-stats")).to_contain_text("df = dc − de", timeout=TIMEOUT)
    home()
    shot("data")
    _to_top(page, ".effdim-curves")
    shot("sweep")
    _to_top(page, ".effdim-fit-choice")
    shot("fitted")
    home()
    page.get_by_text("Experiments", exact=True).click()
    expect(page.get_by_text("Section 6: HLC 5,3,3:2,2,2,2,2, hill climbing per score")).to_be_visible(timeout=TIMEOUT)
    page.wait_for_function(FRAMES_DRAWN, timeout=TIMEOUT)
    home()
    shot("experiments")
    page.get_by_text("Model & dimensions", exact=True).click()
    apply_notation(page, IRREGULAR)
    expect(page.locator(".effdim-steps .tabulator-row").first).to_be_visible(timeout=TIMEOUT)
    page.get_by_role("button", name="Projector: off").click()
    expect(page.get_by_role("button", name="Projector: on ✓")).to_be_visible(timeout=TIMEOUT)
    home()
    shot("projector")
    return shots


def served(url: str, page: Page, width: int) -> list[Path]:
    """The screenshots of the served page at ``width`` x 768."""
    open_app(page, url)
    return every_tab(page, width, "", lambda: page.evaluate("() => window.scrollTo(0, 0)"))


#: The notebook the JupyterLab screenshots are taken in: the dashboard as a user opens it, in the first cell.
LAB_NOTEBOOK = {
    "cells": [
        {
            "cell_type": "code",
            "execution_count": None,
            "id": "dashboard",
            "metadata": {},
            "outputs": [],
            "source": "import effdim_app\n\neffdim_app.app()",
        }
    ],
    "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
    "nbformat": 4,
    "nbformat_minor": 5,
}


def _run_notebook(page: Page, url: str) -> None:
    """Open JupyterLab's notebook at ``url`` offline, run it, and wait for the dashboard and the kernel."""
    refuse_other_hosts(page, [])
    page.goto(url)
    page.wait_for_function(KERNEL_IDLE, timeout=TIMEOUT)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    expect(page.locator("[data-stat=ds]")).to_be_visible(timeout=TIMEOUT)
    page.wait_for_function(KERNEL_IDLE, timeout=TIMEOUT)


def in_jupyterlab_tabs(browser, width: int) -> list[Path]:
    """Every tab of ``effdim_app.app()`` in a JupyterLab notebook cell at ``width`` x 768, offline
    (``jupyterlab-{tab}-{width}.png``): JupyterLab's bars and file browser as a user sees them."""
    import json

    with tempfile.TemporaryDirectory() as home:
        notebook = Path(home) / "effdim.ipynb"
        notebook.write_text(json.dumps(LAB_NOTEBOOK))
        with jupyterlab(notebook, Path(home) / "lab") as url:
            page = browser.new_context(viewport={"width": width, "height": 768}).new_page()
            _run_notebook(page, url)
            # the tabs' top: at 1024 px the output is too narrow for the sidebar beside the tabs, which
            # then come under it
            return every_tab(page, width, "jupyterlab-", lambda: _to_top(page, ".effdim-tabs"))


def in_jupyterlab(browser) -> Path:
    """The example notebook run in JupyterLab (1366 px, offline), the dashboard's cell on screen."""
    notebook = REPO / "examples" / "effdim_dashboard.ipynb"
    path = HERE.parent / "dashboard-jupyterlab.png"
    with tempfile.TemporaryDirectory() as home, jupyterlab(notebook, Path(home)) as url:
        page = browser.new_context(viewport={"width": 1366, "height": 1400}).new_page()
        _run_notebook(page, url)
        output = page.locator(".jp-OutputArea-output").filter(has=page.locator("[data-stat=ds]"))
        page.locator(".jp-Cell").filter(has=output).evaluate("(el) => el.scrollIntoView({block: 'start'})")
        _settle(page)
        box = output.bounding_box()
        page.screenshot(path=str(path), clip={"x": 0, "y": 0, "width": 1366, "height": box["y"] + box["height"] + 8})
    return path


def report_example(browser) -> Path:
    """The report ``effdim sweep stouffer-toby --seed 1 --report`` writes, opened from its file (1366 px)."""
    path = HERE.parent / "report-example.png"
    with tempfile.TemporaryDirectory() as folder:
        report = Path(folder) / "stouffer-toby-report.html"
        command = [sys.executable, "-m", "effdim.cli", "sweep", "stouffer-toby", "--seed", "1", "--report", report.name]
        subprocess.run(command, cwd=folder, check=True, capture_output=True)
        page = browser.new_page(viewport={"width": 1366, "height": 768})
        page.goto(report.as_uri())
        _settle(page)
        page.screenshot(path=str(path), full_page=True)
        page.close()
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
            print(report_example(browser).relative_to(REPO))
            if not args.no_jupyterlab:
                print(in_jupyterlab(browser).relative_to(REPO))
                for width in args.widths:
                    for path in in_jupyterlab_tabs(browser, width):
                        print(path.relative_to(REPO))
            browser.close()
    finally:
        stop_app(process)


if __name__ == "__main__":
    main()
