"""The suite's run on several processes (pytest-xdist): the ``exclusive`` marker's lock, the exclusive tests as one
block first, then the slowest test files first (CONTRIBUTING.md, "Running the tests"). A pytest plugin, loaded by
``tests/conftest.py``."""

import fcntl
import json
import os
import tempfile
from collections import defaultdict
from contextlib import contextmanager
from pathlib import Path

import pytest

#: The environment variable naming the lock file that the run's worker processes share.
LOCK_VARIABLE = "EFFDIM_TESTS_LOCK"
#: Byte ranges of the lock file: a waiting exclusive test holds the turnstile, so that the other workers
#: cannot keep starting browser tests ahead of it (and keeps it while the next test is exclusive too); exclusive
#: and browser tests hold the run lock, exclusive or shared.
TURNSTILE, RUN = 0, 1


#: Seconds each test file took in a whole run (set-up, call and tear-down of all its tests), written by
#: ``pytest --write-durations``; the run starts with the slowest files.
DURATIONS = Path(__file__).with_name("durations.json")


def pytest_addoption(parser):
    parser.addini(
        "workers",
        "worker processes the suite runs on when -n is not given (pytest-xdist), at most the CPUs",
        default="1",
    )
    parser.addoption(
        "--write-durations",
        action="store_true",
        help=f"record the seconds each test file of this run took in {DURATIONS.name} (the run's order comes from it)",
    )


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config):
    """Without ``-n``, ``--dist`` or ``--pdb``, the suite runs on ``workers`` processes (pyproject.toml), as
    pytest-xdist's ``-n`` would, but no more than the CPUs this process may use (a worker more kept both cores
    saturated and slowed every test, its Chromium and its jobs by more than it added: CONTRIBUTING.md, "Running
    the tests"); ``-p no:xdist`` or ``-n 0`` runs it in this process."""
    if not hasattr(config.option, "numprocesses") or hasattr(config, "workerinput"):  # no xdist, or its worker
        return
    option = config.option
    if option.numprocesses is not None or option.dist != "no" or option.tx or option.usepdb or option.collectonly:
        return
    workers = min(int(config.getini("workers")), len(os.sched_getaffinity(0)))
    if workers > 1:
        option.numprocesses = workers
        option.dist = "worksteal"  # a worker that runs out takes tests queued on the other: no long tail


def _file(item_or_report) -> str:
    return item_or_report.nodeid.split("::")[0]


def _is_exclusive(item) -> bool:
    return item.get_closest_marker("exclusive") is not None


def _is_browser(item) -> bool:
    return item.get_closest_marker("browser") is not None


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    """The ``exclusive`` tests first, one after another (each file's in their order, the slowest file's first),
    then the browser tests' files, then the others', each slowest first by :data:`DURATIONS` (a file it does
    not know last), a file's tests together and in their order.

    pytest-xdist's ``worksteal`` first hands each worker an equal share of the tests by count, in this order:
    the first worker gets the front (the exclusive tests, the browser tests, the longest other files), the
    others the rest, starting further down the list, where no test drives a browser; a worker that runs out
    steals the back half of another's queue. The first worker runs the exclusive tests as one block while the
    others run tests without a browser beside it (:func:`_turn`): the machine is emptied of browsers once, not
    once per exclusive test (CONTRIBUTING.md, "Running the tests")."""
    seconds = json.loads(DURATIONS.read_text()) if DURATIONS.exists() else {}
    files: dict[str, list] = defaultdict(list)
    for item in items:
        files[_file(item)].append(item)
    order = sorted(files, key=lambda name: -seconds.get(name, 0.0))  # stable: ties keep theirs
    items[:] = sorted(
        (item for name in order for item in files[name]),
        key=lambda item: (not _is_exclusive(item), not _is_browser(item)),
    )


_measured: defaultdict[str, float] = defaultdict(float)


def pytest_runtest_logreport(report):
    """Each test file's seconds, for ``--write-durations`` (in the controller: workers send it their reports)."""
    _measured[_file(report)] += report.duration


def pytest_sessionfinish(session):
    if session.config.getoption("write_durations", False) and not hasattr(session.config, "workerinput"):
        known = json.loads(DURATIONS.read_text()) if DURATIONS.exists() else {}
        known.update({name: round(total, 1) for name, total in _measured.items()})
        DURATIONS.write_text(json.dumps(dict(sorted(known.items())), indent=0) + "\n")


#: In a worker of a parallel run, the lock file shared with the other workers, open for the whole run: closing any
#: of a process's descriptors of a file drops every lock the process holds on it (POSIX), a kept turnstile too.
_lock = None


def pytest_configure(config):
    """The controller of a parallel run makes the lock file its workers share: they inherit the variable, and
    take it out of their environment so that a pytest a test runs in a subprocess does not wait for the lock."""
    global _lock
    if hasattr(config, "workerinput"):
        path = os.environ.pop(LOCK_VARIABLE, None)
        _lock = open(path, "r+b") if path else None  # open until the worker ends
    elif getattr(config.option, "numprocesses", None):
        handle, path = tempfile.mkstemp(prefix="effdim-tests-", suffix=".lock")
        os.close(handle)
        os.environ[LOCK_VARIABLE] = config.lock_path = path


def pytest_unconfigure(config):
    path = getattr(config, "lock_path", None)
    if path:
        os.environ.pop(LOCK_VARIABLE, None)
        os.unlink(path)


@contextmanager
def _turn(exclusive: bool, browser: bool, next_exclusive: bool):
    """Holds the run lock for one test: shared by browser tests, alone for an ``exclusive`` one; the other tests
    take no lock. An exclusive test followed by another on this worker keeps the turnstile, so that no other
    worker starts a browser test between them: a block of exclusive tests waits once for the other workers'
    browser tests to end, not once per test. A test without a browser runs beside it: mostly one process of the
    other worker (a few start a server or a pool for some seconds), where a browser test is Chromium's processes
    and a server's (one starved a job runner's event loop for 2.2 s). Outside a parallel run there is no other
    worker to wait for."""
    lock = _lock
    if lock is None or not (exclusive or browser):
        yield
        return
    fcntl.lockf(lock, fcntl.LOCK_EX, 1, TURNSTILE)  # at once if this worker's last test kept it
    try:
        fcntl.lockf(lock, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH, 1, RUN)
    finally:
        if not (exclusive and next_exclusive):
            fcntl.lockf(lock, fcntl.LOCK_UN, 1, TURNSTILE)
    try:
        yield
    finally:
        fcntl.lockf(lock, fcntl.LOCK_UN, 1, RUN)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_protocol(item, nextitem):
    """Every exclusive or browser test (its fixtures' set-up and tear-down included) runs holding the run lock;
    outside it, so that pytest-timeout's clock starts once the test may run."""
    with _turn(_is_exclusive(item), _is_browser(item), nextitem is not None and _is_exclusive(nextitem)):
        return (yield)
