"""What the browser does when data is loaded or a job ends: messages received and main-thread work.

A job (reading an upload, a sweep) changes many parts of the page when it
starts, while it runs and when it ends: the status, the progress bar, the
results table, the score curves, the buttons. Sent one change per message,
the browser applies and lays out the page once per message; sent together
(``effdim_app.views.widgets.one_message``), once. This script serves the
dashboard as ``effdim app`` does (one job runner, worker processes), opens it
in headless Chromium (Debian's ``/usr/bin/chromium`` via Playwright) and, for
each of ``--repeats`` fresh pages, loads the first bundled data set with "Load
data set", uploads the Stouffer-Toby data, then sweeps |X| = 1..3. Per action
it counts the Bokeh document messages the page received (``PATCH-DOC`` frames)
and reads Chrome's own counters (``Performance.getMetrics``):
main-thread task time, style recalculations and layouts; and, on the server, the
longest block of changes the action made (``effdim_app.views.widgets.one_update``,
timed around its walk of the page's models: a user's action or a job's end),
the time it held the event loop every session shares. Medians over the pages.

Run: ``python -m benchmarks.dashboard.bench_job_messages [--repeats 5] [--walk-each-change]``
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import time

#: Chrome's counters reported per action (``Performance.getMetrics``).
COUNTERS = ("TaskDuration", "RecalcStyleCount", "LayoutCount", "ScriptDuration")


#: Seconds of each block of changes made on the server since the list was last cleared (:func:`_time_blocks`).
BLOCKS: list[float] = []


def _time_blocks(walk_each_change: bool) -> None:
    """Record in :data:`BLOCKS` how long each block of changes (``one_update``'s walk of the models included)
    takes on the server, which runs in this process; ``walk_each_change``: Bokeh walks the models after each
    change of a layout, as before ``effdim_app.compat.one_walk_of_models`` (for a comparison)."""
    from effdim_app.views import widgets

    walk = (lambda _doc: contextlib.nullcontext()) if walk_each_change else widgets.one_walk_of_models

    @contextlib.contextmanager
    def timed(doc):
        start = time.perf_counter()
        with walk(doc):
            yield
        BLOCKS.append(time.perf_counter() - start)

    widgets.one_walk_of_models = timed


def _patch_messages(frames: list) -> int:
    count = 0
    for frame in frames:
        try:
            content = json.loads(frame)
        except (ValueError, TypeError):
            continue
        count += isinstance(content, dict) and "events" in content
    return count


def measure(url: str, repeats: int) -> dict[str, list[dict]]:
    from playwright.sync_api import expect, sync_playwright

    from tests.ui.pages import DATA, TIMEOUT, data_tab, open_app, upload

    rows: dict[str, list[dict]] = {"bundled": [], "upload": [], "sweep": []}
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path="/usr/bin/chromium", headless=True, args=["--no-sandbox", "--disable-gpu"]
        )
        for _ in range(repeats):
            page = browser.new_page(viewport={"width": 1366, "height": 768})
            frames: list = []
            page.on(
                "websocket",
                lambda ws: ws.on(
                    "framereceived", lambda f: frames.append(f if isinstance(f, str) else f.decode("utf-8", "replace"))
                ),
            )
            open_app(page, url)
            data_tab(page)
            page.wait_for_timeout(1000)
            cdp = page.context.new_cdp_session(page)
            cdp.send("Performance.enable")

            def counters():
                return {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}

            def action(name, run):
                frames.clear()
                BLOCKS.clear()
                before = counters()
                run()
                page.wait_for_timeout(1500)  # whatever follows the end (the fitted model's own job) included
                after = counters()
                rows[name].append(
                    {
                        "messages": _patch_messages(frames),
                        "block": max(BLOCKS, default=0.0),
                        **{k: after[k] - before[k] for k in COUNTERS},
                    }
                )

            def bundled():
                page.get_by_role("button", name="Load data set").click()
                expect(page.get_by_text("Loaded bundled")).to_be_visible(timeout=TIMEOUT)

            def read():
                upload(page, "stouffer-toby.csv", DATA.read_bytes())
                expect(page.get_by_text("216 rows")).to_be_visible(timeout=TIMEOUT)

            def sweep():
                cards = page.locator(".effdim-card-max input")
                cards.fill("3")
                cards.press("Enter")
                page.get_by_role("button", name="▶ Sweep cardinality").click()
                expect(page.locator(".effdim-fit-stats")).to_contain_text("df = dc", timeout=TIMEOUT)

            action("bundled", bundled)
            action("upload", read)
            action("sweep", sweep)
            page.close()
        browser.close()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="fresh pages (default 5)")
    parser.add_argument(
        "--walk-each-change",
        action="store_true",
        help="the server walks the page's models after each layout change, as before one walk per block",
    )
    args = parser.parse_args()

    from effdim_app import serve
    from tests.ui.jupyterlab_session import free_port, wait_for

    _time_blocks(args.walk_each_change)
    port = free_port()
    server = serve(port=port, address="127.0.0.1", threaded=True, show=False, websocket_origin=[f"127.0.0.1:{port}"])
    wait_for(port)
    started = time.perf_counter()
    try:
        rows = measure(f"http://127.0.0.1:{port}/effdim", args.repeats)
    finally:
        server.stop()
    print(f"{args.repeats} pages, {time.perf_counter() - started:.0f} s; medians per action:")
    print(
        f"{'action':8s} {'messages':>8s} {'main thread s':>13s} {'script s':>8s} {'style recalcs':>13s} {'layouts':>7s}"
        f" {'server block ms':>15s}"
    )
    for name, measured in rows.items():
        med = {k: statistics.median(r[k] for r in measured) for k in ("messages", "block", *COUNTERS)}
        print(
            f"{name:8s} {med['messages']:8.0f} {med['TaskDuration']:13.2f} {med['ScriptDuration']:8.2f} "
            f"{med['RecalcStyleCount']:13.0f} {med['LayoutCount']:7.0f} {1000 * med['block']:15.0f}"
        )


if __name__ == "__main__":
    main()
