"""Running independent jobs: in this process, in local worker processes, or on a Dask cluster.

An engine service used by the bootstrap (:mod:`effdim.bootstrap`: chunks of
replicates), by the experiment harness (:mod:`effdim.experiments.runner`:
the jobs of a study, with their cache and progress bar on top) and, through
:class:`Workers` (the same workers for many rounds of tasks), by the structure
search (:mod:`effdim.structure.tasks`). A job is a
module-level function ``fn(config: dict) -> dict`` (it must pickle to a
worker); :func:`run_each` calls ``finish(key, result, seconds)`` as each job
ends and ``fail(key, error)`` for each that raised, so one failure does not
stop the others. Jobs are handed out in the order of ``keys``, a few more than
there are workers at a time, so a caller's ``skip(key)`` can drop jobs that
earlier results made unnecessary (the sequential bootstrap test,
:mod:`effdim.bootstrap`).

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

__all__ = ["EXECUTORS", "Execution", "ExecutorError", "Workers", "check_scheduler", "die_with_parent", "run_each"]

#: ``executor=`` values; a ``scheduler`` (Dask) overrides them.
EXECUTORS = ("processes", "serial")
#: Jobs handed out per worker at a time (waiting or running): enough to keep every worker busy.
AHEAD = 2
#: prctl(2) option: the signal a process gets when its parent dies.
PR_SET_PDEATHSIG = 1

JobFn = Callable[[dict], dict]

#: Seconds a Dask scheduler has to answer before its address is refused.
SCHEDULER_TIMEOUT = 10.0


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
    skip: Callable[[str], bool] | None = None,
) -> tuple[str, int]:
    """Run ``fn(configs[k])`` for every ``k`` in ``keys`` where ``execution`` says
    (:class:`Execution`; default: local processes); return ``(executor used, workers)``.

    Jobs start in the order of ``keys``, at most :data:`AHEAD` per local
    worker waiting or running at a time (on a Dask cluster too when
    ``skip`` is given; else all at once); a job whose ``skip(key)`` is true when its
    turn comes is not run (nor finished, nor failed). On an exception in the
    caller (Ctrl-C, a ``finish`` that raises) the pending jobs are cancelled
    and the exception passed on.
    """
    execution = execution or Execution()
    executor, workers, scheduler = execution.executor, execution.workers, execution.scheduler
    todo = (k for k in keys if skip is None or not skip(k))  # asked lazily, as each job's turn comes
    if scheduler is not None:
        ahead = None if skip is None else AHEAD  # with nothing to skip, a cluster gets every job at once
        return "dask", _run_dask(fn, configs, todo, scheduler, finish, fail, ahead)
    if executor == "serial" or not keys:
        for k in todo:
            try:
                result, seconds = timed(fn, configs[k])
            except Exception as err:  # noqa: BLE001 - reported by the caller with the others
                fail(k, err)
                continue
            finish(k, result, seconds)
        return "serial", 1
    n = max(1, min(int(workers or os.cpu_count() or 1), len(keys)))
    _run_pool(fn, configs, todo, n, finish, fail)
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
        upcoming = iter(keys)
        futures: dict = {}

        def submit() -> None:
            while len(futures) < AHEAD * n and (k := next(upcoming, None)) is not None:
                futures[pool.submit(timed, fn, configs[k])] = k

        submit()
        while futures:
            done, _ = wait(futures, return_when=FIRST_COMPLETED)
            for fut in done:
                _settle(fut, futures.pop(fut), finish, fail)
            submit()
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown(wait=True)


def check_scheduler(scheduler: Any) -> None:
    """Refuse a Dask scheduler address that does not answer within :data:`SCHEDULER_TIMEOUT` (an
    :class:`ExecutorError` naming it), before any work starts rather than after it."""
    client, own = _dask_client(scheduler)
    if own:
        client.close()


def _dask_client(scheduler: Any) -> tuple[Any, bool]:
    """A client of ``scheduler`` (an address, or a client used as it is) and whether it is this call's own."""
    try:
        from distributed import Client
    except ImportError as err:  # pragma: no cover - depends on the environment
        raise ExecutorError("--scheduler needs Dask distributed: pip install 'effdim[dask]'") from err
    if isinstance(scheduler, Client):
        return scheduler, False
    try:
        return Client(scheduler, timeout=SCHEDULER_TIMEOUT), True
    except ValueError:
        raise ExecutorError(f"{scheduler!r} is not a Dask scheduler address (such as tcp://host:8786)") from None
    except OSError:
        raise ExecutorError(
            f"no Dask scheduler answers at {scheduler!r} within {SCHEDULER_TIMEOUT:g} s: is it running, and is "
            "the address right?"
        ) from None


