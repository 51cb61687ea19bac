"""What a job hands out as it goes (effdim_app.jobs: ``progress.partial``, :attr:`Job.partial`) stays with the job
whether it ends done, cancelled, timed out or failed: a sweep stopped part way keeps the fits it finished."""

from __future__ import annotations

import time

import pytest
from waiting import run_in_fresh_loop, until

from effdim import EMSettings, datasets
from effdim_app.jobs import JobRunner
from effdim_app.tasks import sweep_task


def parts_then(end: str, count: int, *, progress=None):
    """Hands out ``count`` parts, then ends as ``end`` says: returns, sleeps (to be stopped), or fails."""
    for i in range(count):
        progress.partial(f"part {i + 1}")
        progress(i + 1, count + 1)
    if end == "sleep":
        time.sleep(60)
    if end == "fail":
        raise ValueError("a defect")
    return "whole"


@pytest.fixture(scope="module")
def runner():
    r = JobRunner(workers=2, timeout=30, max_bytes=512 * 1024**2)
    r.warm_up()
    return r


def test_the_parts_reach_the_job_in_order_whatever_its_end(runner):
    async def go(end: str, cancel: bool = False, **options):
        job = runner.submit(parts_then, end, 3, label="Parts", **options)
        if cancel:
            await until(lambda: len(job.partial) == 3, "the job's three parts")
            job.cancel()
        await job
        return job

    done = run_in_fresh_loop(go("return"))
    assert done.state == "done" and done.result == "whole" and done.partial == ["part 1", "part 2", "part 3"]
    cancelled = run_in_fresh_loop(go("sleep", cancel=True))
    assert cancelled.state == "cancelled" and cancelled.partial == ["part 1", "part 2", "part 3"]
    timed_out = run_in_fresh_loop(go("sleep", timeout=3))
    assert timed_out.state == "timed out" and timed_out.partial == ["part 1", "part 2", "part 3"]
    failed = run_in_fresh_loop(go("fail"))
    assert failed.state == "failed" and failed.partial == ["part 1", "part 2", "part 3"]


def test_a_sweep_job_hands_out_each_fit_as_it_finishes(runner):
    data = datasets.load("stouffer-toby")

    async def go():
        job = runner.submit(
            sweep_task,
            data,
            model=None,
            node=None,
            cards=[1, 2, 3],
            until_saturated=False,
            settings=EMSettings(restarts=1, seed=0),
            label="Sweep",
        )
        await job
        return job

    job = run_in_fresh_loop(go())
    assert [f.card for f in job.partial] == [1, 2, 3]
    assert [f.loglik for f in job.partial] == [f.loglik for f in job.result]
