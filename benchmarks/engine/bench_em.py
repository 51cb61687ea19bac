"""Speed of effdim's learning engine: three targets (docs/performance.md, "Learning (EM) against StepMix").

1. ``sweep``: LC sweep |X| = 1..8 on 243,000 rows over 4 binary items, 5
   restarts each, tolerance 1e-10 on the mean log-likelihood per row (StepMix's
   ``abs_tol``), at most 1000 EM steps. Target: under 3 s in all. Data: the
   Stouffer-Toby table with every count times 1125 (216 * 1125 = 243,000).
2. ``hill``: hill climbing (Section 6) for the structure of HLC
   5,3,3:2,2,2,2,2 on 243,000 rows sampled from the bundled generating
   parameters of ``hlc-figure2`` and from sharper Dirichlet(0.3) ones.
   Target: under 30 s.
3. ``wide``: 100,000 rows over 30 binary columns (almost all patterns
   distinct), LC |X| = 5, one start: time per 100 EM steps. Target: under 5 s.
4. ``patterns``: the same EM run (HLC 5,3,3, 5 starts x 200 steps) on 243,000
   rows over 5 binary columns and on their distinct patterns once each.

Usage::

    /work/venv/bin/python -m benchmarks.engine.bench_em                 # all three, medians of --repeats
    /work/venv/bin/python -m benchmarks.engine.bench_em --only sweep --repeats 5
    /work/venv/bin/python -m benchmarks.engine.bench_em --compare       # table with benchmarks/engine/stepmix-results.json

Results are written to ``benchmarks/engine/effdim-results.json``; ``--compare``
prints effdim beside StepMix (run ``bench_stepmix.py`` in its own venv first).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

import numpy as np

from effdim import datasets, hill_climb, sweep
from effdim.data import from_patterns
from effdim.distribution import random_parameters, sample
from effdim.em import ModelData, fit_em
from effdim.model import HLCModel

HERE = Path(__file__).resolve().parent
OUT = HERE / "effdim-results.json"
STEPMIX = HERE / "stepmix-results.json"
TOL = 1e-10
RESTARTS = 5
MAX_ITER = 1000


def stouffer_243k():
    base = datasets.load("stouffer-toby")
    return from_patterns(
        base.patterns, base.counts * 1125, columns=base.columns, states=base.states, source="stouffer-toby x 1125"
    )


def bench_sweep(repeats: int) -> dict:
    data = stouffer_243k()
    assert data.n_rows == 243_000
    sweep(data, restarts=RESTARTS, seed=0, tol=TOL, max_iter=MAX_ITER, cards=[2])  # warm-up (dimension cache)
    times, runs = [], []
    for r in range(repeats):
        start = time.perf_counter()
        results = sweep(data, restarts=RESTARTS, seed=r, tol=TOL, max_iter=MAX_ITER)
        times.append(time.perf_counter() - start)
        runs.append(results)
    per_card = {}
    for k in range(1, 9):
        fits = [next(f for f in run if f.card == k) for run in runs]
        per_card[str(k)] = {
            "loglik_best": max(f.loglik for f in fits),
            "logliks": [f.loglik for f in fits],
            "n_iter": [f.restarts["n_iter"] for f in fits],
            "converged": [f.restarts["converged"] for f in fits],
            "bic": fits[0].scores.bic,
            "bic_plus": fits[0].scores.bic_plus,
            "cs": fits[0].scores.cs,
            "cs_plus": fits[0].scores.cs_plus,
            "ds": fits[0].ds,
            "de": fits[0].de,
        }
    # time per |X|: one timed fit per card and repeat
    card_times = {str(k): [] for k in range(1, 9)}
    for r in range(repeats):
        for k in range(1, 9):
            start = time.perf_counter()
            sweep(data, cards=[k], restarts=RESTARTS, seed=r, tol=TOL, max_iter=MAX_ITER)
            card_times[str(k)].append(time.perf_counter() - start)
    for k, ts in card_times.items():
        per_card[k]["time_median"] = statistics.median(ts)
    return {
        "rows": 243_000,
        "patterns": int(data.n_patterns),
        "restarts": RESTARTS,
        "tol": TOL,
        "max_iter": MAX_ITER,
        "times": times,
        "time_median": statistics.median(times),
        "per_card": per_card,
    }


def bench_hill(repeats: int, scores: list[str]) -> dict:
    """Two generating parameter sets: the bundled ``hlc-figure2`` one (Dirichlet(1) rows, as in the
    paper) and a sharper one (Dirichlet(0.3) rows, seed 1), whose climbs are longer."""
    fig2 = datasets.generating_parameters("hlc-figure2")
    model = fig2.model
    sources = {
        "hlc-figure2 parameters": fig2,
        "Dirichlet(0.3) parameters": random_parameters(model, 1, concentration=0.3),
    }
    out = {"rows": 243_000, "restarts": RESTARTS, "tol": 1e-8, "max_iter": MAX_ITER, "runs": {}}
    for label, truth in sources.items():
        data = sample(truth, 243_000, 2024)
        for score in scores:
            times, paths = [], []
            for r in range(repeats):
                start = time.perf_counter()
                climb = hill_climb(data, model, score, restarts=RESTARTS, seed=r, tol=1e-8, max_iter=MAX_ITER)
                times.append(time.perf_counter() - start)
                paths.append([str(f.model) for f in climb.path])
            out["runs"][f"{label}, {score}"] = {
                "times": times,
                "time_median": statistics.median(times),
                "fits": len(climb.tried),
                "paths": paths,
                "best": paths[-1][-1],
                "patterns": int(data.n_patterns),
            }
    return out


def bench_wide(repeats: int) -> dict:
    model = HLCModel.lc(5, [2] * 30)
    data = sample(random_parameters(model, 7), 100_000, 8)
    md = ModelData(model, data)
    times = []
    for r in range(repeats):
        start = time.perf_counter()
        result = fit_em(md, model, restarts=1, seed=r, tol=None, max_iter=100)
        times.append(time.perf_counter() - start)
        assert result.n_iter == 100
    return {
        "rows": 100_000,
        "columns": 30,
        "patterns": int(data.n_patterns),
        "card": 5,
        "iterations": 100,
        "times": times,
        "time_median": statistics.median(times),
    }


def bench_patterns(repeats: int) -> dict:
    """One EM fit on 243,000 rows over 5 binary columns vs on their distinct patterns once each."""
    truth = datasets.generating_parameters("hlc-figure2")
    big = sample(truth, 243_000, 5)
    small = from_patterns(big.patterns, np.ones(big.n_patterns), columns=big.columns, cardinalities=[2] * 5)
    out = {}
    for name, data in (("243000 rows", big), (f"{small.n_patterns} rows", small)):
        times = []
        for r in range(repeats):
            start = time.perf_counter()
            fit_em(data, truth.model, restarts=RESTARTS, seed=r, tol=None, max_iter=200)
            times.append(time.perf_counter() - start)
        out[name] = {"patterns": int(data.n_patterns), "time_median": statistics.median(times), "times": times}
    return out


def compare() -> str:
    ours = json.loads(OUT.read_text())["sweep"]
    theirs = json.loads(STEPMIX.read_text()) if STEPMIX.exists() else {}
    rows_mode = theirs.get("rows", {})
    weighted = theirs.get("weighted", {})
    lines = [
        f"LC sweep, 243,000 rows x 4 binary items, {ours['restarts']} starts, tol {ours['tol']:g} per row, "
        f"max {ours['max_iter']} steps. Times: medians. Log-likelihoods: best and worst over the runs.",
        "",
        "| \\|X\\| | effdim time (s) | effdim loglik best / worst "
        f"({len(ours['times'])} runs) | StepMix rows time (s) | StepMix rows loglik "
        "| StepMix weighted time (s) | StepMix weighted loglik best / worst |",
        "|---|---|---|---|---|---|---|",
    ]

    def span(values):
        return f"{max(values):.3f} / {min(values):.3f}"

    for k in range(1, 9):
        mine = ours["per_card"][str(k)]
        r = rows_mode.get(str(k))
        w = weighted.get(str(k))
        lines.append(
            f"| {k} | {mine['time_median']:.3f} | {span(mine['logliks'])} | "
            + (f"{r['time_median']:.1f} | {span(r['logliks'])} | " if r else "not run | not run | ")
            + (f"{w['time_median']:.2f} | {span(w['logliks'])} |" if w else "not run | not run |")
        )
    total_w = sum(v["time_median"] for v in weighted.values()) if len(weighted) == 8 else None
    lines.append("")
    lines.append(
        f"effdim whole sweep |X| = 1..8: median {ours['time_median']:.2f} s over {len(ours['times'])} runs"
        + (f"; StepMix weighted, sum of the per-|X| medians: {total_w:.1f} s" if total_w else "")
    )
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", choices=["sweep", "hill", "wide", "patterns"], nargs="+")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--hill-scores", nargs="+", default=["bic", "cs+"])
    ap.add_argument("--compare", action="store_true", help="print the side-by-side table and exit")
    args = ap.parse_args()
    if args.compare:
        print(compare())
        return
    results = json.loads(OUT.read_text()) if OUT.exists() else {}
    results["machine"] = {"cpus": os.cpu_count(), "numpy": np.__version__}
    todo = args.only or ["sweep", "hill", "wide", "patterns"]
    if "sweep" in todo:
        results["sweep"] = bench_sweep(args.repeats)
        s = results["sweep"]
        print(f"sweep |X|=1..8: median {s['time_median']:.2f} s  (runs: {', '.join(f'{t:.2f}' for t in s['times'])})")
        for k, v in s["per_card"].items():
            print(f"  |X|={k}: {v['time_median']:.3f} s, best loglik {v['loglik_best']:.4f}, steps {v['n_iter']}")
    if "hill" in todo:
        results["hill"] = bench_hill(max(1, min(args.repeats, 3)), args.hill_scores)
        for key, v in results["hill"]["runs"].items():
            print(
                f"hill climb ({key}): median {v['time_median']:.2f} s over {len(v['times'])}, "
                f"{v['fits']} fits, best {v['best']}"
            )
    if "wide" in todo:
        results["wide"] = bench_wide(max(1, min(args.repeats, 3)))
        w = results["wide"]
        print(f"wide: {w['patterns']} patterns, 100 EM steps: median {w['time_median']:.2f} s")
    if "patterns" in todo:
        results["patterns"] = bench_patterns(max(1, min(args.repeats, 3)))
        for name, v in results["patterns"].items():
            print(
                f"HLC 5,3,3 fit, 5 starts x 200 EM steps on {name} ({v['patterns']} patterns): "
                f"median {v['time_median']:.3f} s"
            )
    OUT.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
