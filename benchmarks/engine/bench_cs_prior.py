"""Which CS prior gives the paper's ordering of Section 5, and how far CS varies across EM starts.

The figures behind "The CS prior" in ``docs/experiments.md``.

1. ``picks``: LC sweeps |X| = 1..8 of ``replicates`` data sets from ``8:2,2,2,2``
   (Dirichlet(1) parameters) at 4,000 and 64,000 rows, and of Stouffer-Toby.
   The same fits are scored under each prior; the mean selected |X| per score
   (ties by :func:`effdim.scores.best_index`, the one tie rule).
2. ``spread``: Stouffer-Toby, ``starts`` single-start fits per |X|; among the
   starts that reach the best log-likelihood (within 1e-3), the range of CS
   and CS+ under each prior.

Usage::

    .venv/bin/python -m benchmarks.engine.bench_cs_prior                 # about a minute
"""

from __future__ import annotations

import argparse

import numpy as np

from effdim import datasets, lc_model_for, sweep
from effdim.distribution import random_parameters, sample
from effdim.em import fit_em
from effdim.model import HLCModel
from effdim.scores import best_index, cheeseman_stutz, cs_plus, model_dimensions

PRIORS = ("k2", "bdeu:1", "bdeu:10", "jeffreys")


def picks(fits) -> dict[str, int]:
    """Selected |X| per score (BIC, BIC+ and CS/CS+ under every prior) over one sweep."""
    ds, n = [f.ds for f in fits], fits[0].n
    out = {
        "bic": fits[best_index([f.scores.bic for f in fits], ds, n)].card,
        "bic+": fits[best_index([f.scores.bic_plus for f in fits], ds, n)].card,
    }
    for prior in PRIORS:
        cs = [cheeseman_stutz(f.loglik, f.em.expected_counts, f.em.params.cpts, prior) for f in fits]
        out[f"cs {prior}"] = fits[best_index(cs, ds, n)].card
        out[f"cs+ {prior}"] = fits[best_index([cs_plus(c, f.ds, f.de, n) for c, f in zip(cs, fits)], ds, n)].card
    return out


def spread(starts: int) -> None:
    data = datasets.load("stouffer-toby")
    for k in range(1, 9):
        model = lc_model_for(data, k)
        fits = [fit_em(data, model, restarts=1, seed=s, tol=1e-10, max_iter=5000) for s in range(starts)]
        top = max(f.loglik for f in fits)
        good = [f for f in fits if f.loglik >= top - 1e-3]
        cells = []
        for prior in ("k2", "bdeu:1"):
            cs = np.array([cheeseman_stutz(f.loglik, f.expected_counts, f.params.cpts, prior) for f in good])
            plus = np.array([cs_plus(c, *model_dimensions(model), data.n_rows) for c in cs])
            cells.append(f"{prior}: CS {cs.min():.1f} .. {cs.max():.1f}, CS+ {plus.min():.1f} .. {plus.max():.1f}")
        print(f"  |X| = {k}: {len(good)}/{starts} starts at the best LL; " + "; ".join(cells))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--replicates", type=int, default=10)
    ap.add_argument("--starts", type=int, default=15)
    args = ap.parse_args()
    print("Stouffer-Toby picks:", picks(sweep(datasets.load("stouffer-toby"), restarts=5, seed=0)))
    model = HLCModel.parse("8:2,2,2,2")
    for n in (4000, 64000):
        acc: dict[str, list[int]] = {}
        for rep in range(args.replicates):
            rng = np.random.default_rng([rep, n])
            data = sample(random_parameters(model, rng), n, rng)
            for key, card in picks(sweep(data, restarts=5, seed=rep)).items():
                acc.setdefault(key, []).append(card)
        print(
            f"8:2,2,2,2, n = {n}, mean selected |X| over {args.replicates}:",
            {k: round(float(np.mean(v)), 1) for k, v in acc.items()},
        )
    print("CS across starts at the best log-likelihood (Stouffer-Toby):")
    spread(args.starts)


if __name__ == "__main__":
    main()
