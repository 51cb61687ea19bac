"""Heavy work of the dashboard in killable worker processes (no Panel import here).

One server serves a whole class on one event loop (docs/robustness.md): a
computation run on that loop freezes every session, and a huge allocation in
the server process kills them all. So every computation that may be slow or
large (dimensions beyond a quick threshold, the whole-tree rank, sweeps,
climbs) is a :class:`Job` run by the process-wide :class:`JobRunner`:

* each job runs in its **own worker process**, started from a ``forkserver``
  (``spawn`` where there is none) that preloads the engine, never by forking
  the server; the process is killed on cancel, on its time limit, or when its
  session closes, and all its memory goes with it;
* the worker's address space is capped (``RLIMIT_AS``) at its start size plus
  the per-job memory limit, so an allocation the size checks missed fails
  with ``MemoryError`` inside the worker instead of waking the kernel's
  out-of-memory killer;
* at most ``workers`` jobs run at once (the machine's cores); later jobs wait
  in a queue, and each knows its place in it; a free worker takes the first
  job of the client with the fewest jobs running, and a client's waiting jobs
  are capped (``max_waiting``), so one client's many jobs delay its own;
* a served session's jobs start only once its page has connected, and a closed
  session's jobs are cancelled without a word to its page
  (:mod:`effdim_app.job_sessions`); jobs asking the same (``share``) show one
  run;
* ``progress(done, total, note="")`` calls in the worker reach
  :attr:`Job.progress` and :attr:`Job.note` through a pipe, polled by the
  server's event loop without blocking it;
* ``progress.partial(value)`` hands out a part of the result as soon as it
  is done (a sweep's finished fit, a structure search's best tree so far):
  it reaches :attr:`Job.partial` the same
  way, and stays there when the job is then cancelled, timed out or fails,
  so what was finished is never lost with the worker.

The functions a job runs are module-level functions taking a keyword
``progress`` (see :mod:`effdim_app.tasks`); their arguments and results are
pickled.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import os
import threading
import time
from collections import Counter, deque
from collections.abc import Callable
from typing import Any

from effdim.limits import format_bytes

from .job import FINISHED, JOB_STATES, MIRRORED, Job
from .job_sessions import SessionBook, fair_turn
from .job_worker import UNEXPECTED, run_job, start_nothing
from .logs import LOG, swallowed
from .worker_main import name_the_main_script

__all__ = ["Job", "JobRunner", "JOB_STATES", "FINISHED", "UNEXPECTED"]

#: What the forkserver imports once (:mod:`effdim_app.forkserver_preload`): the stand-in for the server's main script
#: (no worker runs it again), its watch on the server (it ends with it), and the engine, so a worker starts in
#: milliseconds; an interrupt meanwhile ends it quietly.
PRELOAD = ["effdim_app.forkserver_preload"]
_POLL_SECONDS = 0.05


class JobRunner:
    """Runs :class:`Job` s in at most ``workers`` worker processes at once; one per server process.

    Parameters
    ----------
    workers:
        Jobs running at the same time (default 2, the cores of a small laptop).
    timeout:
        Seconds a job may run before its process is killed (per job, overridable).
    max_bytes:
        Memory one worker may allocate beyond its start size.
    start_method:
        ``"forkserver"`` (default where available) or ``"spawn"``; never ``"fork"``:
        forking the server would copy its threads' locks and its sessions.
    max_waiting:
        Jobs one client may have waiting at once (None: no cap); a job beyond it fails at once, saying so.

    A served session's jobs start once its page has connected, and end silently when it closes
    (:meth:`expect_session`, :meth:`session_connected`, :meth:`close_session`; effdim_app/job_sessions.py).
    """

    def __init__(
        self,
        workers: int = 2,
        timeout: float = 60.0,
        max_bytes: int = 2 * 1024**3,
        start_method: str | None = None,
        max_waiting: int | None = None,
    ):
        if workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        if start_method is None:
            start_method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
        if start_method == "fork":
            raise ValueError("worker processes must not be forked from the server: use 'forkserver' or 'spawn'")
        self.workers = int(workers)
        self.timeout = float(timeout)
        self.max_bytes = int(max_bytes)
        self._ctx = multiprocessing.get_context(start_method)
        if start_method == "forkserver":
            name_the_main_script()
            self._ctx.set_forkserver_preload(PRELOAD)
        self.max_waiting = max_waiting
        self.sessions = SessionBook()
        self._running: set[Job] = set()
        self._queue: deque[tuple[Job, asyncio.Future]] = deque()
        self._shared: dict[tuple, Job] = {}
        self._started: Counter = Counter()  # client -> jobs started while it had jobs waiting or running
        self._loop: asyncio.AbstractEventLoop | None = None

    # ------------------------------------------------------------ public
    def submit(self, fn: Callable, *args, label: str, timeout: float | None = None, share: Any = None, **kwargs) -> Job:
        """Queue ``fn(*args, progress=..., **kwargs)`` for a worker.

        ``share``: a key (hashable) naming what the job computes, for a job that any session asking the
        same may share: while a run of ``fn`` with the same key waits or runs, the new job shows that run
        instead of starting another (a shared link opened by a whole class computes its de once); the run
        is cancelled once every job showing it is. From the event loop, or from another thread once the
        runner has seen its loop (a server's callback threads, ``effdim app --threads``).
        """
        job = Job(self, fn, args, kwargs, label=label, timeout=self.timeout if timeout is None else timeout)
        self.sessions.add(job)
        key = None if share is None else (fn, share)
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        if loop is not None:
            self._loop = loop
            job._task = loop.create_task(self._run(job, key))
        elif self._loop is not None and self._loop.is_running():
            job._task = asyncio.run_coroutine_threadsafe(self._run(job, key), self._loop)
        else:
            self.sessions.discard(job)
            raise RuntimeError("jobs need a running event loop")
        return job

    def expect_session(self, session: str, client: str) -> None:
        """A served session's page is being built for ``client``: its jobs wait until :meth:`session_connected`."""
        self.sessions.expect(session, client)

    def session_connected(self, session: str) -> None:
        """The session's page has connected: its jobs may start."""
        self.sessions.connect(session)

    def close_session(self, session: str) -> None:
        """The session is gone: cancel its jobs, silently (:attr:`Job.silenced`: no view of it is left)."""
        for job in self.sessions.close(session):
            job.silenced = True
            job.cancel()

    def attach(self, loop: asyncio.AbstractEventLoop | None = None) -> None:
        """Remember the event loop jobs run on (default: the running one), so that other threads can submit jobs."""
        self._loop = loop or asyncio.get_running_loop()

    def _call_soon(self, fn: Callable, *args) -> None:
        """``fn(*args)`` on the runner's loop: now if we are on it, else at its next turn."""
        try:
            here = asyncio.get_running_loop()
        except RuntimeError:
            here = None
        if self._loop is None or here is self._loop:
            fn(*args)
        else:
            self._loop.call_soon_threadsafe(fn, *args)

    @property
    def running(self) -> int:
        return len(self._running)

    @property
    def waiting(self) -> int:
        return len(self._queue)

    def warm_up(self, wait: bool = True) -> None:
        """Start the forkserver now (it imports the engine once, about a second), not at the first job; with
        ``wait=False`` in a thread, so that the caller (a page being built on the server's event loop) goes on."""
        if not wait:
            threading.Thread(target=self.warm_up, name="effdim-jobs-warm-up", daemon=True).start()
            return
        proc = self._ctx.Process(target=start_nothing)
        try:
            proc.start()
        except (EOFError, OSError) as err:  # the forkserver ended before it forked: an interrupt stops this process
            LOG.info("job workers not warmed up: the forkserver ended (%s)", err or type(err).__name__)
            return
        proc.join()

    # ------------------------------------------------------------ queue
    async def _run(self, job: Job, share: tuple | None) -> None:
        try:
            job._held = True
            connected = await self.sessions.until_connected(job.session)
            job._held = False
            if not connected or job._cancel_requested:
                if not job.finished:
                    job._show(state="cancelled", error="cancelled before it started.")
            elif share is not None:
                await self._follow(job, share)
            else:
                await self._take_turn(job)
        finally:
            self.sessions.discard(job)
            callbacks, job._callbacks = job._callbacks, []
            for fn in callbacks if not job.silenced else ():
                fn(job)

    async def _follow(self, job: Job, key: tuple) -> None:
        """Show the shared run of ``key`` in ``job``, starting the run if none waits or runs."""
        run = self._shared.get(key)
        if run is None:
            fn, args, kwargs = job._call
            run = Job(self, fn, args, kwargs, label=job.label, timeout=job.timeout)
            run.session, run.client = job.session, job.client
            self._shared[key] = run
            run._task = asyncio.ensure_future(self._take_turn(run))
            run._task.add_done_callback(lambda _: self._shared.pop(key) if self._shared.get(key) is run else None)
        run._followers.add(job)
        job._follows = run
        job._detached = asyncio.get_running_loop().create_future()

        def mirror(*_) -> None:
            if not run.finished:  # the end is shown below, the result with it
                job._show(state=run.state, **{name: getattr(run, name) for name in MIRRORED})

        mirror()
        watcher = run.param.watch(mirror, ["state", *MIRRORED])
        try:
            await asyncio.wait([run._task, job._detached], return_when=asyncio.FIRST_COMPLETED)
        finally:
            run.param.unwatch(watcher)
        if job._detached.done():
            job._show(state="cancelled", error="cancelled.")
            return
        job.result, job._worker_error = run.result, run._worker_error
        job._show(state=run.state, **{name: getattr(run, name) for name in MIRRORED})

    async def _take_turn(self, job: Job) -> None:
        if len(self._running) < self.workers and not self._queue:
            self._running.add(job)
            self._started[job.client] += 1
        elif self._client_waits_too_much(job):
            return
        else:
            turn = asyncio.get_running_loop().create_future()
            self._queue.append((job, turn))
            self._number_queue()
            try:
                await turn  # _next() moved the job into _running
            except asyncio.CancelledError:
                job._show(state="cancelled", error="cancelled before it started.")
                return
        try:
            await self._execute(job)
        finally:
            self._running.discard(job)
            self._next()

    def _client_waits_too_much(self, job: Job) -> bool:
        """Fail ``job`` at once, saying why, if its client already has :attr:`max_waiting` jobs waiting."""
        waiting = sum(1 for queued, _ in self._queue if queued.client == job.client)
        if self.max_waiting is None or waiting < self.max_waiting:
            return False
        job._show(
            state="failed",
            error=f"not started: {waiting} computations from your computer are already waiting for a worker on this "
            "server, the most it takes; cancel one or wait for one to end.",
        )
        return True

    def _next(self) -> None:
        while self._queue and len(self._running) < self.workers:
            turn_of = fair_turn([queued for queued, _ in self._queue], list(self._running), self._started)
            job, turn = self._queue[turn_of]
            del self._queue[turn_of]
            if turn.done():
                continue
            self._running.add(job)
            self._started[job.client] += 1
            turn.set_result(None)
        present = {job.client for job in self._running} | {job.client for job, _ in self._queue}
        for client in [c for c in self._started if c not in present]:  # a client with nothing left starts afresh
            del self._started[client]
        self._number_queue()

    def _number_queue(self) -> None:
        for i, (job, _) in enumerate(self._queue):
            if job.position != i:
                job._show(position=i)

    def _cancel_waiting(self, job: Job) -> None:
        run = job._follows
        if run is not None:  # a follower leaves the shared run; the run stops once none shows it
            run._followers.discard(job)
            if job._detached is not None and not job._detached.done():
                job._detached.set_result(None)
            if not run._followers:
                run.cancel()
            return
        if job._held:  # still waiting for its page to connect
            job._show(state="cancelled", error="cancelled before it started.")
            return
        for i, (queued, turn) in enumerate(self._queue):
            if queued is job:
                del self._queue[i]
                turn.cancel()
                self._number_queue()
                return

    # ------------------------------------------------------------ one job
    async def _execute(self, job: Job) -> None:
        if job._cancel_requested:
            job._show(state="cancelled", error="cancelled before it started.")
            return
        fn, args, kwargs = job._call
        receive, send = self._ctx.Pipe(duplex=False)
        proc = self._ctx.Process(
            target=run_job, args=(send, fn, args, kwargs, self.max_bytes, os.getpid()), daemon=True
        )
        start = time.monotonic()
        job._show(state="running", position=0)
        try:
            await asyncio.to_thread(proc.start)
        except Exception as err:  # cannot start a process (e.g. out of PIDs): tell, keep serving
            swallowed(f"{job.label}: no worker process could be started", err, session=job.session)
            job._show(state="failed", error=f"no worker process could be started ({err}).")
            return
        finally:
            send.close()
        outcome = None
        try:
            while outcome is None:
                elapsed = time.monotonic() - start
                if int(elapsed) != int(job.seconds):  # views redraw once a second, not once a poll
                    job._show(seconds=elapsed)
                if job._cancel_requested:
                    outcome = ("cancelled", "cancelled.")
                elif elapsed > job.timeout:
                    outcome = (
                        "timed out",
                        f"stopped after {job.timeout:.0f} s, the time limit of one computation on this server.",
                    )
                elif receive.poll():
                    outcome = self._receive_pending(job, receive, proc)
                    if outcome is None:
                        await asyncio.sleep(_POLL_SECONDS)
                elif not proc.is_alive() and not receive.poll():
                    outcome = ("failed", _death_note(proc.exitcode, self.max_bytes))
                else:
                    await asyncio.sleep(_POLL_SECONDS)
        finally:
            if proc.is_alive():
                proc.kill()
            await asyncio.to_thread(proc.join, 5)
            receive.close()
        state, value = outcome
        seconds = time.monotonic() - start
        if state == "done":
            job.result = value
            job._show(seconds=seconds, state="done", done=job.total or job.done)
        else:
            if state == "failed":
                self._log_failure(job, value)
            job._show(seconds=seconds, state=state, error=value)

    def _receive_pending(self, job: Job, receive, proc) -> tuple[str, Any] | None:
        """Read what the worker has sent (for at most one poll's time), show only its last progress, and return
        the job's outcome if it came: a worker that reports thousands of times a second costs the event loop one
        update per poll, not one per report (``tests/test_jobs.py``)."""
        latest = outcome = None
        parts = []
        deadline = time.monotonic() + _POLL_SECONDS
        while outcome is None and time.monotonic() < deadline and receive.poll():
            try:
                message = receive.recv()
            except (EOFError, OSError):
                proc.join(1)
                outcome = ("failed", _death_note(proc.exitcode, self.max_bytes))
                break
            if message[0] == "progress":
                latest = message
            elif message[0] == "partial":
                parts.append(message[1])
            else:
                outcome = self._outcome(job, message)
        if parts:  # before the progress that counts them
            job._show(partial=[*job.partial, *parts])
        if latest is not None:
            job._show(done=int(latest[1]), total=int(latest[2]), note=latest[3])
        return outcome

    def _outcome(self, job: Job, message: tuple) -> tuple[str, Any]:
        """The job's outcome from the worker's last message (its result, or why it failed)."""
        kind = message[0]
        if kind == "done":
            return ("done", message[1])
        if kind == "memory":
            return (
                "failed",
                f"needed more memory than one computation may use on this server ({format_bytes(self.max_bytes)}).",
            )
        job._worker_error = (message[2], message[3])
        return ("failed", message[1])

    @staticmethod
    def _log_failure(job: Job, error: str) -> None:
        """Log a failed job, with the worker's traceback if it raised, naming the session that submitted it.

        At INFO when the engine refused the user's input (as :func:`effdim_app.logs.swallowed`), else at ERROR.
        """
        trace, refused_input = job._worker_error or ("", False)
        LOG.log(
            logging.INFO if refused_input else logging.ERROR,
            "%s failed: %s%s",
            job.label,
            error,
            f"\nIn the worker process:\n{trace}" if trace else "",
            extra={"session": job.session},
        )


def _death_note(exitcode: int | None, max_bytes: int) -> str:
    if exitcode is not None and exitcode < 0:
        return (
            f"the worker process was stopped by signal {-exitcode} (probably out of memory; one "
            f"computation may use {format_bytes(max_bytes)})."
        )
    return f"the worker process ended unexpectedly (exit status {exitcode})."
