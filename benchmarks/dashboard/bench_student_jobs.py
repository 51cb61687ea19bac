"""One student's jobs with the workers of one server process: all of them, or the share of one of two.

``effdim app`` gives its job runner ``--workers`` worker processes (default 2); with ``--processes 2`` each
server process gets its share, one worker each (docs/robustness.md, "Serving sessions"). A student's sweep
is one job, but the class-enumeration card's bootstrap LRT runs in chunks, one job each, on every worker
the student's process has. This times, for one student alone on the server (the dashboard's own states,
no browser, the bundled Stouffer-Toby data): a sweep of 1-3 classes, then the bootstrap LRT of its table,
with a runner of 2 workers and with one of 1, side by side.

Run: ``python -m benchmarks.dashboard.bench_student_jobs [--blrt 40] [--repeat 2]``
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time

from effdim_app.jobs import JobRunner
from effdim_app.state import DataState, EnumerationState, FittedState, ModelState, ScoresState


async def one_student(workers: int, replicates: int) -> tuple[float, float]:
    """Seconds of the sweep and of the bootstrap LRT, with a job runner of ``workers`` worker processes."""
    jobs = JobRunner(workers=workers, timeout=600)
    jobs.warm_up()
    models, data = ModelState(), DataState()
    scores = ScoresState(models, data, jobs=jobs)
    enumeration = EnumerationState(FittedState(scores, models), jobs=jobs)
    data.load_bundled("stouffer-toby")
    scores.param.update(card_max=3, restarts=4, seed=1)
    start = time.perf_counter()
    await scores.run_sweep()
    while enumeration.table is None:
        await asyncio.sleep(0.05)
    swept = time.perf_counter() - start
    enumeration.B = replicates
    start = time.perf_counter()
    if not enumeration.run_blrt():
        raise RuntimeError(enumeration.message)
    while enumeration.running:
        await asyncio.sleep(0.05)
    if enumeration.table.blrt_B != replicates:
        raise RuntimeError(f"the bootstrap LRT did not finish: {enumeration.status}")
    return swept, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blrt", type=int, default=40, help="bootstrap replicates")
    parser.add_argument("--repeat", type=int, default=2, help="runs of each, alternating")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    times: dict[int, list[tuple[float, float]]] = {2: [], 1: []}
    for _ in range(args.repeat):
        for workers in times:
            times[workers].append(asyncio.run(one_student(workers, args.blrt)))
    print(f"one student: sweep of 1-3 classes, then the bootstrap LRT (B = {args.blrt}); medians of {args.repeat}")
    for workers, runs in times.items():
        sweep = statistics.median(r[0] for r in runs)
        blrt = statistics.median(r[1] for r in runs)
        print(f"  {workers} worker(s): sweep {sweep:.1f} s, bootstrap LRT {blrt:.1f} s")
    ratio = statistics.median(r[1] for r in times[1]) / statistics.median(r[1] for r in times[2])
    print(
        f"summary: the bootstrap LRT takes {ratio:.2f}x as long with one worker (a process's share with "
        f"--processes 2); load average {load:.1f} before, {os.getloadavg()[0]:.1f} after"
    )


if __name__ == "__main__":
    main()
