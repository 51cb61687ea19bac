"""Running independent jobs: in this process, in local worker processes, or on a Dask cluster.

An engine service used by the bootstrap (:mod:`effdim.bootstrap`: chunks of
replicates) and by the experiment harness (:mod:`effdim.experiments.runner`:
the jobs of a study, with their cache and progress bar on top). A job is a
module-level function ``fn(config: dict) -> dict`` (it must pickle to a
worker); :func:`run_each` calls ``finish(key, result, seconds)`` as each job
ends and ``fail(key, error)`` for each that raised, so one failure does not
stop the others.

Local workers die with the process that started them: on Linux each worker
asks the kernel for SIGTERM when its parent ends (``PR_SET_PDEATHSIG``,
prctl(2)), so a ``kill -9`` of ``effdim experiment`` or ``effdim fit
--bootstrap`` leaves no worker computing on (the dashboard's job runner,
``effdim_app/jobs.py``, does the same for its workers).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass
from typing import Any

from .errors import EffdimError, InvalidArgument

__all__ = ["EXECUTORS", "Execution", "ExecutorError", "die_with_parent", "run_each"]

#: ``executor=`` values; a ``scheduler`` (Dask) overrides them.
EXECUTORS = ("processes", "serial")
#: prctl(2) option: the signal a process gets when its parent dies.
PR_SET_PDEATHSIG = 1

JobFn = Callable[[dict], dict]


class ExecutorError(EffdimError, RuntimeError):
    """Jobs could not be run at all (a missing Dask installation, an unknown executor)."""


@dataclass(frozen=True)
class Execution:
    """Where independent jobs run (checked when made).

    ``executor``: ``"processes"`` (local workers, ``workers`` of them,
    default ``os.cpu_count()``, never more than the jobs) or ``"serial"``
    (this process); ``scheduler``: a Dask scheduler address or
    :class:`distributed.Client`, which overrides both.
    """

    executor: str = "processes"
    workers: int | None = None
    scheduler: Any = None

    def __post_init__(self) -> None:
        if self.executor not in EXECUTORS:
            raise InvalidArgument(
                f"unknown executor {self.executor!r}; choose 'processes' or 'serial', or give a scheduler"
            )
        if self.workers is not None and (isinstance(self.workers, bool) or not int(self.workers) >= 1):
            raise InvalidArgument(f"the number of workers must be at least 1, got {self.workers!r}")


def run_each(
    fn: JobFn,
    configs: Mapping[str, dict],
    keys: Sequence[str],
    finish: Callable[[str, dict, float], None],
    fail: Callable[[str, BaseException], None],
    execution: Execution | None = None,
) -> tuple[str, int]:
    """Run ``fn(configs[k])`` for every ``k`` in ``keys`` where ``execution`` says
    (:class:`Execution`; default: local processes); return ``(executor used, workers)``.

    On an exception in the caller (Ctrl-C, a ``finish`` that raises) the
    pending jobs are cancelled and the exception passed on.
    """
    execution = execution or Execution()
    executor, workers, scheduler = execution.executor, execution.workers, execution.scheduler
    if scheduler is not None:
        return "dask", _run_dask(fn, configs, keys, scheduler, finish, fail)
    if executor == "serial" or not keys:
        for k in keys:
            try:
                result, seconds = timed(fn, configs[k])
            except Exception as err:  # noqa: BLE001 - reported by the caller with the others
                fail(k, err)
                continue
            finish(k, result, seconds)
        return "serial", 1
    n = max(1, min(int(workers or os.cpu_count() or 1), len(keys)))
    _run_pool(fn, configs, keys, n, finish, fail)
    return "processes", n


def timed(fn: JobFn, config: dict) -> tuple[dict, float]:
    """Run one job and time it (module level so that it pickles to workers)."""
    start = time.perf_counter()
    result = fn(config)
    return result, time.perf_counter() - start


def die_with_parent() -> None:
    """Ask the kernel to end this process (SIGTERM) when its parent ends; Linux only, else nothing.

    The initializer of every local worker. Between fork and this call the
    parent could already be gone; then the worker ends at once.
    """
    if not sys.platform.startswith("linux"):
        return
    import ctypes
    import signal

    parent = os.getppid()
    ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent:  # the parent died before the request took effect
        os.kill(os.getpid(), signal.SIGTERM)


def _settle(future, key, finish, fail) -> None:
    """Hand a finished future's ``(result, seconds)`` to ``finish``, or its error to ``fail``."""
    try:
        result, seconds = future.result()
    except Exception as err:  # noqa: BLE001 - a failed job must not stop the others
        fail(key, err)
        return
    finish(key, result, seconds)


def _run_pool(fn, configs, keys, n, finish, fail) -> None:
    pool = ProcessPoolExecutor(max_workers=n, initializer=die_with_parent)
    try:
        futures = {pool.submit(timed, fn, configs[k]): k for k in keys}
        waiting = set(futures)
        while waiting:
            done, waiting = wait(waiting, return_when=FIRST_COMPLETED)
            for fut in done:
                _settle(fut, futures[fut], finish, fail)
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown(wait=True)


def _run_dask(fn, configs, keys, scheduler, finish, fail) -> int:
    try:
        from distributed import Client, as_completed
    except ImportError as err:  # pragma: no cover - depends on the environment
        raise ExecutorError("--scheduler needs Dask distributed: pip install 'effdim[dask]'") from err
    own = not isinstance(scheduler, Client)
    client = Client(scheduler) if own else scheduler
    try:
        workers = len(client.scheduler_info().get("workers", {}))
        if not keys:
            return workers
        futures = {}
        for k in keys:
            fut = client.submit(timed, fn, configs[k], pure=False, key=f"effdim-{k[:24]}-{time.time_ns()}")
            futures[fut] = k
        try:
            for fut in as_completed(list(futures)):
                _settle(fut, futures[fut], finish, fail)
        except BaseException:
            client.cancel(list(futures))
            raise
        return workers
    finally:
        if own:
            client.close()
