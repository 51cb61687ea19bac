"""Coverage of effdim's 95 % intervals: how often they hold the true parameter, by simulation.

Two identified models with known parameters, ``--replicates`` samples of each:

* ``lc``: an LC model, 3 classes (shares 0.5, 0.3, 0.2) over 6 binary items, ``--lc-rows`` rows (1,000);
* ``regression``: 2 classes over 5 binary items, the second class's log odds ``-0.5 + 1.0 x`` with
  ``x`` standard normal, 800 rows (:func:`effdim.fit` with ``covariates="x"``).

Each sample is fitted (5 starts), its classes matched to the true ones (the order closest in the item
probabilities), and every interval of :mod:`effdim.standard_errors` checked: probabilities and shares on
the logit scale, coefficients on their own, by the observed, empirical and robust information. A
quantity without a standard error (on the boundary) counts as missed. Prints the share of intervals that
held the truth per model and method (and the lowest over the parameters), and the ratio of the mean
standard error to the standard deviation of the estimates over the samples (1 when they agree).

Usage::

    .venv/bin/python -m benchmarks.engine.bench_se_coverage                  # 200 replicates each
    .venv/bin/python -m benchmarks.engine.bench_se_coverage --replicates 50
    .venv/bin/python -m benchmarks.engine.bench_se_coverage --lc-rows 4000    # the LC model's coverage as n grows
"""

from __future__ import annotations

import argparse
import datetime
import itertools
import time

import numpy as np
import pandas as pd

import effdim
from benchmarks.common import load_average
from effdim.standard_errors import logit_interval

METHODS = ("observed", "empirical", "robust")
Z = 1.959963984540054


def lc_truth():
    rng = np.random.default_rng(2)
    items = rng.uniform(0.1, 0.4, size=(3, 6))
    items[0, :3] = 1 - items[0, :3]  # class 1: yes on items 1-3
    items[1, 3:] = 1 - items[1, 3:]  # class 2: yes on items 4-6
    return np.array([0.5, 0.3, 0.2]), items  # class 3: mostly no


def regression_truth():
    rng = np.random.default_rng(3)
    items = rng.uniform(0.15, 0.35, size=(2, 5))
    items[0] = 1 - items[0]
    return np.array([-0.5, 1.0]), items


def sample_lc(rng, n):
    shares, items = lc_truth()
    cls = rng.choice(3, size=n, p=shares)
    yes = rng.random((n, items.shape[1])) < items[cls]
    return pd.DataFrame({f"i{j + 1}": np.where(yes[:, j], "yes", "no") for j in range(items.shape[1])})


def sample_regression(rng, n):
    beta, items = regression_truth()
    x = rng.standard_normal(n)
    p2 = 1 / (1 + np.exp(-(beta[0] + beta[1] * x)))
    cls = (rng.random(n) < p2).astype(int)
    yes = rng.random((n, items.shape[1])) < items[cls]
    frame = pd.DataFrame({f"i{j + 1}": np.where(yes[:, j], "yes", "no") for j in range(items.shape[1])})
    frame["x"] = x
    return frame


def yes_probabilities(fit) -> np.ndarray:
    """P(item = yes | class) for every item (rows: classes)."""
    cols = []
    for leaf in fit.model.observed:
        states = [str(s) for s in fit.labels.states[leaf]]
        cols.append(fit.params.cpts[leaf][:, states.index("yes")])
    return np.column_stack(cols)


def aligned(fit, items):
    """The fit with its classes in the order closest to the true ones (item probabilities, L1)."""
    k = items.shape[0]
    est = yes_probabilities(fit)
    order = min(itertools.permutations(range(k)), key=lambda o: np.abs(est[list(o)] - items).sum())
    return fit.relabeled(fit.model.root, list(order)) if list(order) != list(range(k)) else fit


def covered_items(fit, se, items) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per item probability: held by its interval, its estimate, its standard error."""
    est, errs, held = [], [], []
    for j, leaf in enumerate(fit.model.observed):
        states = [str(s) for s in fit.labels.states[leaf]]
        c = states.index("yes")
        p, s = fit.params.cpts[leaf][:, c], se.tables[leaf][:, c]
        low, high = logit_interval(p, np.nan_to_num(s, nan=np.inf))
        held.append((low <= items[:, j]) & (items[:, j] <= high) & ~np.isnan(s))
        est.append(p)
        errs.append(s)
    return np.column_stack(held), np.column_stack(est), np.column_stack(errs)


def run(kind: str, replicates: int, seed: int, lc_rows: int = 1000) -> list[tuple]:
    rng = np.random.default_rng(seed)
    held = {m: [] for m in METHODS}
    estimates, errors = [], {m: [] for m in METHODS}
    for r in range(replicates):
        if kind == "lc":
            shares, items = lc_truth()
            data = sample_lc(rng, lc_rows)
            fit = effdim.fit(data, 3, restarts=5, seed=r, warn=False)
        else:
            beta, items = regression_truth()
            data = sample_regression(rng, 800)
            fit = effdim.fit(data, 2, covariates="x", restarts=5, seed=r, warn=False)
        fit = aligned(fit, items)
        for m in METHODS:
            se = fit.standard_errors(m)
            ok, est, err = covered_items(fit, se, items)
            if kind == "lc":
                p, s = fit.params.cpts[fit.model.root], se.tables[fit.model.root]
                low, high = logit_interval(p, np.nan_to_num(s, nan=np.inf))
                extra_ok = (low <= shares) & (shares <= high) & ~np.isnan(s)
                extra_est, extra_err = p, s
            else:
                b, s = fit.coefficients[:, 0], se.coefficients[:, 0]
                extra_ok = (np.abs(b - beta) <= Z * s) & ~np.isnan(s)
                extra_est, extra_err = b, s
            held[m].append(np.concatenate([ok.ravel(), extra_ok]))
            errors[m].append(np.concatenate([err.ravel(), extra_err]))
        estimates.append(np.concatenate([est.ravel(), extra_est]))
    spread = np.std(np.array(estimates), axis=0, ddof=1)
    rows = []
    for m in METHODS:
        rate = np.mean(np.array(held[m]), axis=0)
        ratio = np.nanmean(np.array(errors[m]), axis=0) / spread
        rows.append((kind, m, rate.mean(), rate.min(), float(np.median(ratio))))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=200)
    parser.add_argument("--seed", type=int, default=61)
    parser.add_argument("--lc-rows", type=int, default=1000, help="rows of each sample of the LC model")
    args = parser.parse_args()
    start = time.perf_counter()
    rows = run("lc", args.replicates, args.seed, args.lc_rows) + run("regression", args.replicates, args.seed + 1)
    print(
        f"# coverage of 95 % intervals, {args.replicates} replicates per model, seed {args.seed}, "
        f"{args.lc_rows} rows per LC sample; "
        f"{datetime.date.today()}; {time.perf_counter() - start:.0f} s, load average {load_average():.2f}"
    )
    print("| model | information | coverage, mean over parameters | lowest | median SE / sd of estimates |")
    print("|---|---|---:|---:|---:|")
    for kind, method, mean, low, ratio in rows:
        print(f"| {kind} | {method} | {100 * mean:.1f} % | {100 * low:.1f} % | {ratio:.2f} |")


if __name__ == "__main__":
    main()
