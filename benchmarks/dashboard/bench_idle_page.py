"""What an open dashboard page costs the browser while nobody uses it: Chromium's CPU seconds over 20 s idle.

Start the dashboard as a user does (``effdim app --port 5092 --no-show``), then::

    python -m benchmarks.dashboard.bench_idle_page http://127.0.0.1:5092/effdim

Each of three pages is opened, left 5 s to settle, then idle for 20 s; the CPU seconds of every Chromium process
(``/proc/PID/stat``) over those 20 s are printed, with their median. Run it on a quiet machine: other Chromiums
count too. Figures: docs/performance.md.
"""

from __future__ import annotations

import argparse
import statistics
import time

from playwright.sync_api import sync_playwright

from benchmarks.common import chromium_cpu_seconds

IDLE_SECONDS = 20
SETTLE_SECONDS = 5


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url", help="the served dashboard, e.g. http://127.0.0.1:5092/effdim")
    parser.add_argument("--pages", type=int, default=3)
    args = parser.parse_args()
    idle = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=["--no-sandbox"])
        for _ in range(args.pages):
            page = browser.new_page(viewport={"width": 1366, "height": 768})
            page.goto(args.url)
            page.wait_for_selector(".effdim-dims .tabulator-row", timeout=60_000)
            time.sleep(SETTLE_SECONDS)
            before = chromium_cpu_seconds()
            time.sleep(IDLE_SECONDS)
            idle.append(chromium_cpu_seconds() - before)
            page.close()
        browser.close()
    print(
        f"Chromium CPU s in {IDLE_SECONDS} s idle:",
        [round(x, 2) for x in idle],
        f"median {statistics.median(idle):.2f}",
    )


if __name__ == "__main__":
    main()
