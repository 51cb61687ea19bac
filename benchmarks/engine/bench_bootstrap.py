"""Speed of the bootstrap likelihood-ratio test.

Target: Stouffer-Toby, 2 against 3 classes, B = 100 replicates (each refitted
with 5 random starts, the 3-class one also from the split 2-class fit), under
10 s on the project's 2-core machine. Timed for both executors of
:func:`effdim.experiments.runner.run_jobs` (this process; local worker
processes) at the default EM tolerance 1e-8 and, for comparison, at 1e-6;
medians of ``--repeats`` runs. Also prints how much the statistic and the
p-value move between the two tolerances.

Usage::

    .venv/bin/python -m benchmarks.engine.bench_bootstrap --repeats 3
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from effdim import datasets
from effdim.bootstrap import blrt
from effdim.executor import Execution

TOLERANCES = (1e-8, 1e-6)  # the default of every fit, and a looser one


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--B", type=int, default=100)
    args = parser.parse_args()
    data = datasets.load("stouffer-toby")
    print(f"Stouffer-Toby, 2 vs 3 classes, B = {args.B}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}")
    results = {}
    for tol in TOLERANCES:
        for executor in ("serial", "processes"):
            times = []
            for _ in range(args.repeats):
                start = time.perf_counter()
                result = blrt(data, "3:2,2,2,2", B=args.B, seed=0, execution=Execution(executor), tol=tol)
                times.append(time.perf_counter() - start)
            results[tol] = result
            print(
                f"tol {tol:g}  {executor:<9}  median {statistics.median(times):6.2f} s  "
                f"(runs: {', '.join(f'{t:.2f}' for t in times)})  LR {result.statistic:.4f}  p {result.p_value:.4f}"
            )
    a, b = (results[t] for t in TOLERANCES)
    print(f"tolerance effect: LR {abs(a.statistic - b.statistic):.4f}, p {abs(a.p_value - b.p_value):.4f}")


if __name__ == "__main__":
    main()
