"""Chromium's CPU per page open and per first action on a real ``effdim app``: where a browser test's seconds go.

The suite is bound by CPU, about 40 % of it Chromium's (CONTRIBUTING.md, "The suite's speed"), and each browser
test opens a page. This starts ``effdim app`` (tests/ui/app_server.py), opens the dashboard in one Chromium
profile on disk as the browser tests do (``warm_browser`` in tests/ui/conftest.py; the first open, which fills
its caches, is not counted), then times each step: the CPU seconds of every Chromium process of the
machine (``bench_idle_page.chromium_cpu_seconds``: run it on a quiet one) and of the server with its job
workers (``psutil``), and, for the page opens, the renderer's main-thread seconds by kind from the DevTools
``Performance`` metrics (tasks in all, scripts, layout, style). Each step is followed by ``--settle``
seconds so that the work it sets off is counted (an idle page costs Chromium 0.01-0.03 CPU s a second:
CONTRIBUTING.md). Compare two checkouts by the medians of ``--pages`` opens.

Run: ``python -m benchmarks.dashboard.bench_page_open_browser [--pages 5] [--settle 1.5]``
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import psutil
from playwright.sync_api import sync_playwright

from benchmarks.common import chromium_cpu_seconds
from tests.ui.app_server import start_app, stop_app
from tests.ui.pages import FIG2, apply_notation, data_tab, load_bundled_data, model_tab, open_app, stat, sweep

CHROMIUM = "/usr/bin/chromium"
#: The renderer's main-thread seconds (DevTools ``Performance.getMetrics``) reported per page open.
MAIN_THREAD = {"TaskDuration": "tasks", "ScriptDuration": "scripts", "LayoutDuration": "layout",
               "RecalcStyleDuration": "style"}  # fmt: skip


def server_cpu_seconds(pid: int) -> float:
    """CPU seconds so far of the server ``pid`` and the processes it started (its job workers)."""
    total = 0.0
    for process in [psutil.Process(pid), *psutil.Process(pid).children(recursive=True)]:
        try:
            times = process.cpu_times()
        except psutil.Error:  # ended since it was listed
            continue
        total += times.user + times.system
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=5, help="page opens measured (after one not counted)")
    parser.add_argument("--settle", type=float, default=1.5, help="seconds after each step, counted with it")
    args = parser.parse_args()
    server, url = start_app(Path(tempfile.mkdtemp()) / "effdim-app.log")

    def snapshot() -> tuple[float, float]:
        return chromium_cpu_seconds(), server_cpu_seconds(server.pid)

    def measured(step) -> tuple[float, float]:
        chromium, served = snapshot()
        step()
        time.sleep(args.settle)
        after = snapshot()
        return after[0] - chromium, after[1] - served

    try:
        with sync_playwright() as playwright:
            context = playwright.chromium.launch_persistent_context(
                tempfile.mkdtemp(), executable_path=CHROMIUM, headless=True,
                args=["--no-sandbox", "--disable-gpu"], viewport={"width": 1366, "height": 768},
            )  # fmt: skip
            warm = context.new_page()
            open_app(warm, url)
            warm.close()
            opens = []
            for _ in range(args.pages):
                page = context.new_page()
                devtools = context.new_cdp_session(page)
                devtools.send("Performance.enable")
                chromium, served = measured(lambda: open_app(page, url))
                metrics = {m["name"]: m["value"] for m in devtools.send("Performance.getMetrics")["metrics"]}
                opens.append((chromium, served, *(metrics[key] for key in MAIN_THREAD)))
                page.close()
            median = [statistics.median(column) for column in zip(*opens)]
            main_thread = ", ".join(f"{name} {value:.2f}" for name, value in zip(MAIN_THREAD.values(), median[2:]))
            print(f"page open (median of {args.pages}): Chromium {median[0]:.2f} CPU s, server {median[1]:.2f};")
            print(f"  the renderer's main thread: {main_thread} s")
            page = context.new_page()
            open_app(page, url)
            steps = {
                "apply a notation": lambda: (apply_notation(page, "4(3(2,2),2,3(2,2))"), stat(page, "ds").wait_for()),
                "apply Figure 2's again": lambda: (apply_notation(page, FIG2), stat(page, "ds").wait_for()),
                "Data & scores tab": lambda: (data_tab(page), page.get_by_role("button", name="Load data set").wait_for()),
                "load the bundled data": lambda: load_bundled_data(page),
                "sweep |X| = 1..3": lambda: (sweep(page, 3), page.get_by_text("★ Best cardinality by score").wait_for()),
                "back to the Model tab": lambda: model_tab(page),
            }  # fmt: skip
            for name, step in steps.items():
                chromium, served = measured(step)
                print(f"{name}: Chromium {chromium:.2f} CPU s, server {served:.2f}")
            context.close()
    finally:
        stop_app(server)


if __name__ == "__main__":
    main()
