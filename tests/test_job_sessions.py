"""Whose each job is (effdim_app/job_sessions.py): a served session starts no job before its page connects,
a closed session's jobs end silently, jobs asking the same share one run, and a client's many jobs delay
its own, not the others'."""

from __future__ import annotations

import asyncio
import os
from collections import Counter

import pytest
from test_jobs import add, sleepy
from waiting import run_in_fresh_loop, until

from effdim_app.job_sessions import BuildTurns, fair_turn
from effdim_app.jobs import JobRunner

run = run_in_fresh_loop


def pid_after(seconds, *, progress=None):
    import time

    time.sleep(seconds)
    return os.getpid()


@pytest.fixture(scope="module")
def runner():
    r = JobRunner(workers=2, timeout=20, max_bytes=256 * 1024**2)
    r.warm_up()
    return r


def submit_as(runner: JobRunner, session: str, fn, *args, **kwargs):
    """Submit as the served session ``session`` would (logs.current_session names the submitter)."""
    from effdim_app import logs

    before = logs._session_lookup
    logs.use_session_lookup(lambda: session)
    try:
        return runner.submit(fn, *args, **kwargs)
    finally:
        logs.use_session_lookup(before)


def test_a_page_that_never_connects_starts_nothing_and_its_jobs_end_silently(runner):
    """A plain GET of a shared link builds a session whose page never connects: its job waits, a worker
    stays free for everyone else, and when the session closes the job ends without a word to its page."""

    async def go():
        runner.expect_session("curl", client="10.0.0.9")
        held = submit_as(runner, "curl", sleepy, 5.0, label="Exact de")
        heard, called = [], []
        held.param.watch(lambda e: heard.append(e.new), ["state", "seconds", "position"])
        held.add_done_callback(called.append)
        await asyncio.sleep(0.5)
        idle = (held.state, runner.running)
        other = await runner.submit(add, 1, 2, label="A student's job")
        runner.close_session("curl")
        await held
        return idle, other, held, heard, called

    idle, other, held, heard, called = run(go())
    assert idle == ("waiting", 0) and other == 3
    assert held.silenced and held.result is None and heard == [] and called == []


def test_a_connected_page_starts_its_jobs(runner):
    async def go():
        runner.expect_session("browser", client="10.0.0.8")
        job = submit_as(runner, "browser", add, 2, 2, label="Sum")
        await asyncio.sleep(0.3)
        before = job.state
        runner.session_connected("browser")
        return before, await job

    assert run(go()) == ("waiting", 4)


def test_a_closed_session_kills_its_running_job_and_says_nothing(runner):
    async def go():
        runner.expect_session("gone", client="10.0.0.7")
        runner.session_connected("gone")
        job = submit_as(runner, "gone", sleepy, 20.0, label="Sweep")
        await until(lambda: job.state == "running", "the job running")
        heard = []
        job.param.watch(lambda e: heard.append(e.new), ["state", "seconds"])
        runner.close_session("gone")
        await job
        late = submit_as(runner, "gone", add, 1, 1, label="From a callback still running")
        await late
        return job, heard, late, runner.running

    job, heard, late, running = run(go())
    assert heard == [] and job.silenced and job.state == "running"  # its page heard nothing more
    assert late.result is None and running == 0  # a job submitted after the close never runs


def test_jobs_asking_the_same_share_one_run(runner):
    async def go():
        jobs = [runner.submit(pid_after, 1.0, label=f"Exact de {i}", share="60:30,30,29") for i in range(3)]
        await until(lambda: all(j.state == "running" for j in jobs), "the shared run running")
        busy = runner.running
        jobs[0].cancel()  # one session leaves: the others' run goes on
        results = [await j for j in jobs]
        return jobs, busy, results

    jobs, busy, results = run(go())
    assert busy == 1 and [j.state for j in jobs] == ["cancelled", "done", "done"]
    assert results[1] == results[2] is not None


def test_a_shared_run_stops_once_no_job_shows_it(runner):
    async def go():
        jobs = [runner.submit(sleepy, 20.0, label="Exact de", share="heavy") for _ in range(2)]
        await until(lambda: runner.running == 1, "the shared run running")
        for job in jobs:
            job.cancel()
        await until(lambda: runner.running == 0, "the shared run stopped")
        return [j.state for j in jobs]

    assert run(go()) == ["cancelled", "cancelled"]


def test_a_clients_waiting_jobs_are_capped_and_others_go_first():
    """One client queueing many jobs: beyond the cap they fail at once, saying why; another client's job
    takes the next free worker before the first client's waiting ones."""
    runner = JobRunner(workers=1, timeout=20, max_bytes=256 * 1024**2, max_waiting=2)

    async def go():
        for session, client in (("attacker", "10.0.0.66"), ("student", "10.0.0.5")):
            runner.expect_session(session, client=client)
            runner.session_connected(session)
        flood = [submit_as(runner, "attacker", sleepy, 0.4, label=f"Exact de {i}") for i in range(4)]
        await asyncio.sleep(0.2)
        student = submit_as(runner, "student", add, 1, 1, label="A student's job")
        await student
        order = [j.state for j in flood]
        for job in flood:
            await job
        return flood, order

    flood, order = run(go())
    # the student's job went before the attacker's waiting ones, though it came after them
    assert order[0] == "done" and order[1] in ("waiting", "running") and order[2] == "waiting"
    assert flood[3].state == "failed"
    assert flood[3].error == (
        "not started: 2 computations from your computer are already waiting for a worker on this server, the most "
        "it takes; cancel one or wait for one to end."
    )


def test_a_free_worker_goes_to_the_client_with_the_fewest_running():
    class J:
        def __init__(self, client):
            self.client = client

    waiting = [J("a"), J("a"), J("b"), J("c")]
    assert fair_turn(waiting, [J("a"), J("b")], Counter()) == 3
    assert fair_turn(waiting, [J("a")], Counter()) == 2
    assert fair_turn(waiting, [], Counter()) == 0
    assert fair_turn(waiting, [], Counter({"a": 3, "b": 1})) == 3  # then the client served least


def test_pages_are_built_one_at_a_time_and_a_client_with_many_goes_after_the_others():
    """An address opening many pages at once delays its own pages, not the class's (BuildTurns)."""
    turns = BuildTurns()
    order, running = [], []

    async def build(client: str, name: str) -> None:
        async with turns.turn(client):
            running.append(name)
            assert len(running) == 1, running  # one build at a time
            order.append(name)
            await asyncio.sleep(0.01)
            running.remove(name)

    async def go():
        flood = [asyncio.ensure_future(build("10.0.0.66", f"attacker {i}")) for i in range(4)]
        await asyncio.sleep(0)
        student = asyncio.ensure_future(build("10.0.0.5", "student"))
        await asyncio.gather(*flood, student)

    run(go())
    assert order[:2] == ["attacker 0", "student"], order
