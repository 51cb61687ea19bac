"""How long the dashboard takes to update after one edit, for trees up to 50 nodes.

The target is under 0.3 s per edit. An edit in the dashboard runs
``ModelState._recompute`` (regularity, regularization, the engine's
``dimensions``) and then every view's watcher (tree drawing, totals, table,
notes). This script times both on random HLC trees:

* ``state``: the state object alone (what any front end pays);
* ``app``: the whole app rendered into a Bokeh document, so the views
  really rebuild their Bokeh models (the server side of a browser session;
  the browser's own drawing is not included).

Each edit sets a random hidden or observed node to a random cardinality, so
most edits produce a model never seen before (no result cache hit). The
first edit of a fresh process is reported separately ("cold": the engine's
caches of local LC ranks are empty).

``--browser`` adds what a person sees, in headless Chromium (Debian's
``/usr/bin/chromium`` via Playwright) against the served app, for a tree of
``--browser-nodes`` nodes (default 20): from the DOM event (pointer down on a
node, Enter in the States box, a click on "Apply notation") to the frame in
which the answer is painted ("Selected: <node>", or the new ds). Timed inside
the page, so Playwright's own latency is not counted; p50 and p95 per action.
It then times ``--uploads`` uploads of the bundled Stouffer-Toby file on the
Data tab (``upload``): from the file input's event (the file chosen) to the
frame in which the data message shows its 216 rows, each after 2.5 s without
input, as after a file dialog (FilePond's painter is then quiet:
``effdim_app/quiet_filepond.js``); then ``--tab-opens`` first openings of the
Data & scores tab (``open Data tab``), each on a fresh page (a session builds
the tab the first time it is opened): from the click on the tab to the frame
in which its "Load data set" button is painted. The edit targets apply to
neither.

``--jupyterlab`` times the same three actions on ``effdim_app.app(model)``
in a notebook cell of a real JupyterLab (temporary directories, every
request off this machine refused), at 1366x1500 so that the whole output is
on screen.

Run: ``python -m benchmarks.dashboard.bench_app_update [--edits 30] [--seed 1] [--browser] [--jupyterlab]``
"""

from __future__ import annotations

import argparse
import functools
import random
import re
import statistics
import time
from pathlib import Path

from effdim import HLCModel


def random_tree(n_nodes: int, rng: random.Random) -> HLCModel:
    """A random HLC tree with exactly ``n_nodes`` nodes, cardinalities 2-4."""
    model = HLCModel.lc(rng.randint(2, 4), [rng.randint(2, 3), rng.randint(2, 3)])
    counter = {"H": 1, "O": 2}

    def name(prefix: str) -> str:
        counter[prefix] += 1
        return f"{prefix}{counter[prefix]}"

    while len(model) < n_nodes:
        parent = rng.choice(model.hidden)
        room = n_nodes - len(model)
        if room >= 3 and rng.random() < 0.35:
            leaves = {name("O"): rng.randint(2, 3) for _ in range(2)}
            model = model.with_hidden_child(parent, name("H"), rng.randint(2, 4), leaves)
        else:
            model = model.with_child(parent, name("O"), rng.randint(2, 3))
    return model


def edits(model: HLCModel, count: int, rng: random.Random):
    for _ in range(count):
        node = rng.choice(model.nodes)
        low = 1 if model.is_hidden(node) else 2
        yield node, rng.randint(low, 5)


def time_state(model: HLCModel, count: int, rng: random.Random) -> list[float]:
    from effdim_app.state import ModelState

    state = ModelState(model)
    times = []
    for node, card in edits(model, count, rng):
        start = time.perf_counter()
        state.set_card(card, node=node)
        times.append(time.perf_counter() - start)
    return times


