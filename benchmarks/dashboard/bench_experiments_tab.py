"""A class opening the Experiments tab at once: when each session gets the tab's three figures.

Each session that opens the tab gets its figures in a thread of the server
(``effdim_app/views/experiments_view.py``, ``_figures``): ``--sessions``
threads ask at once, as that many sessions would, and the script prints
when the first, the median and the last got them, and the process's CPU
seconds (the imports of HoloViews and Bokeh are done before the clock
starts). Compare two versions by running it in each (docs/robustness.md,
"The Experiments tab in a class").

Run: ``python -m benchmarks.dashboard.bench_experiments_tab [--sessions 10]``
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time

import bokeh.plotting  # noqa: F401 - imported before the clock starts, as a running server has
import holoviews  # noqa: F401

from effdim.experiments.committed import RESULTS_DIR, load_committed
from effdim.experiments.plots import lc_summary_figure, table2_figure
from effdim_app.views.experiments_view import _figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=10)
    options = parser.parse_args()
    results = load_committed(RESULTS_DIR)
    generator = "8:2,2,2,2"  # the tab's default: Figure 4's generating model
    ends: list[float] = []
    cpu, start = time.process_time(), time.perf_counter()

    def session() -> None:
        _figures(RESULTS_DIR, lc_summary_figure, results.lc_summary, generator)
        _figures(RESULTS_DIR, table2_figure, results.hlc_table2)
        ends.append(time.perf_counter() - start)

    threads = [threading.Thread(target=session) for _ in range(options.sessions)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    print(
        f"{options.sessions} sessions: figures after {min(ends):.2f} s (first), {statistics.median(ends):.2f} s "
        f"(median), {max(ends):.2f} s (last); {time.process_time() - cpu:.1f} CPU s"
    )


if __name__ == "__main__":
    main()
