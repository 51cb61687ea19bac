"""Speed of a latent class regression beside poLCA: the election data, 3 classes on PARTY, 20 starts.

poLCA's manual example (Linzer & Lewis 2011, section 5.3): the 12 ratings of Gore and Bush in the bundled
``election`` data, three classes, ``PARTY`` as covariate, missing answers marginalised (``na.rm = FALSE``,
1,760 rows with PARTY); effdim with 20 random starts (``effdim.fit(..., covariates="PARTY", restarts=20)``,
pruned as always) and its observed-information standard errors, poLCA with ``nrep = 20`` and its own
standard errors. Both reach the same log-likelihood (printed). Each figure is the median of ``--repeats``
runs in one process (R's start and poLCA's loading excluded), in wall seconds and in CPU seconds (every
thread of the process: what the load of a shared machine changes least); the load is printed with them.

Usage::

    .venv/bin/python -m benchmarks.engine.bench_lcr                # effdim and poLCA, 3 repeats each
    .venv/bin/python -m benchmarks.engine.bench_lcr --repeats 5 --no-polca
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import statistics
import subprocess
import time

import effdim
from benchmarks.common import load_average

ITEMS = effdim.datasets.info("election").items
R_SCRIPT = """
suppressMessages(library(poLCA)); data(election)
f <- cbind(MORALG,CARESG,KNOWG,LEADG,DISHONG,INTELG,MORALB,CARESB,KNOWB,LEADB,DISHONB,INTELB) ~ PARTY
times <- c(); cpus <- c(); lliks <- c()
for (i in 1:REPEATS) {
  set.seed(i)
  t <- system.time(m <- poLCA(f, election, nclass = 3, nrep = 20, na.rm = FALSE, verbose = FALSE))
  times <- c(times, t[["elapsed"]]); cpus <- c(cpus, t[["user.self"]] + t[["sys.self"]]); lliks <- c(lliks, m$llik)
}
cat(sprintf("{\\"times\\": [%s], \\"cpus\\": [%s], \\"lliks\\": [%s]}\\n", paste(times, collapse = ","),
            paste(cpus, collapse = ","), paste(sprintf("%.6f", lliks), collapse = ",")))
"""


def effdim_runs(repeats: int, se: bool) -> tuple[list[float], list[float], list[float]]:
    """Wall seconds, CPU seconds (every thread of this process) and log-likelihood of each run."""
    data = effdim.datasets.load("election").subset([*ITEMS, "PARTY"])
    effdim.fit(data, 3, covariates="PARTY", restarts=1, seed=0, max_iter=5, warn=False)  # imports and caches
    times, cpus, lliks = [], [], []
    for seed in range(repeats):
        start, cpu = time.perf_counter(), time.process_time()
        result = effdim.fit(data, 3, covariates="PARTY", restarts=20, seed=seed, warn=False)
        if se:
            result.standard_errors()
        times.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu)
        lliks.append(result.loglik)
    return times, cpus, lliks


def polca_runs(repeats: int) -> tuple[list[float], list[float], list[float]] | None:
    if shutil.which("Rscript") is None:
        return None
    out = subprocess.run(
        ["Rscript", "-e", R_SCRIPT.replace("REPEATS", str(repeats))], capture_output=True, text=True, check=True
    ).stdout
    found = json.loads(out.strip().splitlines()[-1])
    return found["times"], found["cpus"], found["lliks"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-polca", action="store_true")
    args = parser.parse_args()
    before = load_average()
    rows = []
    for label, se in (("effdim, fit", False), ("effdim, fit + observed SEs", True)):
        times, cpus, lliks = effdim_runs(args.repeats, se)
        rows.append((label, statistics.median(times), statistics.median(cpus), max(lliks)))
    if not args.no_polca:
        polca = polca_runs(args.repeats)
        if polca is not None:
            times, cpus, lliks = polca
            rows.append(("poLCA (nrep = 20, with SEs)", statistics.median(times), statistics.median(cpus), max(lliks)))
    print(
        f"# latent class regression, election, 3 classes ~ PARTY, 20 starts; {datetime.date.today()}, "
        f"{platform.node()}, {os.cpu_count()} cores; load average {before:.2f} before, {load_average():.2f} after; "
        f"median of {args.repeats} runs"
    )
    print("| program | median wall s | median CPU s | best log-likelihood |")
    print("|---|---:|---:|---:|")
    for label, seconds, cpu, ll in rows:
        print(f"| {label} | {seconds:.2f} | {cpu:.2f} | {ll:.4f} |")
    if len(rows) == 3:
        ratio = (rows[2][1] / rows[1][1], rows[2][2] / rows[1][2])
        print(f"| ratio poLCA / effdim fit + SEs | {ratio[0]:.1f} | {ratio[1]:.1f} | |")


if __name__ == "__main__":
    main()
