"""The body of a job's worker process (no Panel import): run the job's function, send its progress and
outcome up the pipe to the server's :class:`effdim_app.jobs.JobRunner`, within a memory cap and below the
server's CPU priority. The forkserver preloads this module (:mod:`effdim_app.forkserver_preload`)."""

from __future__ import annotations

import os
import traceback
from collections.abc import Callable
from typing import Any

from effdim.errors import EffdimError

from .lifeline import end_with_server

__all__ = ["UNEXPECTED", "WORKER_NICENESS", "run_job", "start_nothing"]

#: How much lower a worker's CPU priority is than the server's (``os.nice``): a page open or an edit on the
#: server's event loop takes a core before a sweep does (docs/robustness.md, "Opening a page").
WORKER_NICENESS = 10
#: A job's error when it raised something other than an engine refusal (:class:`effdim.errors.EffdimError`).
UNEXPECTED = "an unexpected error inside effdim, not a problem with your input (the server's log has the details)"


def start_nothing() -> None:
    """A worker that does nothing: starting it starts the forkserver (:meth:`effdim_app.jobs.JobRunner.warm_up`)."""
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
    """What a job's function gets as ``progress``: ``progress(done, total, note)`` reports how far it is,
    ``progress.partial(value)`` hands out a finished part of its result (:attr:`effdim_app.job.Job.partial`)."""

    def __init__(self, send):
        self._send = send

    def __call__(self, done: int, total: int, note: str = "") -> None:
        self._send.send(("progress", done, total, str(note)))

    def partial(self, value: Any) -> None:
        self._send.send(("partial", value))


def run_job(send, fn: Callable, args: tuple, kwargs: dict, max_bytes: int, server: int) -> None:
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
