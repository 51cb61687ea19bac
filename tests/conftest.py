"""Shared test configuration: hypothesis profiles (CI runs the same examples every time), and the suite's run on
several processes (pytest-xdist) with the ``exclusive`` marker's lock (CONTRIBUTING.md, "Running the tests")."""

import fcntl
import os
import tempfile
from contextlib import contextmanager

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci", max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("dev", max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ci" if os.environ.get("CI") else "dev")

#: The environment variable naming the lock file that the run's worker processes share.
LOCK_VARIABLE = "EFFDIM_TESTS_LOCK"
#: Byte ranges of the lock file: a waiting exclusive test holds the turnstile, so that the other workers
#: cannot keep starting tests ahead of it; every test holds the run lock, shared or exclusive.
TURNSTILE, RUN = 0, 1


def pytest_addoption(parser):
    parser.addini(
        "workers",
        "worker processes the suite runs on when -n is not given (pytest-xdist), at most one per CPU",
        default="1",
    )


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config):
    """Without ``-n``, ``--dist`` or ``--pdb``, the suite runs on ``workers`` processes (pyproject.toml), as
    pytest-xdist's ``-n`` would, but no more than the CPUs this process may use; ``-p no:xdist`` or ``-n 0`` runs
    it in this process."""
    if not hasattr(config.option, "numprocesses") or hasattr(config, "workerinput"):  # no xdist, or its worker
        return
    option = config.option
    if option.numprocesses is not None or option.dist != "no" or option.tx or option.usepdb or option.collectonly:
        return
    workers = min(int(config.getini("workers")), len(os.sched_getaffinity(0)))
    if workers > 1:
        option.numprocesses = workers
        option.dist = "worksteal"  # a worker that runs out takes tests queued on the other: no long tail


#: In a worker of a parallel run, the lock file shared with the other workers.
_lock_path: str | None = None


def pytest_configure(config):
    """The controller of a parallel run makes the lock file its workers share: they inherit the variable, and
    take it out of their environment so that a pytest a test runs in a subprocess does not wait for the lock."""
    global _lock_path
    if hasattr(config, "workerinput"):
        _lock_path = os.environ.pop(LOCK_VARIABLE, None)
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
def _turn(exclusive: bool):
    """Holds the run lock for one test: shared by ordinary tests, alone for an ``exclusive`` one. Outside a
    parallel run there is no other worker to wait for."""
    if _lock_path is None:
        yield
        return
    path = _lock_path
    with open(path, "r+b") as lock:
        fcntl.lockf(lock, fcntl.LOCK_EX, 1, TURNSTILE)
        try:
            fcntl.lockf(lock, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH, 1, RUN)
        finally:
            fcntl.lockf(lock, fcntl.LOCK_UN, 1, TURNSTILE)
        try:
            yield
        finally:
            fcntl.lockf(lock, fcntl.LOCK_UN, 1, RUN)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_protocol(item, nextitem):
    """Every test (its fixtures' set-up and tear-down included) runs holding the run lock; outside it, so that
    pytest-timeout's clock starts once the test may run."""
    with _turn(exclusive=item.get_closest_marker("exclusive") is not None):
        return (yield)
