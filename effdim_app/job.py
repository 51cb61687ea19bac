"""One computation submitted to the job runner, as the views see it (no Panel import): :class:`Job`.

Its parameters (state, place in the queue, progress, error, running time) change as the runner
(:class:`effdim_app.jobs.JobRunner`) runs it; views watch them. ``await job`` waits for its end.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import param

from .logs import current_session

__all__ = ["Job", "JOB_STATES", "FINISHED", "MIRRORED"]

#: Job.state values, in lifetime order.
JOB_STATES = ["waiting", "running", "done", "failed", "cancelled", "timed out"]
#: States a job never leaves.
FINISHED = frozenset({"done", "failed", "cancelled", "timed out"})
#: What a job that follows another's run (``submit(share=...)``) shows of that run, as it changes.
MIRRORED = ("position", "done", "total", "note", "partial", "error", "seconds")


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
    partial = param.List(
        default=[],
        doc="The parts of the result the worker handed out as it went (a sweep's finished fits, a structure "
        "search's best trees so far), in order; kept whatever the job's end.",
    )
    error = param.String(default="", doc="Why the job failed, was cancelled or timed out.")
    seconds = param.Number(default=0.0, doc="Running time so far (or in all).")
    timeout = param.Number(default=60.0, doc="Seconds the job may run before it is killed.")

    def __init__(self, runner: Any, fn: Callable, args: tuple, kwargs: dict, **params):
        super().__init__(**params)
        self.result: Any = None
        self._runner = runner
        self._call = (fn, args, kwargs)
        self._cancel_requested = False
        self._task: asyncio.Future | None = None
        self._callbacks: list[Callable[[Job], Any]] = []
        #: The session that submitted the job, named in the log when it fails (effdim_app/logs.py).
        self.session = current_session()
        #: The client that session serves (effdim_app/job_sessions.py): its waiting jobs are capped.
        self.client = runner.sessions.client(self.session)
        #: The job's session is gone: the job changes nothing more that a view could show, and calls no callback.
        self.silenced = False
        self._worker_error: tuple[str, bool] | None = None  # (traceback, the user's input refused) if it raised
        self._held = False  # waiting for its session's page to connect
        self._follows: Job | None = None  # the shared run this job shows (submit(share=...))
        self._followers: set[Job] = set()  # of a shared run: the jobs that show it
        self._detached: asyncio.Future | None = None  # set when a follower is cancelled

    def _show(self, **values) -> None:
        """Change the job's parameters, which views watch; nothing once :attr:`silenced`."""
        if not self.silenced:
            self.param.update(**values)

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