def _run_dask(fn, configs, keys, scheduler, finish, fail, ahead) -> int:
    from distributed import as_completed

    client, own = _dask_client(scheduler)
    try:
        workers = len(client.scheduler_info().get("workers", {}))
        futures: dict = {}
        upcoming = iter(keys)
        running = as_completed([])

        def submit() -> None:
            while (ahead is None or len(futures) < ahead * max(workers, 1)) and (k := next(upcoming, None)) is not None:
                fut = client.submit(timed, fn, configs[k], pure=False, key=f"effdim-{k[:24]}-{time.time_ns()}")
                futures[fut] = k
                running.add(fut)

        try:
            submit()
            for fut in running:
                _settle(fut, futures.pop(fut), finish, fail)
                submit()
        except BaseException:
            client.cancel(list(futures))
            raise
        return workers
    finally:
        if own:
            client.close()


class Workers:
    """Workers kept for many rounds of work (:meth:`map`), where :class:`Execution` says: this process, local
    processes, or a Dask cluster. ``shared`` (data every task needs) reaches each worker once, not with
    every task; a task is ``fn(shared, item)``, a module-level function (it must pickle to a worker).
    A context manager: the pool or the client is closed on leaving.

    The results come back in the items' order whatever the workers and their number, so a caller whose
    items carry their own random streams computes the same whatever runs them.
    """

    def __init__(self, execution: Execution | None, shared: Any = None):
        execution = execution or Execution("serial")
        self.shared = shared
        #: Whether the tasks run in this process (then a task may carry objects too large to send).
        self.inline = execution.scheduler is None and execution.executor == "serial"
        self._pool: ProcessPoolExecutor | None = None
        self._client = self._own = self._shared_future = None
        if execution.scheduler is not None:
            self._client, self._own = _dask_client(execution.scheduler)
            self.count = max(1, len(self._client.scheduler_info().get("workers", {})))
            self._shared_future = self._client.scatter(shared, broadcast=True)
        elif execution.executor == "serial":
            self.count = 1
        else:
            self.count = max(1, int(execution.workers or os.cpu_count() or 1))
            self._pool = ProcessPoolExecutor(
                max_workers=self.count, initializer=_install_shared, initargs=(die_with_parent, shared)
            )

    def map(self, fn: Callable[[Any, Any], Any], items: Sequence[Any]) -> list:
        """``[fn(shared, item) for item in items]``, the items spread over the workers."""
        if self._client is not None:
            futures = self._client.map(fn, [self._shared_future] * len(items), list(items), pure=False)
            return self._client.gather(futures)
        if self._pool is not None:
            return list(self._pool.map(_with_shared, [fn] * len(items), items))
        return [fn(self.shared, item) for item in items]

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
        if self._client is not None and self._own:
            self._client.close()

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


#: What :class:`Workers` shares with the tasks of a local worker process (set once, when the worker starts).
_SHARED: list = [None]


def _install_shared(first: Callable[[], None], shared: Any) -> None:
    first()
    _SHARED[0] = shared


def _with_shared(fn: Callable[[Any, Any], Any], item: Any) -> Any:
    return fn(_SHARED[0], item)