def time_app(model: HLCModel, count: int, rng: random.Random) -> list[float]:
    from bokeh.document import Document

    from effdim_app.dashboard import create_app

    app = create_app(model)
    doc = Document()
    app.tabs.get_root(doc)  # render: watchers now update real Bokeh models
    app.model_panel.__panel__().get_root(doc)
    times = []
    for node, card in edits(model, count, rng):
        start = time.perf_counter()
        app.models.set_card(card, node=node)
        times.append(time.perf_counter() - start)
    return times


# In-page timing, event to pixels: a capturing listener stamps the user's
# event (keydown of Enter, pointerdown of a click), and a requestAnimationFrame
# loop checks the condition on every frame; the time is taken on the frame
# after the condition holds (the frame in which it was painted). Playwright's
# own latency is outside the measured interval.
# The element is looked up again on every frame (a pane's new text replaces it), first in the shadow root it
# was last found in: walking every shadow root of the document on each frame cost the page's main thread
# about 15 ms per edit in JupyterLab's large DOM (a CPU profile), counted in the very time measured.
FIND_JS = """
window.__effdimRoots = window.__effdimRoots || {};
window.__effdimFind = (selector) => {
  const last = window.__effdimRoots[selector];
  const near = last ? last.querySelector(selector) : null;
  if (near && near.isConnected) return near;
  const find = (root) => {
    const hit = root.querySelector(selector);
    if (hit) return [hit, root];
    for (const el of root.querySelectorAll('*')) {
      if (el.shadowRoot) { const inner = find(el.shadowRoot); if (inner) return inner; }
    }
    return null;
  };
  const found = find(document);
  if (found === null) return null;
  window.__effdimRoots[selector] = found[1];
  return found[0];
};
"""
ARM = """([selector, pattern, kind, node, states, count]) => {
  const expected = new RegExp(pattern);
  window.__effdimT0 = null; window.__effdimMs = null; window.__effdimAllMs = null;
  const stamp = (e) => { if (window.__effdimT0 === null) window.__effdimT0 = e.timeStamp; };
  const type = kind === 'key' ? 'keydown' : 'pointerdown';
  document.addEventListener(type, stamp, {capture: true, once: true});
  // the tree's node source (BokehJS) shows `node` with `states` states
  const treeDone = () => {
    if (node === null) return true;
    const vs = []; const walk = (v) => { vs.push(v); [...(v.child_views || []),
      ...(v.renderer_views ? v.renderer_views.values() : [])].forEach(walk); };
    for (const r of Bokeh.index.roots ?? Object.values(Bokeh.index)) walk(r);
    const plot = vs.find((v) => v.model && v.model.name === "effdim-tree" && v.renderer_views);
    if (!plot) return false;
    for (const r of plot.renderer_views.values()) {
      const data = r.model.data_source && r.model.data_source.data;
      if (data && data.states) {
        const i = [...data.node].indexOf(node);
        return i >= 0 && data.states[i] === states && (count === null || data.node.length === count);
      }
    }
    return false;
  };
  const done = (key) => requestAnimationFrame(() => { window[key] = performance.now() - window.__effdimT0; });
  const tick = () => {
    if (window.__effdimT0 !== null) {
      const el = window.__effdimFind(selector);
      const text = el === null ? '' : el.textContent.trim();
      const shown = expected.test(text);
      if (shown && window.__effdimMs === null) { window.__effdimMs = -1; done('__effdimMs'); }
      if (shown && treeDone()) { done('__effdimAllMs'); return; }
    }
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
}"""


