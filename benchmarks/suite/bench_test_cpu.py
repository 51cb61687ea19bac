"""CPU seconds a set of test files costs, by program (Chromium, Python, Playwright's driver), and its page opens.

Runs ``python -m pytest -q -p no:cacheprovider ARGS`` (on the suite's workers unless ARGS say otherwise) and
samples, ten times a second, every process descended from that pytest: its user + system time from
``/proc/PID/stat`` (threads that ended included). A process's last tenth of a second before it ends is missed.
CPU seconds, unlike wall-clock ones, hardly grow when other processes share the cores, so a change to what
the browser tests cost can be measured on a busy machine (CONTRIBUTING.md, "Running the tests"). The page
opens are the calls of Playwright's ``Page.goto`` and ``Page.reload`` (a plugin this script loads). It also says how
busy the machine's cores were during the run (``/proc/stat``, every process of the machine) and, on several workers,
for how many seconds only one of them ran a test (each test's start and end, as the plugin logs them).

With ``--per-test``, the tests run one at a time in one process (``-p no:xdist``) and each tenth of a second's
CPU goes to the test running then (the plugin writes its name to a file at each test's start and end): the
costliest tests and files, by program, to find where a suite's CPU goes.

Machines differ: the same suite took 5 min on one 2-core machine and 7.5 on another (CONTRIBUTING.md,
"Running the tests"). So each run is put between two yardsticks: the CPU seconds (the least of three runs) of
one fixed structure search, the clear-cut nine-leaf tree of tests/structure_cases.py on 20,000 rows, the same
work on every machine (``--yardstick-only`` prints it alone). Compare a run's seconds with another machine's
through the ratio of their yardsticks. One shared virtual machine's speed drifted by a third within minutes
(2 Dec 2026: 3.2 then 4.7 s), hence one before and one after.

Run: ``python -m benchmarks.suite.bench_test_cpu [--repeat N] [--per-test] tests/ui/test_proposal.py [more pytest
arguments]``
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path

from benchmarks.common import process_stat, program_of
from tests.structure_cases import clear_tree_data

PLUGIN = "bench_test_cpu_pages"
#: The plugin that counts page opens (appends one line per call to the file named by BENCH_PAGE_OPENS), logs each
#: test's worker, start and end (from its set-up to its tear-down, the run lock held) to BENCH_INTERVALS and, for
#: ``--per-test``, names the test that runs in the file named by BENCH_RUNNING_TEST (empty between tests).
PLUGIN_SOURCE = """
import os
import time

import pytest
from playwright.sync_api import Page

def _counted(method):
    def call(self, *args, **kwargs):
        with open(os.environ["BENCH_PAGE_OPENS"], "a") as out:
            out.write(method.__name__ + "\\n")
        return method(self, *args, **kwargs)
    return call

Page.goto = _counted(Page.goto)
Page.reload = _counted(Page.reload)

@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    running = os.environ.get("BENCH_RUNNING_TEST")
    if running:
        with open(running, "w") as out:
            out.write(item.nodeid)
    yield
    if running:
        open(running, "w").close()  # between tests

_started = {}
_relayed = False  # the controller of a parallel run, which hears of its workers' tests

def pytest_configure(config):
    global _relayed
    _relayed = getattr(config.option, "dist", "no") != "no" and not hasattr(config, "workerinput")

def pytest_runtest_logstart(nodeid, location):
    _started[nodeid] = time.monotonic()

def pytest_runtest_logfinish(nodeid, location):
    if _relayed:
        return
    with open(os.environ["BENCH_INTERVALS"], "a") as out:
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        out.write(f"{worker} {_started.pop(nodeid)} {time.monotonic()}\\n")
"""
#: Where ``--per-test`` puts the CPU seconds spent outside any test (start-up, collection, tear-down of the run).
BETWEEN = "(between tests)"


def _busy_jiffies() -> tuple[int, int]:
    """The machine's clock ticks so far: busy (not idle or waiting on I/O) and in all, over every CPU."""
    ticks = [int(n) for n in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return sum(ticks) - ticks[3] - ticks[4], sum(ticks)


def _alone(intervals: list[tuple[str, float, float]]) -> float:
    """Seconds during which exactly one worker ran a test, between the first test's start and the last one's end."""
    events = sorted([(start, 1) for _, start, _ in intervals] + [(end, -1) for _, _, end in intervals])
    alone, running, since = 0.0, 0, None
    for moment, change in events:
        if running == 1:
            alone += moment - since
        running += change
        since = moment
    return alone


class Sampler(threading.Thread):
    """Samples the CPU seconds of every process descended from ``root`` until stopped; with ``running`` (the
    file naming the test that runs), also each test's seconds by program."""

    def __init__(self, root: int, running: Path | None = None):
        super().__init__(daemon=True)
        self.root, self.running, self.stopped = root, running, threading.Event()
        self.seconds: dict[tuple[int, str], float] = {}
        self.programs: dict[tuple[int, str], str] = {}
        self.per_test: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))

    def run(self) -> None:
        while not self.stopped.wait(0.1):
            stats = {pid: s for pid in map(int, filter(str.isdigit, os.listdir("/proc"))) if (s := process_stat(pid))}
            inside = {self.root}
            for _ in range(20):  # parents before children, however the pids came
                grown = inside | {pid for pid, (parent, _, _) in stats.items() if parent in inside}
                if grown == inside:
                    break
                inside = grown
            test = (self.running.read_text() or BETWEEN) if self.running else BETWEEN
            for pid in inside & stats.keys():
                _, started, cpu = stats[pid]
                key = (pid, started)
                # the last program it runs (a shell script execs Chromium)
                self.programs[key] = program_of(pid) or self.programs.get(key, "ended unseen")
                before = self.seconds.get(key, 0.0)
                if cpu > before:
                    self.per_test[test][self.programs[key]] += cpu - before
                    self.seconds[key] = cpu

    def by_program(self) -> dict[str, float]:
        total: dict[str, float] = defaultdict(float)
        for key, cpu in self.seconds.items():
            total[self.programs[key]] += cpu
        return dict(total)


