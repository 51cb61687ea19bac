"""What EM's stopping rule costs and how close it stops: a sweep where de < ds and an identifiable HLC fit.

Cases, at EM's default settings unless named (:class:`effdim.EMSettings`):

1. ``sweep``: the LC sweep of the Stouffer-Toby data (|X| = 1..4; three and four classes have de < ds);
2. ``gss82``: the LC sweep of tests/data/gss82.csv (|X| = 1..5);
3. ``hlc``: the HLC model ``3(3(3,3,3),3(3,3,3),3(3,3,3))`` (de = ds = 74) on 5,000 rows drawn from random
   parameters (seed 3, draw seed 4), EM seed 2, ``max_iter = 5000``: the kind of fit issue 61 reported.

Per case: the median CPU seconds of ``--repeats`` runs (this process only), the E-steps of each fit's best
start, how many fits said converged, and how far each converged fit stopped below where EM leads (its own
parameters continued by ``--continue`` more SQUAREM E-steps, untimed), in nats and in ``tol x N``. Run it on
two checkouts to compare two stopping rules; the load is printed with the table::

    .venv/bin/python -m benchmarks.engine.bench_convergence --repeats 3
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings
from pathlib import Path

from benchmarks.common import load_average
from effdim import EMSettings, datasets, parse_model, sweep
from effdim.distribution import random_parameters, sample
from effdim.em import ModelData, fit_em
from effdim.reading import load_csv

ROOT = Path(__file__).resolve().parents[2]
HLC = "3(3(3,3,3),3(3,3,3),3(3,3,3))"


def cases():
    """(name, data, model or None for a sweep, the fits' settings)."""
    hlc = parse_model(HLC)
    return [
        ("sweep", datasets.load("stouffer-toby"), None, EMSettings(seed=0)),
        ("gss82", load_csv(ROOT / "tests" / "data" / "gss82.csv"), None, EMSettings(seed=0)),
        ("hlc", sample(random_parameters(hlc, 3), 5000, 4), hlc, EMSettings(seed=2, max_iter=5000)),
    ]


def run(data, model, settings):
    """The fits of one case, as (model, params, loglik, E-steps, converged, tol x N)."""
    if model is None:
        fits = sweep(data, max_card=5, settings=settings)
        return [(f.model, f.em.params, f.loglik, f.restarts["n_iter"], f.restarts["converged"]) for f in fits]
    fit = fit_em(data, model, settings)
    return [(model, fit.params, fit.loglik, fit.n_iter, fit.converged)]


def gap(data, model, params, loglik, steps):
    """How far a fit stopped below where EM leads from its own parameters: (nats, in tol x N)."""
    md = ModelData(model, data)
    more = fit_em(md, model, init=params, restarts=0, tol=None, max_iter=steps, order_states=False)
    return more.loglik - loglik, (more.loglik - loglik) / (1e-8 * md.n_rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--continue", dest="steps", type=int, default=20000)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    print(f"load before: {load_average():.2f}")
    print(
        "| case | CPU s (median) | E-steps of the best start | converged | largest gap of a converged fit (nats, tol x N) |"
    )
    print("|---|---:|---|---:|---:|")
    for name, data, model, settings in cases():
        seconds = []
        for _ in range(args.repeats):
            start = time.process_time()
            fits = run(data, model, settings)
            seconds.append(time.process_time() - start)
        gaps = [gap(data, m, p, ll, args.steps) for m, p, ll, _, ok in fits if ok]
        worst = max(gaps, default=(float("nan"), float("nan")))
        steps = ", ".join(str(f[3]) for f in fits)
        done = f"{sum(f[4] for f in fits)} of {len(fits)}"
        print(f"| {name} | {statistics.median(seconds):.2f} | {steps} | {done} | {worst[0]:.2g}, {worst[1]:.3g} |")
    print(f"load after: {load_average():.2f}")


if __name__ == "__main__":
    main()
