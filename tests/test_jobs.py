"""The job layer: worker processes with progress, cancel, time limit, memory cap and a bounded queue."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from waiting import run_in_fresh_loop, until

from effdim_app.job_worker import WORKER_NICENESS
from effdim_app.jobs import JobRunner


# Worker functions: module level so they pickle by name.
def add(a, b, *, progress=None):
    progress(1, 1, "added")
    return a + b


def sleepy(seconds, *, progress=None):
    steps = 20
    for i in range(steps):
        time.sleep(seconds / steps)
        progress(i + 1, steps)
    return os.getpid()


def chatty(reports, *, progress=None):
    """Reports progress as fast as it can (a search over many quick candidates reports after each)."""
    for i in range(reports):
        progress(i + 1, reports, f"report {i + 1}")
    return reports


def silent(seconds, *, progress=None):
    """A long computation that reports no progress (a progress call to a dead server would end it)."""
    time.sleep(seconds)


def niceness(*, progress=None):
    return os.nice(0)


def hog(n_bytes, *, progress=None):
    return len(bytearray(n_bytes))


def fails(*, progress=None):
    from effdim.model import ModelError

    raise ModelError("node 'H9' does not exist")


def breaks(*, progress=None):
    """A library's error, not an engine refusal (pandas on a column of lists)."""
    raise TypeError("unhashable type: 'numpy.ndarray'")


def dies(*, progress=None):
    os._exit(3)


run = run_in_fresh_loop


@pytest.fixture(scope="module")
def runner():
    r = JobRunner(workers=2, timeout=20, max_bytes=256 * 1024**2)
    r.warm_up()
    return r


def test_result_and_progress(runner):
    async def go():
        job = runner.submit(add, 2, 3, label="Adding")
        result = await job
        return job, result

    job, result = run(go())
    assert result == 5 and job.state == "done"
    assert (job.done, job.total) == (1, 1) and job.progress == 1.0
    assert job.note == "added"  # the words cross the pipe
    assert "done in" in job.describe()


def test_workers_yield_the_cpu_to_the_server(runner):
    # a sweep on every core must not slow the event loop that serves every page
    async def go():
        return await runner.submit(niceness, label="Niceness")

    assert run(go()) == min(19, os.nice(0) + WORKER_NICENESS)


def test_runs_in_another_process_and_progress_arrives_while_running(runner):
    async def go():
        job = runner.submit(sleepy, 1.0, label="Sleeping")
        seen = []
        await until(lambda: seen.append(job.done) or job.finished, "the job finished", every=0.05)
        return job, seen

    job, seen = run(go())
    assert job.state == "done" and job.result != os.getpid()
    assert any(0 < s < 20 for s in seen), seen  # intermediate progress reached the loop


@pytest.mark.exclusive  # a bound on seconds (the loop's longest gap), which another worker's browser test would eat into
def test_a_worker_reporting_without_pause_does_not_hold_the_event_loop(runner):
    """Reports are read for at most one poll's time and only the last is shown: read one by one, these 50,000
    would hold the loop that serves every page for seconds."""
    reports = 50_000

    async def go():
        gaps = []

        async def beat():
            while True:
                before = time.monotonic()
                await asyncio.sleep(0.01)
                gaps.append(time.monotonic() - before)

        heart = asyncio.create_task(beat())
        job = runner.submit(chatty, reports, label="Chatty")
        notes = []
        job.param.watch(lambda event: notes.append(event.new), ["note"])
        result = await job
        heart.cancel()
        return result, notes, max(gaps)

    result, notes, longest_gap = run(go())
    assert result == reports
    assert notes[-1] == f"report {reports}"  # the last report is the one left on screen
    assert len(notes) < reports / 10  # shown once per poll, not once per report
    assert longest_gap < 2.0, f"the event loop was held for {longest_gap:.1f} s"


@pytest.mark.exclusive  # a bound on seconds
def test_cancel_kills_the_worker_at_once(runner):
    async def go():
        job = runner.submit(sleepy, 30.0, label="Long")
        await until(lambda: job.state == "running" and job.done > 0, "the job's first progress")
        t0 = time.monotonic()
        job.cancel()
        await job
        return job, time.monotonic() - t0

    job, took = run(go())
    assert job.state == "cancelled" and job.result is None
    assert took < 2.0


