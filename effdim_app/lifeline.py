"""The job runner's processes end with the server that started them (no Panel import here).

The job runner (:mod:`effdim_app.jobs`) starts a ``forkserver``, and the
forkserver forks one worker per job. After a ``kill -9`` of the server
neither is told: multiprocessing's forkserver ends only once every process
holding its "alive" pipe has closed it, and every worker it forked holds
one. A worker that watched only whether the server's process id still
answers lived on while the killed server stayed an unreaped zombie, and kept
the forkserver (about 100 MB) and multiprocessing's resource tracker alive
with it.

So each of them watches its parent: a process whose parent exits is handed
to another parent at that moment, reaped or not. The forkserver imports this
module first (:mod:`effdim_app.forkserver_preload`) and then ends with the
server; every worker it forks watches the forkserver from its first
instant (an at-fork hook: a worker that set up its own watch once it ran
could miss a forkserver already gone); a worker started by ``spawn`` watches
the server (:func:`end_with_server`). Processes forked from the server
itself (``effdim app --processes``) end with it through
:func:`effdim.executor.die_with_parent`.
"""

from __future__ import annotations

import functools
import multiprocessing.forkserver
import os
import sys
import threading
import time

__all__ = ["end_with_parent", "end_with_server"]

#: Whether this process is a worker the forkserver forked (it watches the forkserver from its start).
_forked_by_forkserver = False


def end_with_parent(parent: int, every: float = 0.5) -> None:
    """End this process (at once, as a killed process would) when process ``parent`` is no longer its
    parent: that process has ended. A daemon thread checks every ``every`` seconds."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(every)
        os._exit(1)

    threading.Thread(target=watch, name="effdim-end-with-parent", daemon=True).start()


def end_with_server(server: int) -> None:
    """In a job's worker: end with ``server`` (the process that submitted the job), through the
    forkserver's watch when the forkserver forked this process, else watching ``server`` itself, this
    process's parent under ``spawn`` (if it is gone already, the process ends at once)."""
    if not _forked_by_forkserver:
        end_with_parent(server)


def _imported_by_forkserver() -> bool:
    """Whether multiprocessing's forkserver is importing this module (its ``preload``), not the server."""
    frame = sys._getframe()
    while frame is not None:
        if frame.f_code is multiprocessing.forkserver.main.__code__:
            return True
        frame = frame.f_back
    return False


def _watch_the_forkserver(forkserver: int) -> None:
    """At-fork hook of the forkserver, in each child: a worker watches the forkserver from its first
    instant (not a process a worker forks in turn: that one's parent is the worker)."""
    global _forked_by_forkserver
    if not _forked_by_forkserver:
        _forked_by_forkserver = True
        end_with_parent(forkserver)


if _imported_by_forkserver():
    end_with_parent(os.getppid())
    os.register_at_fork(after_in_child=functools.partial(_watch_the_forkserver, os.getpid()))
