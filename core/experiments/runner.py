"""Running independent experiment jobs: an on-disk cache and progress over the engine's executor.

The studies of Sections 5 and 6 (:mod:`effdim.experiments.lc`,
:mod:`effdim.experiments.hlc`) are made of many independent jobs: one data set
sampled from one random parametrization, with its model fits. This module runs
such jobs through :func:`effdim.executor.run_each`, where an
:class:`effdim.executor.Execution` says:

* in the calling process (``Execution("serial")``; tests and debugging),
* in local worker processes (``Execution("processes")``, the default:
  :class:`concurrent.futures.ProcessPoolExecutor`), or
* on a Dask distributed cluster (``Execution(scheduler="tcp://host:8786")``
  or a :class:`distributed.Client`), so that a lab can use its own cluster.

Every finished job is written at once to ``cache_dir`` as one JSON file named
by a hash of the job's configuration (:func:`job_key`). A later run with the
same configuration reads it instead of recomputing, so an interrupted run
resumes where it stopped, and adding replicates or sample sizes only computes
the new jobs. Files are written by the calling process (atomically: a
temporary file renamed into place), so Dask workers need no shared disk.

A job is a module-level function ``fn(config: dict) -> dict`` whose result is
JSON-serialisable; the configuration must be JSON-serialisable too and must
hold *everything* that determines the result (seeds included).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from ..errors import EffdimError, InvalidArgument
from ..executor import Execution, run_each

__all__ = [
    "CACHE_FORMAT",
    "DEFAULT_CACHE_DIR",
    "ExperimentError",
    "JobRecord",
    "RunStats",
    "Progress",
    "job_key",
    "run_jobs",
]

#: Bumped whenever the meaning of a cached result changes; part of every key.
CACHE_FORMAT = 2  # 2: SQUAREM EM and nested starts
#: Default cache directory (git-ignored in the project).
DEFAULT_CACHE_DIR = ".effdim-cache"

JobFn = Callable[[dict], dict]


class ExperimentError(EffdimError, RuntimeError):
    """One or more jobs failed (the finished ones are cached all the same), or a study's outputs could not
    be written.

    ``inside`` tells the two kinds of failure apart: ``False`` when the engine refused what the study
    asked of it (an :class:`EffdimError` in a job: the user's input), ``True`` when something failed
    inside effdim or its environment (any other error: a defect or a broken tool). The CLI exits 2 on
    the first, 1 on the second.
    """

    def __init__(self, message: str, *, inside: bool = False):
        super().__init__(message)
        self.inside = inside

    def __reduce__(self):
        return type(self), (str(self),), {"inside": self.inside}


#: The settings that name a job to its user, in this order, when its configuration has them.
_NAMING_KEYS = ("generator", "model", "kind", "leaves", "hidden", "n", "replicate")


def _job_name(config: dict) -> str:
    """A job as its user knows it: ``'generator=3:2,2,2,2, n=200, replicate=1'`` (every setting when
    none of the naming ones is there).

    >>> _job_name({"x": 1, "seed": 0})
    'x=1, seed=0'
    """
    keys = [k for k in _NAMING_KEYS if k in config] or list(config)

    def text(value: Any) -> str:
        return ",".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)

    return ", ".join(f"{k}={text(config[k])}" for k in keys)


@dataclass(frozen=True)
class JobRecord:
    """A finished job: its ``config``, ``result``, compute ``seconds`` and
    whether it was read from the cache (``cached``)."""

    config: dict
    result: dict
    seconds: float
    cached: bool


@dataclass
class RunStats:
    """What a :func:`run_jobs` call did.

    ``executed``: jobs computed in this call; ``cached``: jobs read from the
    cache; ``missing``: jobs neither cached nor run (``cached_only``); ``wall_seconds``: elapsed time of the call; ``job_seconds``: sum of
    the compute times of all jobs (cached ones included, as recorded when they
    ran); ``workers`` and ``executor`` describe where they ran.
    """

    total: int = 0
    executed: int = 0
    cached: int = 0
    missing: int = 0
    wall_seconds: float = 0.0
    job_seconds: float = 0.0
    executor: str = ""
    workers: int = 0
    failures: list[str] = field(default_factory=list)
    #: Cached files that could not be used, each ``"<file name> <why>"``; their jobs ran again.
    damaged: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "total": self.total,
            "executed": self.executed,
            "cached": self.cached,
            "missing": self.missing,
            "wall_seconds": round(self.wall_seconds, 3),
            "job_seconds": round(self.job_seconds, 3),
            "executor": self.executor,
            "workers": self.workers,
            "damaged": list(self.damaged),
        }


def job_key(fn: JobFn | str, config: dict) -> str:
    """SHA-256 of the job function's name, :data:`CACHE_FORMAT` and the canonical JSON of ``config``."""
    name = fn if isinstance(fn, str) else f"{fn.__module__}.{fn.__qualname__}"
    text = json.dumps({"fn": name, "format": CACHE_FORMAT, "config": config}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def _cache_path(cache_dir: Path, prefix: str, key: str) -> Path:
    return cache_dir / f"{prefix}-{key[:24]}.json"


#: A schema of a job's result: a type (or tuple of types) a value must have, a dict of required keys
#: and their schemas, or a one-item list: a list whose every item has that schema.
Schema = Any


def schema_problem(value: Any, schema: Schema, where: str = "result") -> str | None:
    """The first place where ``value`` does not fit ``schema`` (in words), or ``None``; no recursion.

    >>> schema_problem({"fits": [{"ds": 3}, {"ds": "x"}]}, {"fits": [{"ds": int}]})
    "result['fits'][1]['ds'] is str, not int"
    """
    stack = [(value, schema, where)]
    while stack:
        value, schema, where = stack.pop()
        if isinstance(schema, dict):
            if not isinstance(value, dict):
                return f"{where} is {type(value).__name__}, not an object"
            for key in reversed(list(schema)):
                if key not in value:
                    return f"{where} has no {key!r}"
                stack.append((value[key], schema[key], f"{where}[{key!r}]"))
        elif isinstance(schema, list):
            if not isinstance(value, list):
                return f"{where} is {type(value).__name__}, not a list"
            stack.extend((item, schema[0], f"{where}[{i}]") for i, item in reversed(list(enumerate(value))))
        else:
            types = schema if isinstance(schema, tuple) else (schema,)
            if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
                names = " or ".join(t.__name__ for t in types)
                return f"{where} is {type(value).__name__}, not {names}"
    return None


def _checksum(config: dict, result: dict, seconds: float) -> str:
    """SHA-256 of a record's canonical JSON: any change to a cached file's config, result or time shows."""
    text = json.dumps({"config": config, "result": result, "seconds": seconds}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def _read_cache(path: Path, config: dict, schema: Schema = None) -> tuple[JobRecord | None, str | None]:
    """``(record, None)`` for a sound cached job; ``(None, why)`` for a damaged one; ``(None, None)`` if absent.

    A sound file belongs to ``config``, carries the checksum of what it holds
    (files written before checksums existed have none: their result is
    checked against ``schema`` only), and its result fits ``schema``.
    """
    try:
        text = path.read_text()
    except OSError:
        return None, None  # not cached
    try:
        data = json.loads(text)
    except ValueError:
        return None, "is not valid JSON (cut short by an interruption?)"
    if not isinstance(data, dict):
        return None, "is not a cached job"
    if data.get("config") != config:
        return None, "holds another job's configuration"
    result, seconds = data.get("result"), data.get("seconds", 0.0)
    if not isinstance(result, dict):
        return None, "has no result"
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
        return None, f"'seconds' is {type(seconds).__name__}, not a number"
    if "checksum" in data and data["checksum"] != _checksum(config, result, seconds):
        return None, "was changed after it was written (checksum mismatch)"
    problem = schema_problem(result, schema) if schema is not None else None
    if problem is not None:
        return None, f"does not hold a valid result ({problem})"
    return JobRecord(config=config, result=result, seconds=float(seconds), cached=True), None


def _write_cache(path: Path, record: JobRecord) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    payload = {
        "config": record.config,
        "result": record.result,
        "seconds": record.seconds,
        "checksum": _checksum(record.config, record.result, record.seconds),
        "finished": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    tmp.write_text(json.dumps(payload, sort_keys=True))
    os.replace(tmp, path)  # atomic: a reader never sees half a file


# ------------------------------------------------------------------ progress
class Progress:
    """A one-line progress bar on ``stream`` (stderr by default).

    On a terminal the line is redrawn in place; otherwise a line is printed
    about every 5% (and at the end), so logs of background runs stay short.
    ``enabled=False`` prints nothing.
    """

    def __init__(
        self, total: int, label: str = "", *, stream: TextIO | None = None, enabled: bool = True, width: int = 28
    ):
        self.total = int(total)
        self.label = label
        self.stream = sys.stderr if stream is None else stream
        self.enabled = enabled
        self.width = width
        self.done = 0
        self.cached = 0
        self.start = time.perf_counter()
        self._tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._last_step = -1

    def update(self, done: int, cached: int | None = None) -> None:
        self.done = done
        if cached is not None:
            self.cached = cached
        if not self.enabled:
            return
        step = int(20 * done / self.total) if self.total else 20
        if not self._tty and step == self._last_step and done < self.total:
            return
        self._last_step = step
        line = self.line()
        if self._tty:
            self.stream.write("\r" + line + ("\n" if done >= self.total else ""))
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def line(self) -> str:
        frac = self.done / self.total if self.total else 1.0
        filled = int(round(self.width * frac))
        elapsed = time.perf_counter() - self.start
        computed = self.done - self.cached
        left = self.total - self.done
        eta = ""
        if 0 < computed and left:
            eta = f", ETA {_clock(elapsed / computed * left)}"
        cached = f" ({self.cached} cached)" if self.cached else ""
        label = f"{self.label} " if self.label else ""
        return (
            f"{label}[{'#' * filled}{'.' * (self.width - filled)}] {self.done}/{self.total} jobs{cached}, "
            f"{_clock(elapsed)} elapsed{eta}"
        )


def _clock(seconds: float) -> str:
    seconds = int(round(seconds))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}h{m:02d}m{s:02d}s" if h else (f"{m}m{s:02d}s" if m else f"{s}s")


# -------------------------------------------------------------------- driver
def run_jobs(
    fn: JobFn,
    configs: Sequence[dict],
    *,
    cache_dir: str | os.PathLike | None = DEFAULT_CACHE_DIR,
    prefix: str = "job",
    execution: Execution | None = None,
    progress: bool | Progress = True,
    label: str = "",
    cached_only: bool = False,
    schema: Schema = None,
) -> tuple[list[JobRecord], RunStats]:
    """Run ``fn`` on every config, reusing cached results; return records in ``configs`` order.

    With ``cached_only`` nothing runs: the records are those of the cached
    jobs (in ``configs`` order), and ``RunStats.missing`` counts the others,
    so that a study too long for one sitting can be reported part way.

    Parameters
    ----------
    fn:
        A module-level job function ``config -> result`` (both JSON-ready).
    configs:
        One configuration per job; duplicates are computed once.
    cache_dir:
        Directory of the per-job JSON files; ``None`` disables the cache.
    prefix:
        Start of the cache file names (e.g. the study name).
    execution:
        Where the jobs run (:class:`effdim.executor.Execution`): local worker
        processes (the default), this process, or a Dask cluster.
    progress:
        ``True``: a progress bar on stderr; ``False``: silent; or a
        :class:`Progress` instance.
    cached_only:
        Read the cache, run nothing (needs ``cache_dir``).
    schema:
        What a result must hold (:func:`schema_problem`). A cached file that
        is damaged, changed after it was written (its checksum), or whose
        result does not fit is named in :attr:`RunStats.damaged` and the job
        recomputed (with ``cached_only``: counted as missing).

    Raises
    ------
    ExperimentError
        When any job failed; all others have run and are cached by then.
    KeyboardInterrupt
        Passed on after pending jobs are cancelled; finished ones are cached.
    """
    t0 = time.perf_counter()
    if cached_only and cache_dir is None:
        raise InvalidArgument("reading only cached jobs needs a cache directory")
    configs = [dict(c) for c in configs]
    cache = Path(cache_dir) if cache_dir is not None else None
    keys = [job_key(fn, c) for c in configs]
    unique: dict[str, dict] = {}
    for k, c in zip(keys, configs):
        unique.setdefault(k, c)
    records: dict[str, JobRecord] = {}
    damaged: list[str] = []
    if cache is not None:
        for k, c in unique.items():
            path = _cache_path(cache, prefix, k)
            rec, why = _read_cache(path, c, schema)
            if rec is not None:
                records[k] = rec
            elif why is not None:
                damaged.append(f"{path.name} {why}")
    pending = [k for k in unique if k not in records]
    stats = RunStats(total=len(unique), cached=len(records), damaged=damaged)
    if cached_only:
        stats.missing, pending = len(pending), []
    bar = progress if isinstance(progress, Progress) else Progress(len(unique), label, enabled=bool(progress))
    bar.total = len(unique)
    bar.update(len(records), cached=len(records))

    def finish(k: str, result: dict, seconds: float) -> None:
        rec = JobRecord(config=unique[k], result=result, seconds=seconds, cached=False)
        if cache is not None:
            _write_cache(_cache_path(cache, prefix, k), rec)
        records[k] = rec
        stats.executed += 1
        bar.update(len(records))

    inside: list[str] = []  # failures that are no refusal of the study's input

    def fail(k: str, err: BaseException) -> None:
        if isinstance(err, EffdimError):
            stats.failures.append(f"job {_job_name(unique[k])}: {err}")
        else:
            stats.failures.append(f"job {_job_name(unique[k])}: {type(err).__name__}: {err}")
            inside.append(stats.failures[-1])

    stats.executor, stats.workers = run_each(fn, unique, pending, finish, fail, execution)
    stats.wall_seconds = time.perf_counter() - t0
    stats.job_seconds = sum(r.seconds for r in records.values())
    failed = f"{len(stats.failures)} of {len(unique)} job{'s' if len(unique) != 1 else ''}"
    others = "" if len(stats.failures) == len(unique) else "the others are cached; " if cache else "the others ran; "
    if inside:  # a defect outweighs a refusal: name it first
        raise ExperimentError(
            f"{failed} failed, {len(inside)} of them inside effdim, not on the study's settings "
            f"({others}please report it); first: {inside[0]}",
            inside=True,
        )
    if stats.failures:
        raise ExperimentError(
            f"{failed} refused the study's settings{f' ({others[:-2]})' if others else ''}; first: {stats.failures[0]}"
        )
    return [records[k] for k in keys if k in records], stats