@pytest.mark.exclusive  # a bound on seconds
def test_time_limit_kills_and_says_so(runner):
    async def go():
        job = runner.submit(sleepy, 30.0, label="Long", timeout=0.5)
        t0 = time.monotonic()
        await job
        return job, time.monotonic() - t0

    job, took = run(go())
    assert job.state == "timed out" and took < 3.0
    assert "time limit" in job.describe()


def test_memory_cap_turns_a_huge_allocation_into_a_message(runner):
    async def go():
        job = runner.submit(hog, 8 * 1024**3, label="Hog")
        await job
        return job

    job = run(go())
    assert job.state == "failed"
    assert "more memory than one computation may use" in job.error and "256.0 MiB" in job.error


def test_engine_errors_and_dead_workers_are_reported(runner):
    async def go():
        a = runner.submit(fails, label="Bad")
        b = runner.submit(dies, label="Dies")
        await a
        await b
        return a, b

    a, b = run(go())
    assert a.state == "failed" and "'H9' does not exist" in a.error
    assert b.state == "failed" and "exit status 3" in b.error


def test_an_error_that_is_no_engine_refusal_is_not_shown_in_a_librarys_words(runner):
    """The user reads that effdim failed, not her input, and no library's message."""

    async def go():
        job = runner.submit(breaks, label="Reading survey.parquet")
        await job
        return job

    job = run(go())
    assert job.state == "failed" and "unhashable" not in job.error
    assert job.describe() == (
        "Reading survey.parquet: an unexpected error inside effdim, not a problem with your input "
        "(the server's log has the details)"
    )


def test_at_most_workers_run_and_the_rest_wait_in_order(runner):
    async def go():
        jobs = [runner.submit(sleepy, 0.6, label=f"J{i}") for i in range(4)]
        await asyncio.sleep(0.2)
        states = [j.state for j in jobs]
        positions = [j.position for j in jobs[2:]]
        note, running = jobs[3].describe(), jobs[0].describe()
        busy = runner.running
        jobs[3].cancel()  # a waiting job leaves the queue without running
        for j in jobs:
            await j
        return jobs, states, positions, busy, note, running

    jobs, states, positions, busy, note, running = run(go())
    assert states == ["running", "running", "waiting", "waiting"] and positions == [0, 1] and busy == 2
    assert note == "J3: waiting for a free worker (1 job ahead)."
    # a running job's line gives its time limit, not a stop that has not happened
    assert re.fullmatch(rf"J0: running for \d+ s \(time limit {jobs[0].timeout:.0f} s\)\.", running), running
    assert [j.state for j in jobs] == ["done", "done", "done", "cancelled"]
    assert runner.running == 0 and runner.waiting == 0


def test_fork_is_refused():
    with pytest.raises(ValueError, match="forkserver"):
        JobRunner(start_method="fork")


def test_jobs_can_be_submitted_and_cancelled_from_another_thread(runner):
    async def go():
        runner.attach()
        job = await asyncio.to_thread(runner.submit, sleepy, 30.0, label="From a thread")
        await until(lambda: job.state == "running", "the job running")
        await asyncio.to_thread(job.cancel)
        await job
        done = await asyncio.to_thread(runner.submit, add, 1, 2, label="Sum")
        return job, await done

    job, total = run(go())
    assert job.state == "cancelled" and total == 3


SERVER_WITH_A_LONG_JOB = """
import asyncio, sys, time
sys.path.insert(0, {tests!r})
from effdim_app.jobs import JobRunner
from test_jobs import silent

async def main():
    runner = JobRunner(workers=1, timeout=120, max_bytes=256 * 1024**2)
    runner.submit(silent, 60, label="Sleeping")
    print("submitted", flush=True)
    await asyncio.sleep(120)

if __name__ == "__main__":  # multiprocessing may run this file again in a worker, as __mp_main__
    asyncio.run(main())
"""


#: A process that imports ``{setup}``, runs ``{start}`` and prints how long that took and how many forkservers it
#: has once one started (or after 60 s).
FORKSERVER_STARTED_BY = """
import time, psutil
{setup}

if __name__ == "__main__":
    start = time.monotonic()
    {start}
    returned = time.monotonic() - start
    forkservers = lambda: [p for p in psutil.Process().children() if "forkserver" in " ".join(p.cmdline())]
    while not forkservers() and time.monotonic() - start < 60:
        time.sleep(0.05)
    print(round(returned, 3), len(forkservers()), flush=True)
"""