#: Arms the timing of one upload: from the file input's ``input`` event (a file chosen) to the frame in which a
#: message pane (the shadow roots of the page's ``.effdim-message`` panes, found before the upload; the HTML pane
#: keeps its root and replaces what is inside) shows ``pattern``.
ARM_UPLOAD = """(pattern) => {
  const expected = new RegExp(pattern);
  const roots = [];
  const walk = (root) => {
    for (const el of root.querySelectorAll('*')) {
      if (!el.shadowRoot) continue;
      if (el.classList.contains('effdim-message')) roots.push(el.shadowRoot);
      walk(el.shadowRoot);
    }
  };
  walk(document);
  window.__effdimT0 = null; window.__effdimMs = null;
  const stamp = (e) => { if (window.__effdimT0 === null) window.__effdimT0 = e.timeStamp; };
  document.addEventListener('input', stamp, {capture: true, once: true});
  const tick = () => {
    if (window.__effdimT0 !== null && roots.some((root) => expected.test(root.textContent))) {
      requestAnimationFrame(() => { window.__effdimMs = performance.now() - window.__effdimT0; });
      return;
    }
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
}"""


def time_uploads(page, count: int) -> list[float]:
    """File chosen -> its rows painted, for ``count`` uploads of the bundled Stouffer-Toby file on the Data tab,
    each under a name of its own (so that each has a message of its own to wait for)."""
    from tests.ui.pages import DATA, data_tab, upload

    data_tab(page)
    content = DATA.read_bytes()
    times = []
    for i in range(count):
        page.wait_for_timeout(2500)  # no input for 2 s: the painter is quiet, as after a file dialog
        name = f"upload-{i}.csv"
        page.evaluate(ARM_UPLOAD, f"{re.escape(name)}': 216 rows")
        upload(page, name, content)
        page.wait_for_function("() => window.__effdimMs !== null", polling="raf", timeout=30_000)
        times.append(page.evaluate("() => window.__effdimMs") / 1000)
    return times


#: Arms the timing of a first opening of the Data & scores tab: from the next pointer down (the click on the tab) to
#: the frame in which the tab's "Load data set" button is painted (the tab's views arrive in one message).
ARM_TAB_OPEN = """() => {
  window.__effdimT0 = null; window.__effdimMs = null;
  document.addEventListener('pointerdown', (e) => { window.__effdimT0 = e.timeStamp; }, {capture: true, once: true});
  const painted = (root) => {
    for (const el of root.querySelectorAll('*')) {
      if (el.tagName === 'BUTTON' && el.textContent.trim() === 'Load data set' && el.getClientRects().length) return true;
      if (el.shadowRoot && painted(el.shadowRoot)) return true;
    }
    return false;
  };
  const tick = () => {
    if (window.__effdimT0 !== null && painted(document)) {
      requestAnimationFrame(() => { window.__effdimMs = performance.now() - window.__effdimT0; });
      return;
    }
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
}"""


def time_tab_opens(browser, url: str, count: int) -> list[float]:
    """Click on "Data & scores" -> its "Load data set" button painted, on ``count`` fresh pages."""
    from tests.ui.pages import data_tab

    times = []
    for _ in range(count):
        page = browser.new_page(viewport={"width": 1366, "height": 768})
        page.goto(url)
        page.locator(".effdim-dims .tabulator-row").first.wait_for(timeout=60_000)
        page.wait_for_timeout(1000)  # the page settled, as when a student reads it before moving on
        page.evaluate(ARM_TAB_OPEN)
        data_tab(page)
        page.wait_for_function("() => window.__effdimMs !== null", polling="raf", timeout=30_000)
        times.append(page.evaluate("() => window.__effdimMs") / 1000)
        page.close()
    return times


#: What ``--browser`` times, in this order per edit.
ACTIONS = ("click", "states", "apply")


def _serve(make):
    """Serve ``make()`` (a fresh app per session) on a free port in a thread; returns (url, server)."""
    from tests.ui.app_server import serve_in_thread

    return serve_in_thread("effdim", make)


def _ds(model: HLCModel) -> int:
    """The ds the app shows for ``model`` (its regular equivalent's if irregular)."""
    from effdim_app.state import ModelState

    return ModelState(model).report.ds


def _edited(model: HLCModel, node: str, card: int) -> HLCModel | None:
    """``model`` with ``|node| = card`` if the engine accepts it and the shown ds changes, else None."""
    try:
        new = model.with_card(node, card)
    except Exception:
        return None
    return new if _ds(new) != _ds(model) else None


