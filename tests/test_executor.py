"""effdim.executor: the engine's job runner; its local workers die with their parent."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from effdim.executor import Execution, run_each


def square(config: dict) -> dict:
    if config["x"] < 0:
        raise ValueError("negative")
    return {"y": config["x"] ** 2}


@pytest.mark.parametrize("executor", ["serial", "processes"])
def test_run_each_finishes_and_fails_each_job(executor):
    configs = {str(x): {"x": x} for x in (-1, 2, 3)}
    done, failed = {}, {}
    used, workers = run_each(
        square,
        configs,
        list(configs),
        lambda k, r, s: done.update({k: r["y"]}),
        lambda k, e: failed.update({k: str(e)}),
        Execution(executor, 2),
    )
    assert done == {"2": 4, "3": 9} and failed == {"-1": "negative"}
    assert (used, workers) == ((executor, 1) if executor == "serial" else (executor, 2))


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_experiment_workers_die_with_a_killed_parent(tmp_path):
    command = [
        sys.executable,
        "-m",
        "effdim.cli",
        "experiment",
        "lc",
        "--quick",
        "--workers",
        "2",
        "--no-cache",
        "--no-plots",
        "--out",
        str(tmp_path / "out"),
        "--quiet",
    ]
    proc = subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    workers: set[int] = set()
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and len(workers) < 2:
            workers = {p.pid for p in psutil.Process(proc.pid).children(recursive=True)}  # all it started
            time.sleep(0.2)
        assert len(workers) >= 2, "the experiment did not start its workers"
        os.kill(proc.pid, signal.SIGKILL)  # and not reaped until the end: a zombie parent is gone all the same
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(alive(w) for w in workers):
            time.sleep(0.1)
        survivors = [w for w in workers if alive(w)]
    finally:
        proc.kill()
        proc.wait(timeout=10)
        for pid in workers:  # whatever survived, so that a failure leaves nothing behind
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
    assert survivors == []


def test_the_bootstrap_does_not_import_the_experiment_harness():
    code = (
        "import sys, effdim.bootstrap, effdim.cli; "
        "print(sorted(m for m in sys.modules if m.startswith('effdim.experiments')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
