"""Speed of the structure search (docs/structure.md).

1. ``learn``: :func:`effdim.structure.learn_structure` (BIC+, islands start)
   on 10,000 rows sampled from a random latent tree over 20, 50 or 100
   observed variables (targets, issue 63: 15, 60 and 150 CPU seconds, each
   ending at or above the generating structure's score less 1 nat).
   Also reported: steps, candidates, the Robinson-Foulds distance to the
   generating tree, the BIC and BIC+ gaps to the generating structure's own
   fit, and where the CPU seconds went (the search's ``costs``); a Markdown
   table of the runs is printed after the JSON.
2. ``local``: the cost of scoring one candidate move by local EM (the
   restricted likelihood: only the families the move touches are free,
   warm-started from the current fit, on the region around them; the
   current fit's messages, computed once per step, are shared by all
   candidates and their cost is spread over them here) against full EM of
   the same candidate (every family free, from the same three starts for
   the same 32 steps, and from 5 random starts to convergence as a
   fixed-structure fit would do). Candidates: every move of the islands
   start.

3. ``truth``: the optimality gap on known trees. 20,000 rows from each of
   three generating trees with well-separated parameters
   (:func:`effdim.experiments.structure.separated_parameters`): the learned
   model's BIC minus the BIC of the generating structure refitted by EM (10
   starts). Goal: no gap below -1 nat. (The first two trees are also a test,
   tests/test_structure_known_trees.py.)

Wall and CPU seconds are both reported: on a shared machine the wall time
counts the other processes' share of the cores.

The generating trees: hidden nodes each with 4-6 leaves (binary or ternary),
joined in a random tree; hidden cardinalities 2-3; CPT rows Dirichlet(0.5).

Usage::

    .venv/bin/python -m benchmarks.engine.bench_structure --only learn --leaves 20
    .venv/bin/python -m benchmarks.engine.bench_structure --only learn --leaves 50 --repeats 1
    .venv/bin/python -m benchmarks.engine.bench_structure --only local --leaves 20 --leaves 50
    .venv/bin/python -m benchmarks.engine.bench_structure --only truth

4. ``curve``: the cost curve, one search per (variables, rows) of a grid
   (``--curve-leaves``, default 10 20 50; ``--curve-rows``, default 1,000 and
   10,000; the issue's whole grid is 10-200 variables x 1,000-100,000 rows),
   each searched once (seed 0) with ``--max-cpu`` CPU seconds at most: CPU
   and wall seconds, the optimality gap (BIC and BIC+ of the learned model
   less those of the generating structure's own fit) and how the search
   stopped (a search stopped by the limit gives a lower bound of its cost and
   the gap of the best model it had), one Markdown table; and the exponents
   of CPU time in variables (at 10,000 rows) and in rows (at 20 variables)
   where at least two searches of a line ran to their end.
5. ``estep``: CPU milliseconds of one exact E-step of the islands start
   (20 and 50 variables by default), the unit of every full-EM refit.
6. ``workers``: the same search (``--leaves``, default 20, at ``--rows``)
   in this process and on 1, 2 and 4 local worker processes
   (``--workers``): wall seconds, the CPU seconds of this process and of
   the workers, and the speedup in wall seconds over this process; every
   run must learn the same tree (checked).

7. ``profile``: where one search's CPU seconds go (``--leaves``, default
   20, at ``--rows``), from :mod:`cProfile` counting CPU seconds: the
   cumulative seconds of the functions that make each part of the search
   (local EM's E-steps and the rest of its EM, its regions and starts, the
   full-EM E-steps and the rest of full EM, the messages, residual
   dependence, candidate generation, mutual information), one table.

Usage of the last four::

    .venv/bin/python -m benchmarks.engine.bench_structure --only curve --max-cpu 600
    .venv/bin/python -m benchmarks.engine.bench_structure --only estep --leaves 20 --leaves 50
    .venv/bin/python -m benchmarks.engine.bench_structure --only workers --leaves 20 --workers 1 2 4
    .venv/bin/python -m benchmarks.engine.bench_structure --only profile --leaves 20
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

from effdim import fit
from effdim.distribution import random_parameters, sample
from effdim.em import fit_em
from effdim.experiments.structure import separated_parameters
from effdim.model import HLCModel
from effdim.notation import parse_model
from effdim.structure import (
    Messages,
    candidate_moves,
    candidate_starts,
    islands_model,
    learn_structure,
    local_fit,
    mutual_information,
    robinson_foulds,
)


def random_tree(n_leaves: int, rng: np.random.Generator) -> HLCModel:
    """A random latent tree: hidden nodes with 4-6 leaves each, joined in a random tree."""
    sizes = []
    while sum(sizes) < n_leaves:
        sizes.append(int(rng.integers(4, 7)))
    sizes[-1] -= sum(sizes) - n_leaves
    if sizes[-1] < 2:
        sizes[-2] += sizes.pop()
    hidden = [f"H{i + 1}" for i in range(len(sizes))]
    cards = {h: int(rng.integers(2, 4)) for h in hidden}
    edges = [(hidden[int(rng.integers(0, i))], hidden[i]) for i in range(1, len(hidden))]
    k = 0
    for h, size in zip(hidden, sizes):
        for _ in range(size):
            k += 1
            cards[f"V{k:02d}"] = int(rng.choice([2, 3]))
            edges.append((h, f"V{k:02d}"))
    return HLCModel(cards, hidden, edges)


def make_data(n_leaves: int, n_rows: int, seed: int):
    rng = np.random.default_rng(seed)
    truth = random_tree(n_leaves, rng)
    params = random_parameters(truth, rng, concentration=0.5)
    return truth, sample(params, n_rows, rng)


def bench_learn(n_leaves: int, n_rows: int, repeats: int, seed: int, max_cpu: float | None = None) -> dict:
    """The search on one generated data set, ``repeats`` times (seeds 0, 1, ...), each run's end reported
    against the generating structure's own fit; with ``max_cpu`` each search stops after that many CPU
    seconds with its best model (its ``stopped``: ``max_time``)."""
    truth, data = make_data(n_leaves, n_rows, seed)
    truth_fit = fit(data, truth, restarts=5, seed=0)
    reference = truth_fit.score("bic+")
    runs = []
    load = [round(x, 2) for x in os.getloadavg()]
    for r in range(repeats):
        t, c = time.perf_counter(), time.process_time()
        result = learn_structure(data, score="bic+", seed=r, max_time=max_cpu, cpu_time=max_cpu is not None)
        runs.append(
            {
                "seed": r,
                "seconds": time.perf_counter() - t,
                "cpu_seconds": time.process_time() - c,
                "steps": len(result.steps),
                "candidates": result.candidates,
                "refits": result.local_refits,
                "local_em_seconds": round(result.local_em_seconds, 2),
                "full_em_seconds": round(result.full_em_seconds, 2),
                "learned": str(result.model),
                "rf_to_truth": robinson_foulds(result.model, truth),
                "bic_plus_gap": round(result.fit.score("bic+") - reference, 2),
                "bic_gap": round(result.fit.score("bic") - truth_fit.score("bic"), 2),
                "costs": {part: round(spent, 1) for part, spent in result.costs.items()},
                "stopped": result.stopped,
            }
        )
    seconds = [run["seconds"] for run in runs]
    cpu = [run["cpu_seconds"] for run in runs]
    return {
        "leaves": n_leaves,
        "rows": n_rows,
        "patterns": data.n_patterns,
        "truth": str(truth),
        "median_seconds": statistics.median(seconds),
        "median_cpu_seconds": statistics.median(cpu),
        "bic_plus_truth_structure": reference,
        "runs": runs,
        "load_before_after": [load, [round(x, 2) for x in os.getloadavg()]],
    }


def exponent(sizes: list[float], seconds: list[float]) -> float:
    """The least-squares slope of log(seconds) on log(size): time grows as size^exponent."""
    return float(np.polyfit(np.log(sizes), np.log(seconds), 1)[0])


def bench_curve(leaves: list[int], rows: list[int], seed: int, max_cpu: float | None) -> dict:
    """The cost curve: one search (seed 0) per number of variables and of rows of the grid, each as
    :func:`bench_learn` reports it, and the exponents of CPU time in variables (at 10,000 rows) and in rows (at
    20 variables) over the searches that ran to their end (one stopped by ``max_cpu`` gives only a lower bound)."""
    runs = []
    for n in leaves:
        for r in rows:  # each row to stderr as it ends: a grid cut short by the shared machine keeps its rows
            runs.append(bench_learn(n, r, 1, seed, max_cpu))
            print(curve_table({"runs": runs[-1:]}, exponents=False).splitlines()[-1], file=sys.stderr, flush=True)

    def line(size: str, fixed: str, value: int) -> dict:
        on = [r for r in runs if r[fixed] == value and r["runs"][0]["stopped"] == "converged"]
        sizes, cpu = [r[size] for r in on], [r["median_cpu_seconds"] for r in on]
        return {"at": value, "exponent": exponent(sizes, cpu) if len(set(sizes)) >= 2 else None}

    return {
        "runs": runs,
        "in_variables_at_10k_rows": line("leaves", "rows", 10_000),
        "in_rows_at_20_variables": line("rows", "leaves", 20),
    }


def curve_table(curve: dict, exponents: bool = True) -> str:
    """The cost curve as one Markdown table, a row per search, and (``exponents``) its exponents."""
    lines = [
        "| variables | rows | patterns | CPU s | wall s | stopped | candidates | BIC gap | BIC+ gap | RF | load |",
        "|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---|",
    ]
    for case in curve["runs"]:
        run = case["runs"][0]
        load = " -> ".join(f"{pair[0]:.1f}" for pair in case["load_before_after"])
        lines.append(
            f"| {case['leaves']} | {case['rows']:,} | {case['patterns']:,} | {run['cpu_seconds']:.1f} | "
            f"{run['seconds']:.1f} | {run['stopped']} | {run['candidates']:,} | {run['bic_gap']:+.2f} | "
            f"{run['bic_plus_gap']:+.2f} | {run['rf_to_truth']} | {load} |"
        )
    for name in ("in_variables_at_10k_rows", "in_rows_at_20_variables") if exponents else ():
        found = curve[name]["exponent"]
        lines.append(f"\nexponent of CPU time {name.replace('_', ' ')}: {'-' if found is None else f'{found:.2f}'}")
    return "\n".join(lines)


def bench_workers(n_leaves: int, n_rows: int, counts: list[int], seed: int) -> dict:
    """The same search (seed 0, no rounds) in this process and on ``counts`` local worker processes: wall
    seconds, CPU seconds of this process and of its workers (reaped when the search closes them), the speedup
    in wall seconds over this process, and whether each learned the serial search's tree by the same steps."""
    import multiprocessing
    import resource

    from effdim.executor import Execution

    _, data = make_data(n_leaves, n_rows, seed)
    runs, serial = [], None
    for count in [0, *counts]:
        execution = Execution("serial") if count == 0 else Execution("processes", count)
        load = os.getloadavg()[0]
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        t, c = time.perf_counter(), time.process_time()
        result = learn_structure(data, score="bic+", seed=0, rounds=0, execution=execution)
        wall, cpu = time.perf_counter() - t, time.process_time() - c
        while multiprocessing.active_children():  # reap the workers, which the search closes without waiting
            time.sleep(0.1)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        steps = [(s.operator, s.text) for s in result.steps]
        serial = serial or (wall, steps)
        runs.append(
            {
                "workers": count,
                "wall_seconds": round(wall, 1),
                "cpu_seconds": round(cpu, 1),
                "worker_cpu_seconds": round(after.ru_utime + after.ru_stime - children.ru_utime - children.ru_stime, 1),
                "speedup": round(serial[0] / wall, 2),
                "same_tree": steps == serial[1],
                "load_before": round(load, 2),
            }
        )
    return {"leaves": n_leaves, "rows": n_rows, "runs": runs}