def time_edits(page, model: HLCModel, count: int, rng: random.Random) -> dict[str, list[float]]:
    """Event -> pixels on ``page`` (the dashboard drawn, its tree on ``model``), for three actions per edit:

    * ``click``: pointer down on a node of the tree -> "Selected: <node>" painted;
    * ``states``: Enter in the States box -> the new ds painted;
    * ``apply``: click on "Apply notation" (after typing the next model's
      notation) -> the new ds painted;
    * ``states+tree``, ``apply+tree``: the same until the tree too shows the
      edited node with its new number of states (everything on screen).
    """
    from effdim.treelayout import tree_layout
    from tests.ui.pages import TREE_XY

    times: dict[str, list[float]] = {a: [] for a in (*ACTIONS, *(f"{a}+tree" for a in ACTIONS[1:]))}

    def measure(action, selector, expected, kind, node=None, states=None, label=None):
        """Seconds from the event to ``selector`` matching ``expected`` painted; with ``node`` also
        the time until the tree shows ``node`` with ``states`` states, stored under ``label``."""
        page.evaluate(ARM, [selector, expected, kind, node, states, None])
        action()
        page.wait_for_function("() => window.__effdimAllMs !== null", polling="raf", timeout=30_000)
        if label is not None:
            times[label].append(page.evaluate("() => window.__effdimAllMs") / 1000)
        return page.evaluate("() => window.__effdimMs") / 1000

    page.evaluate(FIND_JS)
    current = model
    for node, card in edits(model, count, rng):
        page.mouse.move(5, 5)  # away from the tree: a hover tooltip could cover the next node
        page.wait_for_timeout(100)
        selected = f"Selected: {re.escape(node)}( \\(root\\))?(hidden|observed)"
        shown = page.locator(".effdim-sel").text_content()
        if not re.search(selected, shown or ""):
            xy = page.evaluate(TREE_XY, list(tree_layout(current)[node]))
            times["click"].append(measure(lambda: page.mouse.click(*xy), ".effdim-sel", selected, "mouse"))
        # States: only edits that change ds (otherwise nothing new to wait for)
        candidate = _edited(current, node, card)
        if candidate is not None:
            box = page.locator(".effdim-card-input input")
            box.fill(str(card))
            times["states"].append(
                measure(
                    lambda: box.press("Enter"),
                    "[data-stat=ds]",
                    f"^{_ds(candidate)}$",
                    "key",
                    node,
                    card,
                    "states+tree",
                )
            )
            current = candidate
        # Apply: the notation of another random edit, typed and applied
        other_node, other_card = next(edits(current, 1, rng))
        other = _edited(current, other_node, other_card)
        if other is not None:
            page.locator(".effdim-notation textarea").fill(str(other))
            apply = page.get_by_role("button", name="Apply notation")
            times["apply"].append(
                measure(apply.click, "[data-stat=ds]", f"^{_ds(other)}$", "mouse", other_node, other_card, "apply+tree")
            )
            current = other
    return times


#: Four trees of Figure 2's size and different shapes (7-10 nodes), each with a ds unlike the next one's.
SHAPES = ("5(3(2,2),2,3(2,2))", "4(3(2,2,2),3(2,2))", "5(2,3(2,2),2,2)", "3(3(2,2),3(2,2),3(2,2))")


