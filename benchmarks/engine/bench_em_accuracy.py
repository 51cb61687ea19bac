"""How far EM can be trusted along a search.

Two measurements, both on the fits the library itself makes:

1. ``table2``: the Section 6 jobs (:func:`effdim.experiments.hlc.hlc_job`
   with the configurations of :class:`~effdim.experiments.hlc.HLCStudy`: the
   Table 2 generation and the paper's hill climbs for BIC, BIC+, CS and CS+,
   5 starts, ``tol = 1e-8`` per row, at most 1000 EM steps). Every fit a
   job makes is recorded: the share that met ``tol`` within ``max_iter``, the
   EM steps, and the *drops*: pairs of fitted models of one data set where
   the larger one (one hidden cardinality higher, the rest equal) ended with
   a lower log-likelihood than the nested smaller one (any fit of it; a
   model fitted twice, grown from two different fits, counts twice), and
   separately the drops below the fit a model was grown from (``smaller``
   of :func:`effdim.fit`; none before nested starts existed).
2. ``sweep``: sweeps of every hidden node of ``5(3(2,2),2,3(2,2))`` on the
   bundled ``hlc-figure2`` data (:func:`effdim.search.sweep`): the number of
   steps ``|H| -> |H| + 1`` that lower the log-likelihood, and the largest drop.

Usage::

    .venv/bin/python -m benchmarks.engine.bench_em_accuracy                      # both, 4 replicates
    .venv/bin/python -m benchmarks.engine.bench_em_accuracy --replicates 2 --only sweep

Results go to ``benchmarks/engine/em-accuracy-results.json`` under ``--label``
(default ``current``), so a run of older code (``PYTHONPATH`` pointing at a
copy of it) can be stored beside the current one.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from effdim import datasets, sweep
from effdim.experiments import hlc as hlc_module
from effdim.model import HLCModel
from effdim.notation import format_model

HERE = Path(__file__).resolve().parent
OUT = HERE / "em-accuracy-results.json"
SIZES = (1000, 3000, 9000, 27000, 81000, 243000)
DROP_EPS = 1e-6  # log-likelihood units; smaller differences are rounding


def _nested_drops(fits: list) -> list[float]:
    """Drops ``LL(small) - LL(large)`` > DROP_EPS over all pairs of ``fits`` whose models are nested
    (the larger one has one hidden cardinality one higher); a model fitted twice counts twice."""
    by_model: dict = {}
    for f in fits:
        by_model.setdefault(f.model, []).append(f)
    drops = []
    for m, small_fits in by_model.items():
        for h in m.hidden:
            for g in by_model.get(m.with_card(h, m.card(h) + 1), []):
                for f in small_fits:
                    if g.loglik < f.loglik - DROP_EPS:
                        drops.append(f.loglik - g.loglik)
    return drops


def bench_table2(replicates: int, sizes: tuple[int, ...], cs_prior: str | None = None) -> dict:
    real_fit = hlc_module.fit
    # the study's own job configurations (seed 0, 5 starts, tol 1e-8, at most 1000 steps)
    study = hlc_module.HLCStudy(replicates=replicates, sizes=sizes, **({"cs_prior": cs_prior} if cs_prior else {}))
    per_size = {}
    start_all = time.perf_counter()
    for n in sizes:
        converged = total = 0
        iters, drops, times, parent_drops = [], [], [], []
        for rep in range(replicates):
            made: list = []

            def recording_fit(data, m, **kw):
                f = real_fit(data, m, **kw)
                made.append(f)
                smaller = kw.get("smaller")
                if smaller is not None and f.loglik < smaller.loglik - DROP_EPS:
                    parent_drops.append(smaller.loglik - f.loglik)
                return f

            hlc_module.fit = recording_fit
            try:
                config = next(j for j in study.jobs() if j["replicate"] == rep and j["n"] == n)
                t0 = time.perf_counter()
                hlc_module.hlc_job(config)
                times.append(time.perf_counter() - t0)
            finally:
                hlc_module.fit = real_fit
            total += len(made)
            converged += sum(bool(f.restarts["converged"]) for f in made)
            iters += [int(f.restarts["n_iter"]) for f in made]
            drops += _nested_drops(made)
        per_size[str(n)] = {
            "fits": total,
            "converged": converged,
            "converged_share": converged / max(total, 1),
            "n_iter_median": statistics.median(iters),
            "n_iter_max": max(iters),
            "drops": len(drops),
            "max_drop": max(drops, default=0.0),
            "drops_below_parent": len(parent_drops),
            "job_seconds_median": statistics.median(times),
        }
        print(
            f"  n={n}: {converged}/{total} converged, median steps {statistics.median(iters)}, "
            f"{len(drops)} nested drops (max {max(drops, default=0.0):.3g}; "
            f"{len(parent_drops)} below the fit they grew from), "
            f"job median {statistics.median(times):.2f} s",
            flush=True,
        )
    fits = sum(v["fits"] for v in per_size.values())
    conv = sum(v["converged"] for v in per_size.values())
    return {
        "replicates": replicates,
        "sizes": list(sizes),
        "per_size": per_size,
        "fits": fits,
        "converged": conv,
        "converged_share": conv / max(fits, 1),
        "drops": sum(v["drops"] for v in per_size.values()),
        "seconds": time.perf_counter() - start_all,
    }


def bench_sweep(seeds: int) -> dict:
    data = datasets.load("hlc-figure2")
    model = HLCModel.parse(hlc_module.PAPER_HLC_MODEL)
    out = {}
    for h in model.hidden:
        steps = drops = 0
        worst = 0.0
        t0 = time.perf_counter()
        for seed in range(seeds):
            results = sweep(data, model, h, restarts=5, seed=seed, tol=1e-8, max_iter=1000)
            for a, b in zip(results, results[1:]):
                steps += 1
                if b.loglik < a.loglik - DROP_EPS:
                    drops += 1
                    worst = max(worst, a.loglik - b.loglik)
        out[h] = {
            "steps": steps,
            "drops": drops,
            "max_drop": worst,
            "seconds": time.perf_counter() - t0,
            "model": format_model(model),
        }
        print(f"  sweep {h}: {drops}/{steps} steps lower the log-likelihood (max {worst:.3g})", flush=True)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", choices=["table2", "sweep"], nargs="+")
    ap.add_argument("--replicates", type=int, default=4, help="Table 2 replicates per size (4)")
    ap.add_argument("--sizes", default=",".join(str(n) for n in SIZES))
    ap.add_argument("--seeds", type=int, default=5, help="sweep seeds per hidden node (5)")
    ap.add_argument("--label", default="current", help="key of this run in the results file")
    ap.add_argument("--cs-prior", default=None, help="CS prior of the climbs (default: the study's)")
    args = ap.parse_args()
    todo = args.only or ["table2", "sweep"]
    results = json.loads(OUT.read_text()) if OUT.exists() else {}
    entry = results.setdefault(args.label, {})
    if "table2" in todo:
        print("Table 2 fits:")
        sizes = tuple(int(s) for s in args.sizes.split(","))
        t = entry["table2"] = bench_table2(args.replicates, sizes, args.cs_prior)
        print(
            f"converged {t['converged']}/{t['fits']} = {100 * t['converged_share']:.1f}%, "
            f"{t['drops']} nested drops, {t['seconds']:.0f} s"
        )
    if "sweep" in todo:
        print("hlc-figure2 sweeps:")
        entry["sweep"] = bench_sweep(args.seeds)
    OUT.write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
