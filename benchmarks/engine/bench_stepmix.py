"""StepMix on the LC sweep benchmark data, for the side-by-side table of bench_em.py.

Runs in its own environment (StepMix is not a dependency of effdim)::

    python3 -m venv benchmarks/.venv-stepmix
    benchmarks/.venv-stepmix/bin/pip install stepmix
    benchmarks/.venv-stepmix/bin/python -m benchmarks.engine.bench_stepmix --cards 2 3

Data: the Stouffer-Toby table (216 respondents, 4 binary items, bundled as
``core/datasets/stouffer_toby.csv``) with every count multiplied by 1125:
243,000 rows. Settings as in bench_em.py: ``n_init=5`` random starts,
``abs_tol=1e-10`` on the change of the mean log-likelihood per row
(``rel_tol=0``), ``max_iter=1000``.

Two modes, both written to ``benchmarks/engine/stepmix-results.json``:

* ``rows``: the 243,000 rows as a (243000, 4) matrix (how StepMix is usually
  called);
* ``weighted``: the 16 distinct patterns with ``sample_weight`` = counts (the
  same likelihood, compressed the way effdim compresses).
"""

from __future__ import annotations

import argparse
import csv
import json
import statistics
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
DATA = HERE.parents[1] / "core" / "datasets" / "stouffer_toby.csv"
OUT = HERE / "stepmix-results.json"
FACTOR = 1125  # 216 * 1125 = 243,000 rows


def load():
    patterns, counts = [], []
    with open(DATA, newline="") as f:
        for row in csv.DictReader(f):
            patterns.append([1 if row[c] == "+" else 0 for c in "ABCD"])
            counts.append(int(row["count"]) * FACTOR)
    return np.array(patterns), np.array(counts, dtype=float)


def run(k, X, weights, seed, n_init, tol, max_iter):
    from stepmix.stepmix import StepMix

    model = StepMix(
        n_components=k,
        measurement="binary",
        n_init=n_init,
        max_iter=max_iter,
        abs_tol=tol,
        rel_tol=0.0,
        random_state=seed,
        verbose=0,
        progress_bar=0,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        model.fit(X, sample_weight=weights)
        elapsed = time.perf_counter() - start
        total = float(np.sum(weights)) if weights is not None else float(X.shape[0])
        loglik = float(model.score(X, sample_weight=weights)) * total
    return elapsed, loglik


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mode", choices=["rows", "weighted"], default="rows")
    ap.add_argument("--cards", type=int, nargs="+", default=list(range(1, 9)))
    ap.add_argument("--repeats", type=int, default=1, help="timings per |X| (the median is reported)")
    ap.add_argument("--n-init", type=int, default=5)
    ap.add_argument("--tol", type=float, default=1e-10)
    ap.add_argument("--max-iter", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    patterns, counts = load()
    if args.mode == "rows":
        X, weights = np.repeat(patterns, counts.astype(int), axis=0), None
    else:
        X, weights = patterns, counts
    results = json.loads(OUT.read_text()) if OUT.exists() else {}
    import stepmix

    section = results.setdefault(args.mode, {})
    results["stepmix_version"] = getattr(stepmix, "__version__", "unknown")
    for k in args.cards:
        times, lls = [], []
        for r in range(args.repeats):
            t, ll = run(k, X, weights, args.seed + r, args.n_init, args.tol, args.max_iter)
            times.append(t)
            lls.append(ll)
            print(f"stepmix {args.mode} |X|={k} run {r + 1}: {t:.2f} s, loglik {ll:.4f}", flush=True)
        section[str(k)] = {
            "time_median": statistics.median(times),
            "times": times,
            "loglik_best": max(lls),
            "logliks": lls,
            "n_init": args.n_init,
            "tol": args.tol,
            "max_iter": args.max_iter,
            "rows": int(X.shape[0]),
        }
        OUT.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