def time_shapes(page, count: int, first: int = 1) -> dict[str, list[float]]:
    """Click on "Apply notation" -> the new ds painted (``apply shape``), and until the tree too is redrawn
    with the new tree's nodes (``apply shape+tree``), for ``count`` Applies cycling through :data:`SHAPES`:
    every Apply changes the tree's shape, so the drawing, the tables and the layout all change (the second
    tree is irregular: its Apply and the next also show and hide the regularization log)."""
    from effdim import parse_model

    page.evaluate(FIND_JS)
    times: dict[str, list[float]] = {"apply shape": [], "apply shape+tree": []}
    apply = page.get_by_role("button", name="Apply notation")
    for i in range(count):
        model = parse_model(SHAPES[(first + i) % len(SHAPES)])
        page.mouse.move(5, 5)
        page.wait_for_timeout(100)
        page.locator(".effdim-notation textarea").fill(str(model))
        last = model.nodes[-1]
        page.evaluate(ARM, ["[data-stat=ds]", f"^{_ds(model)}$", "mouse", last, model.card(last), len(model)])
        apply.click()
        page.wait_for_function("() => window.__effdimAllMs !== null", polling="raf", timeout=30_000)
        times["apply shape"].append(page.evaluate("() => window.__effdimMs") / 1000)
        times["apply shape+tree"].append(page.evaluate("() => window.__effdimAllMs") / 1000)
    return times


def _chromium(pw):
    return pw.chromium.launch(
        executable_path="/usr/bin/chromium", headless=True, args=["--no-sandbox", "--disable-gpu"]
    )


def time_served(
    model: HLCModel,
    count: int,
    rng: random.Random,
    real: bool = False,
    trace: str | None = None,
    uploads: int = 0,
    tab_opens: int = 0,
) -> dict[str, list[float]]:
    """:func:`time_edits`, :func:`time_shapes` and ``uploads`` times :func:`time_uploads` on the served page at
    1366x768, then ``tab_opens`` times :func:`time_tab_opens`.

    ``real``: against the ``effdim app`` command itself, in a subprocess (its
    template, job runner, collector tuning and logging), the page opened with
    ``?model=`` set to ``model``; otherwise ``create_app`` served with
    ``pn.serve`` in a thread of this process. ``trace``: write a Chromium
    performance trace of two shape-changing Applies between regular trees to this file (open it in
    Chrome's DevTools, Performance tab).
    """
    from urllib.parse import quote

    from playwright.sync_api import sync_playwright

    from effdim_app.dashboard import create_app

    if real:
        from benchmarks.common import start_server, stop_app

        process, url = start_server([])
        url += f"?model={quote(str(model))}"
        stop = functools.partial(stop_app, process)
    else:
        url, server = _serve(lambda: create_app(model).template())
        stop = server.stop
    try:
        with sync_playwright() as pw:
            browser = _chromium(pw)
            page = browser.new_page(viewport={"width": 1366, "height": 768})
            page.goto(url)
            page.locator(".effdim-dims .tabulator-row").first.wait_for(timeout=60_000)
            times = time_edits(page, model, count, rng)
            times.update(time_shapes(page, count))
            if trace:
                browser.start_tracing(
                    page=page,
                    path=trace,
                    screenshots=False,
                    categories=[
                        "devtools.timeline",
                        "disabled-by-default-devtools.timeline",
                        "v8.execute",
                        "blink.user_timing",
                        "disabled-by-default-v8.cpu_profiler",
                    ],
                )
                time_shapes(page, 1, first=2)  # to a regular tree, then trace two Applies between regular trees
                time_shapes(page, 2, first=3)
                browser.stop_tracing()
            if uploads:
                times["upload"] = time_uploads(page, uploads)
            page.close()
            if tab_opens:
                times["open Data tab"] = time_tab_opens(browser, url, tab_opens)
            browser.close()
    finally:
        stop()
    return times


#: JupyterLab at 1366 px wide, tall enough that the whole cell output is on screen (the tree is clicked).
LAB_VIEWPORT = {"width": 1366, "height": 1500}