def workers_table(found: dict) -> str:
    lines = [
        f"| {found['leaves']} variables x {found['rows']:,} rows | wall s | CPU s, this process | CPU s, workers | "
        "speedup (wall) | same tree | load |",
        "|---|---:|---:|---:|---:|---|---:|",
    ]
    for run in found["runs"]:
        where = "this process" if run["workers"] == 0 else f"{run['workers']} worker processes"
        lines.append(
            f"| {where} | {run['wall_seconds']:.1f} | {run['cpu_seconds']:.1f} | {run['worker_cpu_seconds']:.1f} | "
            f"{run['speedup']:.2f} | {'yes' if run['same_tree'] else 'NO'} | {run['load_before']:.1f} |"
        )
    return "\n".join(lines)


#: The parts of :func:`bench_profile`: a name and the functions (module path, name) whose cumulative CPU seconds it
#: is, less those of the parts named after the minus sign.
PROFILE_PARTS = (
    ("local EM: E-steps of the regions", [("structure/local_em.py", "_estep")], []),
    ("local EM: M-steps, SQUAREM", [("structure/local_em.py", "fit")], [("structure/local_em.py", "_estep")]),
    ("local EM: regions' fixed evidence", [("structure/local_em.py", "__init__")], [("em/queries.py", "messages")]),
    ("local EM: starts", [("structure/local_em.py", "candidate_starts")], []),
    ("full EM: E-steps", [("em/estep.py", "estep")], []),
    ("full EM: M-steps, SQUAREM", [("em/driver.py", "fit_em")], [("em/estep.py", "estep")]),
    ("messages of the current fit", [("em/queries.py", "messages")], []),
    ("residual dependence", [("structure/residual.py", "residual_groups")], []),
    ("candidate models", [("structure/moves.py", "iter_candidate_moves")], []),
    ("mutual information", [("structure/start.py", "mutual_information")], []),
)


