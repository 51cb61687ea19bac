"""EM at the machine's limit: effdim beside StepMix and poLCA on the same data and the same EM steps.

The case: 100,000 rows sampled from an LC model with 5 classes over 30 binary items (Dirichlet(1)
parameters, seed 7; the rows seed 8), fitted by the LC model with 5 classes from one random start for
exactly 100 EM steps (no convergence test), as ``bench_em.py --only wide`` does. Target: effdim at
least 10 times faster than StepMix in wall seconds, in one run on an idle machine.

* effdim: :func:`effdim.em.fit_em` with ``restarts=1, tol=None, max_iter=100`` on the data's 93,762
  distinct patterns (its own compression), on every core (the E-step's threads, :mod:`effdim.em.kernel`),
  again with each thread given a fixed share of the patterns (one chunk per thread: what a thread that
  another process holds up costs the pass, :data:`effdim.em.kernel.CHUNKS_PER_THREAD`), and on one thread
  (the CPU seconds of the same work);
* StepMix (PyPI; its own venv, ``benchmarks/.venv-stepmix``, never a dependency): ``StepMix(n_components=5,
  measurement="binary", n_init=1, max_iter=100, abs_tol=0, rel_tol=0)`` on the 100,000 rows, as it is
  usually called;
* poLCA (R, installed system-wide): ``poLCA(..., nclass=5, maxiter=100, nrep=1, tol=0)`` on the rows.

Each tool runs ``--repeats`` times in turn (wall and CPU seconds of the fit alone, data loading
excluded; the medians are printed) and every log-likelihood after its 100 steps is printed beside: the
three start from different random points, so they agree only roughly; effdim's own figure is also
compared with the one its E-step gave before it was compiled (:data:`REFERENCE_LOGLIK`, printed to the
same 6 decimals), which shows the compiled pass computes what the array code did.

Usage (one command; the peers are skipped with a note when their venv or R is missing)::

    python3 -m venv benchmarks/.venv-stepmix && benchmarks/.venv-stepmix/bin/pip install stepmix
    .venv/bin/python -m benchmarks.engine.bench_em_peers --repeats 5
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import load_average
from effdim.distribution import random_parameters, sample
from effdim.em import ModelData, fit_em, kernel
from effdim.model import HLCModel

ROOT = Path(__file__).resolve().parents[2]
STEPMIX = ROOT / "benchmarks" / ".venv-stepmix" / "bin" / "python"
ROWS, ITEMS, CLASSES, STEPS = 100_000, 30, 5, 100
#: effdim's log-likelihood after 100 EM steps from seed 0 when its E-step was numpy arrays (before the
#: compiled pass): the same to the 6 decimals printed.
REFERENCE_LOGLIK = -1580566.168002

STEPMIX_CODE = """
import sys, time, json, warnings
import numpy as np
from stepmix.stepmix import StepMix
X = np.loadtxt(sys.argv[1], delimiter=",", skiprows=1)
out = []
for r in range(int(sys.argv[2])):
    model = StepMix(n_components=5, measurement="binary", n_init=1, max_iter=100, abs_tol=0.0, rel_tol=0.0,
                    random_state=r, verbose=0, progress_bar=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        w, c = time.perf_counter(), time.process_time()
        model.fit(X)
        out.append([time.perf_counter() - w, time.process_time() - c, float(model.score(X)) * X.shape[0]])
import stepmix
print(json.dumps({"version": stepmix.__version__, "runs": out}))
"""

POLCA_CODE = """
suppressMessages(library(poLCA))
args <- commandArgs(trailingOnly = TRUE)
data <- read.csv(args[1]) + 1
f <- as.formula(paste0("cbind(", paste(names(data), collapse = ","), ") ~ 1"))
for (r in seq_len(as.integer(args[2]))) {
  set.seed(r)
  t <- system.time(m <- poLCA(f, data, nclass = 5, maxiter = 100, nrep = 1, tol = 0, verbose = FALSE,
                              calc.se = FALSE))
  cat(t[["elapsed"]], t[["user.self"]] + t[["sys.self"]], m$llik, m$numiter, "\\n")
}
cat("version", as.character(packageVersion("poLCA")), "\\n")
"""


def make_data():
    model = HLCModel.lc(CLASSES, [2] * ITEMS)
    return model, sample(random_parameters(model, 7), ROWS, 8)


def run_effdim(
    model, data, repeats: int, one_thread: bool, chunks: int | None = None
) -> list[tuple[float, float, float]]:
    """effdim's runs, on one thread or on every core, the patterns cut into ``chunks`` chunks per thread
    (default :data:`effdim.em.kernel.CHUNKS_PER_THREAD`; 1 is a fixed share per thread)."""
    md = ModelData(model, data)
    kernel.load()
    runs = []
    threads, per_thread = kernel.threads, kernel.CHUNKS_PER_THREAD
    if one_thread:
        kernel.threads = lambda: 1
    kernel.CHUNKS_PER_THREAD = chunks or per_thread
    try:
        for r in range(repeats):
            w, c = time.perf_counter(), time.process_time()
            result = fit_em(md, model, restarts=1, seed=r, tol=None, max_iter=STEPS)
            runs.append((time.perf_counter() - w, time.process_time() - c, result.loglik))
            assert result.n_iter == STEPS
    finally:
        kernel.threads, kernel.CHUNKS_PER_THREAD = threads, per_thread
    return runs


def run_stepmix(csv: Path, repeats: int) -> tuple[str, list] | None:
    if not STEPMIX.exists():
        return None
    proc = subprocess.run([str(STEPMIX), "-c", STEPMIX_CODE, str(csv), str(repeats)], capture_output=True, text=True)
    if proc.returncode:
        raise RuntimeError(proc.stderr)
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    return out["version"], out["runs"]


def run_polca(csv: Path, repeats: int) -> tuple[str, list] | None:
    if shutil.which("Rscript") is None:
        return None
    proc = subprocess.run(["Rscript", "-e", POLCA_CODE, str(csv), str(repeats)], capture_output=True, text=True)
    if proc.returncode:
        raise RuntimeError(proc.stderr)
    lines = proc.stdout.split("\n")
    version = next(line.split()[1] for line in lines if line.startswith("version"))
    runs = [[float(x) for x in line.split()[:3]] for line in lines if line and not line.startswith("version")]
    return version, runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument(
        "--peers", nargs="*", choices=["StepMix", "poLCA"], default=["StepMix", "poLCA"], help="the peers to run"
    )
    args = parser.parse_args()
    load = [load_average()]
    model, data = make_data()
    rows = {}
    rows["effdim, both cores"] = ("", run_effdim(model, data, args.repeats, False))
    rows["effdim, both cores, one chunk per thread"] = ("", run_effdim(model, data, args.repeats, False, chunks=1))
    rows["effdim, one thread"] = ("", run_effdim(model, data, args.repeats, True))
    with tempfile.TemporaryDirectory() as tmp:
        csv = Path(tmp) / "wide.csv"
        data.to_frame().to_csv(csv, index=False)
        for name, runner in (("StepMix", run_stepmix), ("poLCA", run_polca)):
            if name not in args.peers:
                continue
            found = runner(csv, args.repeats)
            rows[name] = found if found else ("not installed", [])
    load.append(load_average())
    base = statistics.median(r[0] for r in rows["effdim, both cores"][1])
    print(
        f"LC {CLASSES} classes, {ROWS:,} rows x {ITEMS} binary items ({ModelData(model, data).n_patterns:,} "
        f"patterns), one start, {STEPS} EM steps; medians of {args.repeats} runs; load {load[0]:.1f} -> {load[1]:.1f}; "
        f"{os.cpu_count()} CPUs"
    )
    print()
    print("| tool | wall s | CPU s | wall / effdim's | log-likelihoods after 100 steps |")
    print("|---|---:|---:|---:|---|")
    for name, (version, runs) in rows.items():
        if not runs:
            print(f"| {name} | {version} | | | |")
            continue
        wall = statistics.median(r[0] for r in runs)
        cpu = statistics.median(r[1] for r in runs)
        label = f"{name} {version}".strip()
        lls = ", ".join(f"{r[2]:.6f}" if name.startswith("effdim") else f"{r[2]:.2f}" for r in runs)
        print(f"| {label} | {wall:.3f} | {cpu:.3f} | {wall / base:.1f} | {lls} |")
    first = rows["effdim, both cores"][1][0][2]
    same = f"{first:.6f}" == f"{REFERENCE_LOGLIK:.6f}"
    print()
    print(
        f"effdim seed 0: {first:.6f}; before the compiled pass {REFERENCE_LOGLIK:.6f}: {'equal' if same else 'DIFFERENT'}"
    )
    sys.exit(0 if same else 1)


if __name__ == "__main__":
    main()