def measure(pytest_args: list[str], per_test: bool = False) -> tuple[dict[str, float], dict[str, dict[str, float]]]:
    """The run's wall seconds, exit code, page opens and CPU seconds by program; with ``per_test``, one test at a
    time, and each test's CPU seconds by program."""
    with tempfile.TemporaryDirectory() as folder:
        Path(folder, f"{PLUGIN}.py").write_text(PLUGIN_SOURCE)
        opens, running, intervals = (Path(folder, name) for name in ("opens.txt", "running.txt", "intervals.txt"))
        for path in (opens, running, intervals):
            path.touch()
        environment = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(filter(None, [folder, os.environ.get("PYTHONPATH")])),
            "BENCH_PAGE_OPENS": str(opens),
            "BENCH_INTERVALS": str(intervals),
        }
        if per_test:
            environment["BENCH_RUNNING_TEST"] = str(running)
            pytest_args = ["-p", "no:xdist", *pytest_args]
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", PLUGIN, *pytest_args]
        start, (busy, ticks) = time.monotonic(), _busy_jiffies()
        process = subprocess.Popen(command, env=environment)
        sampler = Sampler(process.pid, running if per_test else None)
        sampler.start()
        code = process.wait()
        wall = time.monotonic() - start
        busy_after, ticks_after = _busy_jiffies()
        sampler.stopped.set()
        sampler.join()
        tests = [(w, float(a), float(b)) for w, a, b in (line.split() for line in intervals.read_text().splitlines())]
        result = {
            "wall": wall,
            "exit": code,
            "page opens": len(opens.read_text().splitlines()),
            "cores busy": (busy_after - busy) / (ticks_after - ticks) * (os.cpu_count() or 1),
        }
        if len({worker for worker, _, _ in tests}) > 1:
            result["one worker alone s"] = _alone(tests)
        result.update(sampler.by_program())
        return result, {test: dict(seconds) for test, seconds in sampler.per_test.items()}


def print_per_test(per_test: dict[str, dict[str, float]], top: int) -> None:
    """The ``top`` costliest tests and files, CPU seconds in all and by program."""
    programs = sorted({p for seconds in per_test.values() for p in seconds}, key=lambda p: (p != "chromium", p))
    files: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for test, seconds in per_test.items():
        for program, cpu in seconds.items():
            files[test.split("::")[0]][program] += cpu
    for title, table in (("tests", per_test), ("files", files)):
        print(f"\ncostliest {title}: CPU s in all, " + ", ".join(programs))
        for name, seconds in sorted(table.items(), key=lambda item: -sum(item[1].values()))[:top]:
            split = " ".join(f"{seconds.get(p, 0.0):6.1f}" for p in programs)
            print(f"{sum(seconds.values()):7.1f}  {split}  {name}")


def yardstick(runs: int = 3) -> float:
    """The least CPU seconds of ``runs`` runs of one fixed structure search (BIC, seed 0) on
    :func:`tests.structure_cases.clear_tree_data`: the same candidates and E-steps on every machine, so its seconds measure the
    machine (Python and NumPy on one core), not the code under test."""
    from effdim.structure import learn_structure

    data = clear_tree_data()
    seconds = []
    for _ in range(runs):
        start = time.process_time()
        learn_structure(data, score="bic", seed=0)
        seconds.append(time.process_time() - start)
    return min(seconds)


def print_yardstick() -> None:
    print(f"yardstick: {yardstick():.2f} CPU s (load {os.getloadavg()[0]:.1f})", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1, help="runs to take the median of")
    parser.add_argument("--per-test", action="store_true", help="one test at a time: the costliest tests and files")
    parser.add_argument("--top", type=int, default=25, help="how many tests and files --per-test lists")
    parser.add_argument("--yardstick-only", action="store_true", help="print the machine's yardstick and stop")
    options, pytest_args = parser.parse_known_args()
    print_yardstick()
    if options.yardstick_only:
        return
    runs = []
    for _ in range(options.repeat):
        totals, per_test = measure(pytest_args, options.per_test)
        runs.append(totals)
        print(f"load {os.getloadavg()[0]:.1f}:", {k: round(v, 1) for k, v in totals.items()}, flush=True)
        if options.per_test:
            print_per_test(per_test, options.top)
        print_yardstick()
    if options.repeat > 1:
        keys = sorted({k for run in runs for k in run})
        print("median:", {k: round(statistics.median(run.get(k, 0.0) for run in runs), 1) for k in keys})


if __name__ == "__main__":
    main()
