"""The suite's parallel run (tests/scheduling.py): several workers by default, and an ``exclusive`` test while no
browser test runs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent

PROJECT = """
[tool.pytest.ini_options]
workers = "3"
markers = ["exclusive: runs while no browser test runs", "browser: drives a browser"]
"""

#: Six tests without a browser, two browser tests and two exclusive tests among them, each writing when it ran. The
#: exclusive tests go first to one worker with the browser tests, the others to the other workers, which run them
#: beside the exclusive block and then steal the browser tests, to wait for the block's end. On several workers
#: the block starts once a test without a browser has (at most 10 s later), whenever each worker came up.
TIMED_TESTS = """
import os, time
import pytest

def _ran(name, seconds):
    start = time.monotonic()
    time.sleep(seconds)
    with open(os.environ["INTERVALS"], "a") as out:
        out.write(f"{name} {os.getpid()} {start} {time.monotonic()}\\n")

PLAIN_STARTED = os.environ["INTERVALS"] + ".plain"  # made by the first test without a browser to start

def _plain(name):
    open(PLAIN_STARTED, "a").close()
    _ran(name, 0.2)

def _after_a_plain_test_started(seconds=10):
    if not os.environ.get("PYTEST_XDIST_WORKER"):  # one process: no other worker to wait for
        return
    deadline = time.monotonic() + seconds
    while not os.path.exists(PLAIN_STARTED) and time.monotonic() < deadline:
        time.sleep(0.01)

@pytest.mark.parametrize("n", range(3))
def test_plain(n):
    _plain(f"plain{n}")

@pytest.mark.browser
def test_browser():
    _ran("browser0", 0.2)

@pytest.mark.exclusive
def test_alone():
    _after_a_plain_test_started()
    _ran("alone", 1.0)

@pytest.mark.parametrize("n", range(3, 6))
def test_plain_after(n):
    _plain(f"plain{n}")

@pytest.mark.browser
def test_browser_after():
    _ran("browser1", 0.2)

@pytest.mark.exclusive
def test_alone_too():
    _ran("alone_too", 1.0)
"""


def _project(tmp_path: Path, tests: dict[str, str]) -> None:
    """A project of its own in ``tmp_path``: this suite's scheduling plugin as its conftest.py, its pytest settings and
    ``tests`` (file -> text)."""
    shutil.copy(TESTS / "scheduling.py", tmp_path / "conftest.py")
    (tmp_path / "pyproject.toml").write_text(PROJECT)
    for name, text in tests.items():
        (tmp_path / name).write_text(text)


def _pytest(tmp_path: Path, *options: str, **env_extra: str) -> subprocess.CompletedProcess:
    """pytest with ``options`` in the project at ``tmp_path``, outside this run's own settings; it must pass."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(("PYTEST_", "EFFDIM_TESTS_"))}
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # starts faster without the suite's other plugins
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *options],
        cwd=tmp_path,
        env={**env, **env_extra},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result


def _run(tmp_path: Path, *options: str) -> list[tuple[str, int, float, float]]:
    """The timed tests run by pytest with ``options`` in a project of their own with this suite's scheduling plugin;
    each test's name, process and interval."""
    _project(tmp_path, {"test_timed.py": TIMED_TESTS})
    intervals = tmp_path / "intervals.txt"
    result = _pytest(tmp_path, *options, INTERVALS=str(intervals))
    assert "10 passed" in result.stdout, result.stdout
    rows = [line.split() for line in intervals.read_text().splitlines()]
    return [(name, int(pid), float(start), float(end)) for name, pid, start, end in rows]


def test_by_default_as_many_workers_as_asked_at_most_the_cpus_and_the_exclusive_tests_in_one_block_without_browsers(
    tmp_path,
):
    runs = _run(tmp_path, "-p", "xdist.plugin")
    workers = min(3, len(os.sched_getaffinity(0)))
    assert len({pid for _, pid, _, _ in runs}) == workers, runs  # -n without being asked
    alone = sorted((run for run in runs if run[0].startswith("alone")), key=lambda run: run[2])
    others = [run for run in runs if not run[0].startswith("alone")]
    # both exclusive tests first, on one worker, and no browser test from the first one's start to the last one's end
    assert [run[0] for run in alone] == ["alone", "alone_too"] and alone[0][1] == alone[1][1], alone
    beside = [run for run in others if run[2] < alone[1][3] and alone[0][2] < run[3]]
    browsers = [run for run in beside if run[0].startswith("browser")]
    assert not browsers, f"browser tests during the block {alone}: {browsers}"
    # the tests without a browser ran beside the block and side by side (on a machine with more than one CPU)
    side_by_side = any(a[1] != b[1] and a[2] < b[3] and b[2] < a[3] for a in others for b in others)
    assert (beside and side_by_side) or workers == 1, runs


def test_one_process_without_xdist(tmp_path):
    runs = _run(tmp_path)
    assert len({pid for _, pid, _, _ in runs}) == 1, runs


def test_slowest_files_first_after_the_exclusive_tests_and_the_browser_tests(tmp_path):
    """The run's order (tests/scheduling.py): the exclusive tests, then the browser tests' files, then the others,
    each slowest first by durations.json, a file's tests together; ``--write-durations`` records the seconds of
    this run's files."""
    _project(
        tmp_path,
        {
            "test_a.py": "def test_a1(): pass\n\ndef test_a2(): pass\n",
            "test_b.py": "import time\n\ndef test_b1(): time.sleep(0.3)\n\ndef test_b2(): pass\n",
            "test_c.py": "def test_c1(): pass\n",
            "test_d.py": "import pytest\n\n@pytest.mark.exclusive\ndef test_d1(): pass\n",
            "test_e.py": "import pytest\n\n@pytest.mark.browser\ndef test_e1(): pass\n",
        },
    )

    def run() -> list[str]:
        result = _pytest(tmp_path, "--collect-only")
        return [line.split("::")[1] for line in result.stdout.splitlines() if "::" in line]

    assert run() == ["test_d1", "test_e1", "test_a1", "test_a2", "test_b1", "test_b2", "test_c1"]  # as collected
    (tmp_path / "durations.json").write_text(json.dumps({"test_a.py": 0.01, "test_c.py": 5.0, "test_e.py": 0.001}))
    assert run() == ["test_d1", "test_e1", "test_c1", "test_a1", "test_a2", "test_b1", "test_b2"]  # test_b.py last
    _pytest(tmp_path, "--write-durations", "test_b.py")
    durations = json.loads((tmp_path / "durations.json").read_text())
    assert durations["test_a.py"] == 0.01 and durations["test_c.py"] == 5.0  # files not run keep their seconds
    assert durations["test_b.py"] >= 0.3, durations
    assert run() == ["test_d1", "test_e1", "test_c1", "test_b1", "test_b2", "test_a1", "test_a2"]  # 0.3 s, before 0.01
