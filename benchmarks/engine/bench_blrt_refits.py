"""The bootstrap LRT's replicate refits: the rule effdim uses against the earlier, slower one, same replicates.

effdim's rule (:mod:`effdim.bootstrap`): the ``k - 1`` refit starts from the parameters the replicate was drawn
from alone (Mplus TECH14's ``LRTSTARTS = 0 0 20 5``), and both refits stop on the log-likelihood test alone
(``param_tol = None``). The earlier rule: the ``k - 1`` refit also from the settings' random starts, and both
refits also waiting for the parameters to settle (``param_tol = 1e-6``, the default of a fit). Both draw the same
replicate data from the same seeds, and the ``k``-state refit starts from the same random and split starts, so
the differences are the refits' alone.

Two checks, each printed as a table with the CPU seconds of both rules:

* the election data (1,311 complete rows, 12 four-category items; ``benchmarks/engine/bench_enumeration.py``),
  1-6 classes with 10 starts each, the replicates of every ``k`` against ``k - 1`` (``--B`` per test): the mean
  and quartiles of ``LR_b`` by rule, and the largest difference between the rules on one replicate;
* simulated nulls: ``--datasets`` data sets of 1,311 rows drawn from the election data's 3-class fit, each
  tested 3 against 4 classes (the null true) with ``--null-B`` replicates by both rules: the two p-values.

    python -m benchmarks.engine.bench_blrt_refits --B 20 --datasets 3 --null-B 40
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from benchmarks.engine.bench_enumeration import CARDS, ITEMS, RESTARTS, complete_rows, cpu_seconds


def earlier_replicates(config: dict) -> dict:
    """:func:`effdim.bootstrap.bootstrap_job` of a BLRT chunk by the earlier rule (module docstring)."""
    from effdim import EMSettings
    from effdim.distribution import Parameters, sample
    from effdim.em import fit_em
    from effdim.nested import split_state
    from effdim.notation import parse_model
    from effdim.validation import as_seed

    null = parse_model(config["null"])
    params = Parameters(null, {k: np.asarray(v) for k, v in config["params"].items()})
    values = []
    for seed in config["seeds"]:
        rng = as_seed(seed)
        data = sample(params, int(config["n"]), rng)
        settings = EMSettings(**config["em"], param_tol=1e-6, seed=rng)
        small = fit_em(data, null, settings, init=[params])
        node = config["node"]
        splits = [split_state(small.params, node, h) for h in range(null.card(node))]
        big = fit_em(data, null.with_card(node, int(config["k"])), settings, init=splits)
        values.append(max(0.0, 2.0 * (big.loglik - small.loglik)))
    return {"values": values}


def both_rules(plans: list, seed: int, B: int, workers: int | None) -> dict[str, tuple[list[np.ndarray], float]]:
    """Each rule's replicates of every plan (the same seeds) and its CPU seconds."""
    from effdim.bootstrap import bootstrap_job
    from effdim.executor import Execution, run_each

    out = {}
    for rule, job in (("earlier", earlier_replicates), ("effdim", bootstrap_job)):
        configs = {f"{t}.{c}": chunk for t, plan in enumerate(plans) for c, chunk in enumerate(plan.chunks(seed, B))}
        values: dict[str, list[float]] = {}

        def finish(key, result, seconds, values=values):
            values[key] = result["values"]

        def fail(key, err):
            raise err

        cpu = cpu_seconds()
        run_each(job, configs, list(configs), finish, fail, Execution("processes", workers))
        reps = [
            np.array(
                [
                    v
                    for key in sorted(values, key=lambda s: int(s.split(".")[1]))
                    if key.startswith(f"{t}.")
                    for v in values[key]
                ]
            )
            for t in range(len(plans))
        ]
        out[rule] = (reps, cpu_seconds() - cpu)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--B", type=int, default=20, help="replicates per test on the election data (default 20)")
    parser.add_argument("--datasets", type=int, default=3, help="simulated null data sets (default 3)")
    parser.add_argument("--null-B", type=int, default=40, help="replicates per simulated null test (default 40)")
    parser.add_argument("--workers", type=int, default=None, help="worker processes (default: every CPU)")
    args = parser.parse_args()
    from benchmarks.common import load_average
    from effdim import EMSettings, sweep
    from effdim.bootstrap import blrt_plan, p_value
    from effdim.distribution import sample

    before = load_average()
    data = complete_rows()
    settings = EMSettings(restarts=RESTARTS, seed=0)
    model = "X:1:" + ",".join(f"{item}:4" for item in ITEMS)
    fits = sweep(data, model, cards=CARDS, settings=settings)
    plans = [blrt_plan(small, large, settings) for small, large in zip(fits, fits[1:])]
    start = time.perf_counter()
    runs = both_rules(plans, 1, args.B, args.workers)
    print(f"election, 1,311 rows, 1-6 classes x {RESTARTS} starts; B = {args.B} replicates per test, the same seeds")
    print(
        "| k - 1 vs k | LR on the data | LR_b mean (earlier / effdim) | LR_b quartiles earlier | LR_b quartiles "
        "effdim | largest difference on one replicate |"
    )
    print("|---|---:|---:|---|---|---:|")
    for plan, old, new in zip(plans, runs["earlier"][0], runs["effdim"][0]):
        q_old, q_new = (", ".join(f"{v:.1f}" for v in np.quantile(x, [0.25, 0.5, 0.75])) for x in (old, new))
        print(
            f"| {plan.k - 1} vs {plan.k} | {plan.statistic:.1f} | {old.mean():.2f} / {new.mean():.2f} | {q_old} "
            f"| {q_new} | {np.max(np.abs(old - new)):.2f} |"
        )
    cpu_old, cpu_new = runs["earlier"][1], runs["effdim"][1]
    print(f"\nCPU seconds: earlier {cpu_old:.1f}, effdim {cpu_new:.1f} (ratio {cpu_old / cpu_new:.2f})")

    truth = fits[2].params
    print(
        f"\nsimulated nulls: {args.datasets} data sets of 1,311 rows from the 3-class fit, 3 vs 4 classes, "
        f"B = {args.null_B}"
    )
    print("| data set | LR on the data | p earlier | p effdim |")
    print("|---:|---:|---:|---:|")
    cpu = {"earlier": 0.0, "effdim": 0.0}
    for d in range(args.datasets):
        simulated = sample(truth, 1311, 100 + d)
        pair = sweep(simulated, fits[2].model, cards=[3, 4], settings=settings.with_seed(200 + d))
        plan = blrt_plan(pair[0], pair[1], settings)
        runs = both_rules([plan], 300 + d, args.null_B, args.workers)
        p = {rule: p_value(plan.statistic, reps[0]) for rule, (reps, _) in runs.items()}
        for rule in cpu:
            cpu[rule] += runs[rule][1]
        print(f"| {d + 1} | {plan.statistic:.2f} | {p['earlier']:.3f} | {p['effdim']:.3f} |")
    print(
        f"\nCPU seconds: earlier {cpu['earlier']:.1f}, effdim {cpu['effdim']:.1f} "
        f"(ratio {cpu['earlier'] / max(cpu['effdim'], 1e-9):.2f})"
    )
    print(f"load {before:.2f} before, {load_average():.2f} after; {time.perf_counter() - start:.0f} s wall")


if __name__ == "__main__":
    main()