def time_jupyterlab(model: HLCModel, count: int, rng: random.Random) -> dict[str, list[float]]:
    """:func:`time_edits` on ``effdim_app.app(model)`` in a notebook cell of a real JupyterLab, offline.

    JupyterLab runs from temporary directories (``tests/ui/jupyterlab_session.py``)
    on a notebook of two cells, :data:`BARE_PANEL` (timed first, as ``bare Panel``:
    the floor any Panel app pays here) and the dashboard; requests to other
    hosts are refused, as in ``tests/ui/test_jupyterlab.py``.
    """
    import json
    import tempfile

    from playwright.sync_api import sync_playwright

    from tests.ui.jupyterlab_session import KERNEL_IDLE, jupyterlab, refuse_other_hosts

    dashboard = f"import effdim_app\nfrom effdim import parse_model\n\neffdim_app.app(parse_model({str(model)!r}))"
    notebook = {
        "cells": [
            {"cell_type": "code", "execution_count": None, "id": cell, "metadata": {}, "outputs": [], "source": source}
            for cell, source in (("bare", BARE_PANEL), ("dashboard", dashboard))
        ],
        "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }

    with tempfile.TemporaryDirectory() as home:
        path = Path(home) / "bench_app_update.ipynb"
        path.write_text(json.dumps(notebook))
        with jupyterlab(path, Path(home) / "lab") as url, sync_playwright() as pw:
            browser = _chromium(pw)
            page = browser.new_page(viewport=LAB_VIEWPORT)
            refuse_other_hosts(page)
            page.goto(url)
            page.wait_for_function(KERNEL_IDLE, timeout=60_000)
            page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
            page.locator(".effdim-dims .tabulator-row").first.wait_for(timeout=60_000)
            page.wait_for_function(KERNEL_IDLE, timeout=60_000)
            times = {"bare Panel": time_bare_panel(page, count)}
            times.update(time_edits(page, model, count, rng))
            times.update(time_shapes(page, count))
            browser.close()
    return times


#: The floor of a notebook round trip: a Panel button whose click writes its count into an HTML pane.
BARE_PANEL = """import panel as pn

pn.extension(inline=True)
count = pn.pane.HTML("<span class='bench-bare'>clicks 0</span>")
button = pn.widgets.Button(name="bare round trip")
button.on_click(lambda event: setattr(count, "object", f"<span class='bench-bare'>clicks {event.new}</span>"))
pn.Row(button, count)"""


def time_bare_panel(page, count: int) -> list[float]:
    """Click -> count painted for :data:`BARE_PANEL`'s button: what any Panel app pays in this JupyterLab."""
    page.evaluate(FIND_JS)
    button = page.get_by_role("button", name="bare round trip")
    times = []
    for _ in range(count):
        page.wait_for_timeout(100)
        shown = page.evaluate("() => window.__effdimFind('.bench-bare').textContent")
        clicks = int(shown.split()[-1]) + 1  # a click the kernel did not see is not counted against the next
        page.evaluate(ARM, [".bench-bare", f"^clicks {clicks}$", "mouse", None, None, None])
        button.click()
        page.wait_for_function("() => window.__effdimAllMs !== null", polling="raf", timeout=30_000)
        times.append(page.evaluate("() => window.__effdimMs") / 1000)
    return times


#: Actions the edit targets do not apply to: a bare Panel app's round trip, an upload (a file read in a worker
#: process, its columns laid out) and a tab's first opening (its views built).
UNTARGETED = ("bare Panel", "upload", "open Data tab")


def _print_browser(title: str, results: dict[str, list[float]]) -> None:
    """A table of p50/p95/max per action, then one summary line over the actions (not "bare Panel")."""
    print()
    print(title)
    print(f"{'action':>16} {'count':>5} {'p50':>6} {'p95':>6} {'max':>6}   target p50 <= 150, p95 <= 300 (edits)")
    worst50 = worst95 = 0.0
    for action, times in results.items():
        times = sorted(times)
        if times:
            p50, p95 = statistics.median(times), times[min(len(times) - 1, round(0.95 * (len(times) - 1)))]
            print(f"{action:>16} {len(times):>5} {1000 * p50:>6.0f} {1000 * p95:>6.0f} {1000 * times[-1]:>6.0f}")
            if action not in UNTARGETED:
                worst50, worst95 = max(worst50, p50), max(worst95, p95)
    verdict = "meets" if worst50 <= 0.150 and worst95 <= 0.300 else "MISSES"
    print(f"summary: worst p50 {1000 * worst50:.0f} ms, worst p95 {1000 * worst95:.0f} ms ({verdict} the targets)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edits", type=int, default=30, help="edits per tree size")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 20, 30, 40, 50])
    parser.add_argument("--browser", action="store_true", help="also time edits in headless Chromium")
    parser.add_argument(
        "--jupyterlab",
        action="store_true",
        help="also time edits in a notebook cell of JupyterLab, in headless Chromium",
    )
    parser.add_argument(
        "--real",
        action="store_true",
        help="--browser against the `effdim app` command in a subprocess (not pn.serve in a thread)",
    )
    parser.add_argument("--trace", metavar="FILE", help="with --browser: a Chromium trace of two Applies to FILE")
    parser.add_argument("--browser-only", action="store_true", help="skip the server-side timings")
    parser.add_argument("--browser-nodes", type=int, default=20, help="tree size for --browser and --jupyterlab")
    parser.add_argument("--uploads", type=int, default=10, help="uploads timed after the edits with --browser")
    parser.add_argument(
        "--tab-opens", type=int, default=10, help="first openings of the Data & scores tab timed with --browser"
    )
    args = parser.parse_args()
    rng = random.Random(args.seed)

    trees = {n: random_tree(n, rng) for n in args.sizes}
    if not args.browser_only:
        time_server_side(trees, args, rng)
    n = args.browser_nodes
    model = trees.get(n) or random_tree(n, rng)
    if args.browser:
        where = "`effdim app` (subprocess)" if args.real else "pn.serve in a thread"
        _print_browser(
            f"served by {where}, headless Chromium, {n} nodes, event -> pixels (ms):",
            time_served(
                model, args.edits, rng, real=args.real, trace=args.trace, uploads=args.uploads, tab_opens=args.tab_opens
            ),
        )
    if args.jupyterlab:
        _print_browser(
            f"JupyterLab notebook cell, offline, headless Chromium, {n} nodes, event -> pixels (ms):",
            time_jupyterlab(model, args.edits, rng),
        )