def _forkservers_started_by(setup: str, statement: str, tmp_path) -> tuple[float, int, str]:
    """Seconds ``statement`` took in a fresh process after ``setup``, the forkservers that process then has, and
    its stderr."""
    script = tmp_path / "start.py"
    script.write_text(FORKSERVER_STARTED_BY.format(setup=setup, start=statement))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    returned, forkservers = done.stdout.split() or ("nan", "0")
    return float(returned), int(forkservers), done.stderr


def test_a_warm_up_without_waiting_starts_the_forkserver_beside_its_caller(tmp_path):
    """``panel serve``'s runner is made with the first page, on the event loop: it starts the forkserver (an
    import of the engine, about a second) in a thread, not at the first job and not on the loop."""
    returned, forkservers, stderr = _forkservers_started_by(
        "from effdim_app.jobs import JobRunner", "JobRunner(workers=1).warm_up(wait=False)", tmp_path
    )
    assert returned < 0.5 and forkservers == 1, stderr


def test_a_notebook_dashboard_starts_its_worker_processes_before_its_first_job(tmp_path):
    """In a notebook the first sweep waited for the forkserver's start (1.35 s against 0.28 s after, in a
    JupyterLab kernel): ``effdim_app.app`` starts it beside the kernel as the dashboard is shown."""
    _, forkservers, stderr = _forkservers_started_by(
        "import effdim_app", 'effdim_app.app("3:2,2,2")  # as in a notebook\'s cell; no job run', tmp_path
    )
    assert forkservers == 1, stderr


SERVER_THAT_COUNTS_ITS_RUNS = """
import asyncio, sys
sys.path.insert(0, {tests!r})
with open({runs!r}, "a") as runs:  # every run of this file: as the server, or again in a worker
    runs.write(__name__ + "\\n")
from effdim_app.jobs import JobRunner
from test_jobs import add

async def main():
    runner = JobRunner(workers=1, timeout=60, max_bytes=256 * 1024**2)
    print([await runner.submit(add, i, 1, label="Sum") for i in range(3)], flush=True)

if __name__ == "__main__":
    asyncio.run(main())
"""


def test_job_workers_do_not_run_the_servers_script_again(tmp_path):
    """A server started by a script's path (``effdim app``, ``panel serve``): multiprocessing ran that script
    again in every worker, under ``panel serve`` an import of Panel, 1.3 s per job (effdim_app/worker_main.py)."""
    runs, script = tmp_path / "runs.txt", tmp_path / "server.py"
    script.write_text(SERVER_THAT_COUNTS_ITS_RUNS.format(tests=str(Path(__file__).parent), runs=str(runs)))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "[1, 2, 3]", done.stderr
    assert runs.read_text().split() == ["__main__"]  # not once more per job ("__mp_main__")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc and reparenting are Linux's")
def test_job_workers_die_with_a_killed_server(tmp_path):
    """kill -9 of the server while a job runs: nothing it started lives on (the worker, the forkserver,
    multiprocessing's resource tracker), even while the killed server is not reaped yet (a zombie still
    answers ``kill(pid, 0)``, which is all the worker used to watch: all three lived on)."""
    script = tmp_path / "server.py"
    script.write_text(SERVER_WITH_A_LONG_JOB.format(tests=str(Path(__file__).parent)))
    server = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    tree: list[psutil.Process] = []
    try:
        assert server.stdout.readline().strip() == "submitted"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not any(p.ppid() != server.pid for p in tree):
            tree = psutil.Process(server.pid).children(recursive=True)  # tracker, forkserver, then its worker
            time.sleep(0.2)
        assert len(tree) >= 3, f"the job's worker did not start: {[p.cmdline()[-1][:40] for p in tree]}"
        os.kill(server.pid, signal.SIGKILL)  # and not reaped until the end
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and _alive(tree):
            time.sleep(0.2)
        survivors = [f"{p.pid} {' '.join(p.cmdline())[:80]}" for p in _alive(tree)]
    finally:
        server.kill()
        server.wait(timeout=10)
        for p in _alive(tree):  # whatever survived, so that a failure leaves nothing behind
            p.kill()
    assert survivors == [], f"outlived the server: {survivors}"


def _alive(processes) -> list:
    def running(p) -> bool:
        try:
            return p.is_running() and p.status() != psutil.STATUS_ZOMBIE
        except psutil.NoSuchProcess:
            return False

    return [p for p in processes if running(p)]
