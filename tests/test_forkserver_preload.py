"""The job runner's forkserver, interrupted while it imports the engine, ends without a traceback (issue 60,
item 8: the executed example notebook printed a forkserver's ``KeyboardInterrupt`` traceback at kernel shutdown,
which interrupts the kernel's process group, as a terminal's Ctrl-C does to ``effdim app``)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import psutil

# A process that starts the job runner's forkserver as the notebook's dashboard does (warm_up without waiting) and
# says when the forkserver runs; it ends quietly on the interrupt itself.
DRIVER = """
import sys, time
try:
    from effdim_app.jobs import JobRunner
    JobRunner(workers=1).warm_up(wait=False)
    print("started", flush=True)
    time.sleep(60)
except KeyboardInterrupt:
    sys.exit(0)
"""


def importing(process: psutil.Process | None) -> bool:
    """Whether ``process`` is importing the engine: numpy's compiled core is loaded, the engine's modules (scipy,
    pandas, numba, effdim) follow for hundreds of milliseconds more. Before Python has set up its interrupt
    handling, an interrupt ends a process silently, and after the imports the forkserver ignores it."""
    try:
        return process is not None and any("numpy" in m.path for m in process.memory_maps())
    except psutil.Error:
        return False


def test_a_forkserver_interrupted_while_it_imports_the_engine_ends_quietly():
    driver = subprocess.Popen(
        [sys.executable, "-c", DRIVER],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group, as a kernel's
    )
    try:
        assert driver.stdout.readline().strip() == "started"
        deadline = time.monotonic() + 60
        forkserver = None
        while not importing(forkserver) and time.monotonic() < deadline:
            children = psutil.Process(driver.pid).children()
            forkserver = next((c for c in children if "forkserver" in " ".join(c.cmdline())), None)
            time.sleep(0.005)
        assert importing(forkserver), "no forkserver imported numpy"
        os.killpg(driver.pid, signal.SIGINT)  # the kernel's shutdown, or a terminal's Ctrl-C
        _, err = driver.communicate(timeout=60)
        forkserver.wait(timeout=30)
    finally:
        if driver.poll() is None:
            os.killpg(driver.pid, signal.SIGKILL)
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