def bench_profile(n_leaves: int, n_rows: int, seed: int) -> dict:
    """One search (seed 0) under :mod:`cProfile` counting this process's CPU seconds, split into
    :data:`PROFILE_PARTS` (a function's cumulative seconds, counted once however deep it recurses)."""
    import cProfile
    import pstats

    _, data = make_data(n_leaves, n_rows, seed)
    profile = cProfile.Profile(time.process_time)
    load = os.getloadavg()[0]
    start = time.process_time()
    profile.runcall(learn_structure, data, score="bic+", seed=0)
    total = time.process_time() - start
    stats = pstats.Stats(profile).stats

    def spent(functions: list) -> float:
        return sum(
            row[3]
            for (path, _, name), row in stats.items()
            for end, fn in functions
            if path.endswith(end) and name == fn
        )

    parts = {name: spent(plus) - spent(minus) for name, plus, minus in PROFILE_PARTS}
    parts["the rest"] = total - sum(parts.values())
    return {"leaves": n_leaves, "rows": n_rows, "cpu_seconds": total, "parts": parts, "load": round(load, 2)}


def profile_table(found: dict) -> str:
    lines = [
        f"| {found['leaves']} variables x {found['rows']:,} rows (load {found['load']:.1f}) | CPU s | share |",
        "|---|---:|---:|",
    ]
    for name, spent in found["parts"].items():
        lines.append(f"| {name} | {spent:.1f} | {spent / found['cpu_seconds']:.0%} |")
    lines.append(f"| the search, profiled | {found['cpu_seconds']:.1f} | 100% |")
    return "\n".join(lines)


