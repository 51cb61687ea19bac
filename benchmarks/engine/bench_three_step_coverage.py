"""Coverage of the three-step method's 95 % intervals, and the bias of each method, by simulation.

Each replicate draws ``--rows`` rows from the 3-class model of
``tests/references/stepmix_three_step.py`` (6 binary items, modal assignment
misclassifying about 15 %; a continuous outcome ``z`` with class means 0, 1, 2
and a 3-category outcome ``zc``) with class membership depending on a
covariate ``x`` (log odds 0, 1 and -1 per unit of ``x`` against class 1), fits
the LC model (5 restarts), matches its classes to the true ones by their
profiles (keeping the replicates whose classes come in the true order), and estimates by BCH, ML and modal
assignment: ``z``'s class means,
``zc``'s probability of its last category per class, and the slopes of ``x`` by
three-step covariates. Per method and quantity it prints the share of the
intervals holding the truth (target 95 %), the mean bias, and the mean
standard error against the standard deviation of the estimates over the
replicates (the standard errors take the classification error as known, so they
may fall a little short; ``--step1`` adds step 1's uncertainty, :mod:`effdim.threestep.step1`).

    python -m benchmarks.engine.bench_three_step_coverage --replicates 200 --rows 1000
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pandas as pd

from benchmarks.common import load_average

PROFILES = np.array([[0.8] * 6, [0.8] * 3 + [0.2] * 3, [0.2] * 6])
SLOPES = np.array([0.0, 1.0, -1.0])
INTERCEPTS = np.array([0.0, -0.4, -0.9])
Z_MEANS, Z_SDS = np.array([0.0, 1.0, 2.0]), np.array([1.0, 1.5, 0.5])
ZC = np.array([[0.6, 0.3, 0.1], [0.2, 0.5, 0.3], [0.1, 0.2, 0.7]])
MODEL = "X:3:i1:2,i2:2,i3:2,i4:2,i5:2,i6:2"
METHODS = ("bch", "ml", "modal")


def draw(rng: np.random.Generator, n: int) -> pd.DataFrame:
    x = rng.normal(size=n)
    eta = INTERCEPTS + np.outer(x, SLOPES)
    p = np.exp(eta - eta.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    c = (rng.random(n)[:, None] > np.cumsum(p, axis=1)).sum(axis=1)
    frame = pd.DataFrame((rng.random((n, 6)) < PROFILES[c]).astype(int) + 1, columns=[f"i{j}" for j in range(1, 7)])
    frame["z"] = rng.normal(Z_MEANS[c], Z_SDS[c]).round(5)
    frame["zc"] = (rng.random(n)[:, None] > np.cumsum(ZC[c], axis=1)).sum(axis=1) + 1
    frame["x"] = x.round(5)
    return frame


def replicate(rng: np.random.Generator, n: int, step1: bool) -> dict | None:
    """One replicate's (estimate, se, truth) per method and quantity; None when the fit's classes are not the
    true ones in the true order (a local optimum of another shape, or shares drawn in another order): the
    estimates of different replicates are then of the same classes, against the same reference."""
    from effdim import fit
    from effdim.data import from_frame
    from effdim.threestep import covariates_3step, distal_outcomes

    data = from_frame(draw(rng, n), unlimited=["z", "x"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fitted = fit(data.subset([f"i{j}" for j in range(1, 7)]), MODEL, seed=int(rng.integers(2**31)), warn=False)
    profiles = np.array([fitted.params.cpts[f"i{j}"][:, 1] for j in range(1, 7)]).T
    order = [int(np.argmin(np.abs(PROFILES - row).sum(axis=1))) for row in profiles]
    if order != [0, 1, 2]:
        return None
    truth_slopes = (SLOPES - SLOPES[0])[1:]
    found = {}
    for method in METHODS:
        options = {"method": method, "step1": step1}
        z, zc = distal_outcomes(fitted, data, {"z": "continuous", "zc": "categorical"}, **options)
        reg = covariates_3step(fitted, data, "x", **options)
        found[method] = {
            "z mean": (z.estimates[:, 0], z.se[:, 0], Z_MEANS),
            "zc P(3)": (zc.estimates[:, 2], zc.se[:, 2], ZC[:, 2]),
            "x slope": (reg.coefficients[1], reg.se[1], truth_slopes),
        }
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=200)
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=61)
    parser.add_argument("--step1", action="store_true", help="add the measurement model's uncertainty to the errors")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    start = time.perf_counter()
    runs, skipped = [], 0
    for _ in range(args.replicates):
        found = replicate(rng, args.rows, args.step1)
        if found is None:
            skipped += 1
        else:
            runs.append(found)
    rows = []
    for method in METHODS:
        for quantity in runs[0][method]:
            est = np.array([r[method][quantity][0] for r in runs])
            se = np.array([r[method][quantity][1] for r in runs])
            truth = np.array([r[method][quantity][2] for r in runs])
            covered = np.abs(est - truth) <= 1.959964 * se
            rows.append(
                (method, quantity, 100 * covered.mean(), np.abs((est - truth).mean(axis=0)).max(),
                 se.mean(axis=0).mean(), est.std(axis=0).mean())
            )  # fmt: skip
    errors = "with step 1's uncertainty" if args.step1 else "the classification error taken as known"
    print(f"standard errors {errors}; {len(runs)} replicates of {args.rows} rows ({skipped} fits of another shape or order left out), "
          f"{time.perf_counter() - start:.0f} s; load {load_average():.2f}")  # fmt: skip
    print("| method | quantity | coverage of the 95 % intervals | largest mean bias | mean SE | SD of the estimates |")
    print("|---|---|---:|---:|---:|---:|")
    for method, quantity, cover, bias, se, sd in rows:
        print(f"| {method} | {quantity} | {cover:.1f} % | {bias:.3f} | {se:.3f} | {sd:.3f} |")


if __name__ == "__main__":
    main()
