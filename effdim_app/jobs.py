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
  in a first-come queue, and each knows its place in it;
* ``progress(done, total, note="", detail="")`` calls in the worker reach
  :attr:`Job.progress`, :attr:`Job.note` and :attr:`Job.detail` through a pipe,
  polled by the server's event loop without blocking it;
* ``progress.partial(value)`` hands out a part of the result as soon as it
  is done (a sweep's finished fit): it reaches :attr:`Job.partial` the same
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
import traceback
from collections import deque
from collections.abc import Callable
from typing import Any

import param

from effdim.errors import EffdimError
from effdim.limits import format_bytes

from .lifeline import end_with_server
from .logs import LOG, current_session, swallowed
from .worker_main import name_the_main_script

__all__ = ["Job", "JobRunner", "JOB_STATES", "FINISHED"]

#: Job.state values, in lifetime order.
JOB_STATES = ["waiting", "running", "done", "failed", "cancelled", "timed out"]
#: States a job never leaves.
FINISHED = frozenset({"done", "failed", "cancelled", "timed out"})
#: Modules the forkserver imports once: the stand-in for the server's main script (no worker runs it again), its
#: watch on the server (it ends with it), and the engine, so a worker starts in milliseconds.
PRELOAD = ["effdim_app.worker_main", "effdim_app.lifeline", "effdim_app.tasks"]
#: How much lower a worker's CPU priority is than the server's (``os.nice``): a page open or an edit on the
#: server's event loop takes a core before a sweep does (docs/robustness.md, "Opening a page").
WORKER_NICENESS = 10
_POLL_SECONDS = 0.05
#: A job's error when it raised something other than an engine refusal (:class:`effdim.errors.EffdimError`).
UNEXPECTED = "an unexpected error inside effdim, not a problem with your input (the server's log has the details)"


class Job(param.Parameterized):
    """One submitted computation: its state, progress and outcome (watch these from views).

    ``await job`` waits for the end and returns :attr:`result` (``None``
    unless the state is ``"done"``).
    """

    label = param.String(default="", doc="What the job computes, in the user's words.")
    state = param.Selector(default="waiting", objects=JOB_STATES)
    position = param.Integer(default=0, doc="Jobs ahead of this one in the queue (while waiting).")
    done = param.Integer(default=0, doc="Steps done, from the worker's progress calls.")
    total = param.Integer(default=0, doc="Steps in all (0: unknown).")
    note = param.String(default="", doc="What the worker last said of its progress, in words.")
    detail = param.String(
        default="",
        doc="What the worker last sent for the views to show beside the words "
        "(a structure search: the best tree so far, in notation).",
    )
    partial = param.List(
        default=[],
        doc="The parts of the result the worker handed out as it went (a sweep's finished fits), in order; kept "
        "whatever the job's end.",
    )
    error = param.String(default="", doc="Why the job failed, was cancelled or timed out.")
    seconds = param.Number(default=0.0, doc="Running time so far (or in all).")
    timeout = param.Number(default=60.0, doc="Seconds the job may run before it is killed.")

    def __init__(self, runner: JobRunner, fn: Callable, args: tuple, kwargs: dict, **params):
        super().__init__(**params)
        self.result: Any = None
        self._runner = runner
        self._call = (fn, args, kwargs)
        self._cancel_requested = False
        self._task: asyncio.Future | None = None
        self._callbacks: list[Callable[[Job], Any]] = []
        #: The session that submitted the job, named in the log when it fails (effdim_app/logs.py).
        self.session = current_session()
        self._worker_error: tuple[str, bool] | None = None  # (traceback, the user's input refused) if it raised

    @property
    def finished(self) -> bool:
        return self.state in FINISHED

    @property
    def progress(self) -> float:
        """Fraction done in [0, 1] (0 while the total is unknown)."""
        return min(1.0, self.done / self.total) if self.total else 0.0

    def describe(self) -> str:
        """One line for the user: the state, the place in the queue or the progress."""
        if self.state == "waiting":
            ahead = f"{self.position} job{'s' if self.position != 1 else ''} ahead" if self.position else "next"
            return f"{self.label}: waiting for a free worker ({ahead})."
        if self.state == "running":
            steps = f", {self.done} of {self.total} done" if self.total else ""
            note = f"; {self.note}" if self.note else ""
            return f"{self.label}: running for {self.seconds:.0f} s{steps}{note} (time limit {self.timeout:.0f} s)."
        if self.state == "done":
            return f"{self.label}: done in {self.seconds:.1f} s."
        return f"{self.label}: {self.error}"

    def cancel(self) -> None:
        """Stop the job: drop it from the queue, or kill its worker process. From any thread."""
        if self.finished:
            return
        self._cancel_requested = True
        self._runner._call_soon(self._runner._cancel_waiting, self)

    def add_done_callback(self, fn: Callable[[Job], Any]) -> None:
        """Call ``fn(job)`` on the runner's event loop once the job is finished (at once if it is)."""
        if self.finished:
            self._runner._call_soon(fn, self)
        else:
            self._callbacks.append(fn)

    def __await__(self):
        if self._task is not None:
            yield from asyncio.shield(
                asyncio.wrap_future(self._task) if not asyncio.isfuture(self._task) else self._task
            ).__await__()
        return self.result


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
    """

    def __init__(
        self, workers: int = 2, timeout: float = 60.0, max_bytes: int = 2 * 1024**3, start_method: str | None = None
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
        self._running: set[Job] = set()
        self._queue: deque[tuple[Job, asyncio.Future]] = deque()
        self._loop: asyncio.AbstractEventLoop | None = None

    # ------------------------------------------------------------ public
    def submit(self, fn: Callable, *args, label: str, timeout: float | None = None, **kwargs) -> Job:
        """Queue ``fn(*args, progress=..., **kwargs)`` for a worker.

        From the event loop, or from another thread once the runner has seen
        its loop (a server's callback threads, ``effdim app --threads``).
        """
        job = Job(self, fn, args, kwargs, label=label, timeout=self.timeout if timeout is None else timeout)
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        if loop is not None:
            self._loop = loop
            job._task = loop.create_task(self._run(job))
        elif self._loop is not None and self._loop.is_running():
            job._task = asyncio.run_coroutine_threadsafe(self._run(job), self._loop)
        else:
            raise RuntimeError("jobs need a running event loop")
        return job

    def attach(self) -> None:
        """Remember the running event loop (call from it) so that other threads can submit jobs."""
        self._loop = asyncio.get_running_loop()

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
        proc = self._ctx.Process(target=_noop)
        proc.start()
        proc.join()

    # ------------------------------------------------------------ queue
    async def _run(self, job: Job) -> None:
        try:
            await self._take_turn(job)
        finally:
            callbacks, job._callbacks = job._callbacks, []
            for fn in callbacks:
                fn(job)

    async def _take_turn(self, job: Job) -> None:
        if len(self._running) < self.workers and not self._queue:
            self._running.add(job)
        else:
            turn = asyncio.get_running_loop().create_future()
            self._queue.append((job, turn))
            self._number_queue()
            try:
                await turn  # _next() moved the job into _running
            except asyncio.CancelledError:
                job.param.update(state="cancelled", error="cancelled before it started.")
                return
        try:
            await self._execute(job)
        finally:
            self._running.discard(job)
            self._next()

    def _next(self) -> None:
        while self._queue and len(self._running) < self.workers:
            job, turn = self._queue.popleft()
            if turn.done():
                continue
            self._running.add(job)
            turn.set_result(None)
        self._number_queue()

    def _number_queue(self) -> None:
        for i, (job, _) in enumerate(self._queue):
            if job.position != i:
                job.position = i

    def _cancel_waiting(self, job: Job) -> None:
        for i, (queued, turn) in enumerate(self._queue):
            if queued is job:
                del self._queue[i]
                turn.cancel()
                self._number_queue()
                return

    # ------------------------------------------------------------ one job
    async def _execute(self, job: Job) -> None:
        if job._cancel_requested:
            job.param.update(state="cancelled", error="cancelled before it started.")
            return
        fn, args, kwargs = job._call
        receive, send = self._ctx.Pipe(duplex=False)
        proc = self._ctx.Process(
            target=_worker, args=(send, fn, args, kwargs, self.max_bytes, os.getpid()), daemon=True
        )
        start = time.monotonic()
        job.param.update(state="running", position=0)
        try:
            await asyncio.to_thread(proc.start)
        except Exception as err:  # cannot start a process (e.g. out of PIDs): tell, keep serving
            swallowed(f"{job.label}: no worker process could be started", err, session=job.session)
            job.param.update(state="failed", error=f"no worker process could be started ({err}).")
            return
        finally:
            send.close()
        outcome = None
        try:
            while outcome is None:
                elapsed = time.monotonic() - start
                if int(elapsed) != int(job.seconds):  # views redraw once a second, not once a poll
                    job.seconds = elapsed
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
        job.seconds = time.monotonic() - start
        if state == "done":
            job.result = value
            job.param.update(state="done", done=job.total or job.done)
        else:
            if state == "failed":
                self._log_failure(job, value)
            job.param.update(state=state, error=value)

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
            job.partial = [*job.partial, *parts]
        if latest is not None:
            job.param.update(done=int(latest[1]), total=int(latest[2]), note=latest[3], detail=latest[4])
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


# ------------------------------------------------------------ in the worker
def _noop() -> None:
    return None


def _cap_memory(max_bytes: int) -> None:
    """Cap this process's address space at its current size plus ``max_bytes`` (Linux; elsewhere a no-op)."""
    try:
        import resource

        with open("/proc/self/statm") as f:
            size = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (ImportError, OSError, ValueError):
        return
    cap = size + int(max_bytes)
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        cap = min(cap, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))


def _yield_cpu_to_server() -> None:
    """Lower this worker's CPU priority by :data:`WORKER_NICENESS`: with every core busy with jobs, the
    server's one event loop (every student's page and edits) would otherwise get only its equal share."""
    try:
        os.nice(WORKER_NICENESS)
    except (AttributeError, OSError):  # no nice (Windows) or not allowed: the job still runs
        pass


class _Progress:
    """What a job's function gets as ``progress``: ``progress(done, total, note, detail)`` reports how far it
    is, ``progress.partial(value)`` hands out a finished part of its result (:attr:`Job.partial`)."""

    def __init__(self, send):
        self._send = send

    def __call__(self, done: int, total: int, note: str = "", detail: str = "") -> None:
        self._send.send(("progress", done, total, str(note), str(detail)))

    def partial(self, value: Any) -> None:
        self._send.send(("partial", value))


def _worker(send, fn: Callable, args: tuple, kwargs: dict, max_bytes: int, server: int) -> None:
    """Body of a worker process: run ``fn``, send progress and the outcome up the pipe.

    The worker ends with the ``server`` (:func:`effdim_app.lifeline.end_with_server`): no job
    computes on for a server that is gone.
    """
    end_with_server(server)
    _cap_memory(max_bytes)
    _yield_cpu_to_server()

    try:
        result = fn(*args, progress=_Progress(send), **kwargs)
    except MemoryError:
        send.send(("memory",))
    except Exception as err:  # the server logs the traceback
        refused = isinstance(err, EffdimError)
        # the engine's refusals name the culprit in the user's words; any other error is a library's or a
        # defect's message (e.g. pandas' "unhashable type: 'numpy.ndarray'"), which means nothing to the user
        text = (str(err).strip() or type(err).__name__) if refused else UNEXPECTED
        send.send(("error", text, traceback.format_exc(), refused))
    else:
        send.send(("done", result))
    finally:
        send.close()