def bench_local(n_leaves: int, n_rows: int, seed: int, most: int) -> dict:
    _, data = make_data(n_leaves, n_rows, seed)
    start = islands_model(data)
    current = fit(data, start, restarts=5, seed=0)
    mi = mutual_information(data)
    moves = candidate_moves(start, mi, {c: i for i, c in enumerate(data.columns)})
    t = time.perf_counter()
    messages = Messages(current.params, data)
    shared = (time.perf_counter() - t) / len(moves)  # spread over every candidate of the step
    moves = moves[:: max(1, len(moves) // most)][:most]  # an even sample of them
    local_t, same_t, cold_t, gaps = [], [], [], []
    for i, move in enumerate(moves):
        starts = candidate_starts(current.params, move, 3, seed=i)
        t = time.perf_counter()
        local = local_fit(data, move, current.params, seed=i, messages=messages)
        local_t.append(time.perf_counter() - t + shared)
        t = time.perf_counter()
        full = fit_em(data, move.model, restarts=0, init=starts, tol=1e-6, max_iter=32, prune=False)
        same_t.append(time.perf_counter() - t)
        gaps.append(full.loglik - local.loglik)
        t = time.perf_counter()
        fit_em(data, move.model, restarts=5, seed=0, tol=1e-6, max_iter=1000)
        cold_t.append(time.perf_counter() - t)
    med = statistics.median
    return {
        "leaves": n_leaves,
        "rows": n_rows,
        "patterns": data.n_patterns,
        "candidates_timed": len(moves),
        "local_median_s": med(local_t),
        "full_same_starts_median_s": med(same_t),
        "full_5_starts_median_s": med(cold_t),
        "speedup_vs_full_same_starts": med(f / loc for f, loc in zip(same_t, local_t)),
        "speedup_vs_full_5_starts": med(c / loc for c, loc in zip(cold_t, local_t)),
        "loglik_full_minus_local_median": med(gaps),
    }


def bench_estep(n_leaves: int, n_rows: int, seed: int, seconds: float = 3.0) -> dict:
    """CPU milliseconds of one exact E-step (:func:`effdim.em.estep.estep`) of the islands start after 30 EM
    steps: the unit of every full-EM refit of the search."""
    from effdim.em.design import ModelData
    from effdim.em.estep import estep
    from effdim.em.state import state_from_params

    _, data = make_data(n_leaves, n_rows, seed)
    model = islands_model(data)
    params = fit_em(data, model, restarts=0, init=random_parameters(model, 0), max_iter=30).params
    md = ModelData(model, data)
    state = state_from_params(md, params)
    start, calls = time.process_time(), 0
    while time.process_time() - start < seconds:
        estep(md, state, 0.0)
        calls += 1
    return {
        "leaves": n_leaves,
        "rows": n_rows,
        "patterns": md.n_patterns,
        "hidden_nodes": md.n_hidden,
        "estep_ms": round((time.process_time() - start) / calls * 1e3, 2),
    }


#: Known generating trees: three groups under a 3-state root, a chain of four hidden nodes, five hidden nodes.
KNOWN_TREES = (
    "H0:3(H1:2(A:2,B:2,C:2),H2:2(D:2,E:2,F:2),H3:2(G:2,H:2,I:2))",
    "H1:2(A:2,B:2,H2:2(C:2,D:2,H3:2(E:2,F:2,H4:2(G:2,H:2,I:2))))",
    "H1:2(A:2,B:2,H2:3(C:2,D:2,E:3),H3:2(F:2,G:2,H4:2(H:2,I:2,J:2),H5:2(K:2,L:2,M:2)))",
)


def bench_truth(spec: str, n_rows: int) -> dict:
    truth = parse_model(spec)
    data = sample(separated_parameters(truth), n_rows, 2)
    t, c = time.perf_counter(), time.process_time()
    result = learn_structure(data, score="bic", seed=0)
    seconds, cpu = time.perf_counter() - t, time.process_time() - c
    reference = fit(data, truth, restarts=10, seed=0, warn=False)
    return {
        "truth": spec,
        "rows": n_rows,
        "patterns": data.n_patterns,
        "seconds": round(seconds, 1),
        "cpu_seconds": round(cpu, 1),
        "learned": str(result.model),
        "rf_to_truth": robinson_foulds(result.model, truth),
        "bic_gap": round(result.fit.score("bic") - reference.score("bic"), 2),
        "steps": [s.operator for s in result.steps],
    }


def learn_table(found: list[dict]) -> str:
    """The searches of ``learn`` as one Markdown table: CPU seconds, the gaps to the generating structure's
    fit, and where the CPU seconds went (the search's ``costs``)."""
    lines = [
        "| variables x rows | CPU s | wall s | candidates | BIC gap | BIC+ gap | RF | where the CPU s went | load |",
        "|---|---:|---:|---:|---:|---:|---:|---|---|",
    ]
    for case in found:
        for run in case["runs"]:
            parts = ", ".join(f"{part} {spent:.0f}" for part, spent in run["costs"].items() if spent >= 0.5)
            load = " -> ".join(f"{pair[0]:.1f}" for pair in case["load_before_after"])
            lines.append(
                f"| {case['leaves']} x {case['rows']:,} | {run['cpu_seconds']:.1f} | {run['seconds']:.1f} | "
                f"{run['candidates']:,} | {run['bic_gap']:+.2f} | {run['bic_plus_gap']:+.2f} | {run['rf_to_truth']} | "
                f"{parts} | {load} |"
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--only", choices=["learn", "local", "truth", "curve", "estep", "workers", "profile"], default=None
    )
    parser.add_argument("--leaves", type=int, action="append", default=None, help="observed variables (repeatable)")
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--candidates", type=int, default=12, help="local: candidates timed per size")
    parser.add_argument("--max-cpu", type=float, default=None, help="learn, curve: CPU seconds per search")
    parser.add_argument("--curve-leaves", type=int, nargs="+", default=[10, 20, 50])
    parser.add_argument("--curve-rows", type=int, nargs="+", default=[1000, 10_000])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4], help="workers: local worker processes")
    args = parser.parse_args()
    out = {}
    if args.only in (None, "learn"):
        out["learn"] = [bench_learn(n, args.rows, args.repeats, args.seed, args.max_cpu) for n in (args.leaves or [20])]
    if args.only in (None, "local"):
        out["local"] = [bench_local(n, args.rows, args.seed, args.candidates) for n in (args.leaves or [20])]
    if args.only in (None, "truth"):
        out["truth"] = [bench_truth(spec, 20_000) for spec in KNOWN_TREES]
    if args.only == "estep":
        out["estep"] = [bench_estep(n, args.rows, args.seed) for n in (args.leaves or [20, 50])]
    if args.only == "curve":  # not part of the default run: it takes tens of minutes
        out["curve"] = bench_curve(args.curve_leaves, args.curve_rows, args.seed, args.max_cpu)
    if args.only == "workers":
        out["workers"] = bench_workers((args.leaves or [20])[0], args.rows, args.workers, args.seed)
    if args.only == "profile":
        out["profile"] = bench_profile((args.leaves or [20])[0], args.rows, args.seed)
    print(json.dumps(out, indent=2))
    if "learn" in out:
        print(learn_table(out["learn"]))
    if "curve" in out:
        print(curve_table(out["curve"]))
    if "workers" in out:
        print(workers_table(out["workers"]))
    if "profile" in out:
        print(profile_table(out["profile"]))


if __name__ == "__main__":
    main()