def time_server_side(trees: dict[int, HLCModel], args, rng: random.Random) -> None:
    """The state and the whole app updated in this process, per tree size (no browser)."""
    start = time.perf_counter()
    time_state(trees[max(args.sizes)], 1, rng)
    cold = time.perf_counter() - start
    print(f"cold first update (fresh engine caches, {max(args.sizes)} nodes): {1000 * cold:.0f} ms")
    print()
    print(f"{'nodes':>5} {'hidden':>6} {'what':>5} {'median ms':>10} {'p90 ms':>8} {'max ms':>8}  model")
    worst = 0.0
    for n, model in trees.items():
        for label, fn in (("state", time_state), ("app", time_app)):
            times = sorted(fn(model, args.edits, rng))
            p90 = times[int(0.9 * (len(times) - 1))]
            worst = max(worst, times[-1]) if label == "app" else worst
            shown = str(model) if len(str(model)) < 60 else str(model)[:57] + "..."
            print(
                f"{n:>5} {len(model.hidden):>6} {label:>5} {1000 * statistics.median(times):>10.1f} "
                f"{1000 * p90:>8.1f} {1000 * times[-1]:>8.1f}  {shown if label == 'state' else ''}"
            )
    print()
    verdict = "meets" if worst < 0.3 else "MISSES"
    print(f"slowest full-app update: {1000 * worst:.0f} ms ({verdict} the 300 ms target)")


if __name__ == "__main__":
    main()
