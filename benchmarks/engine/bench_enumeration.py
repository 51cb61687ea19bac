"""The class-enumeration table of poLCA's election data beside poLCA: the sweep, and the table with its BLRT.

Data: the 1,311 rows of the bundled ``election`` data set with all 12 four-category ratings answered.
effdim sweeps 1 to 6 classes with 10 random starts each (``EMSettings(restarts=10)``: pruned starts,
tolerance 1e-8 per row), then builds the class-enumeration table (:func:`effdim.enumeration.enumeration_table`)
with the bootstrap LRT of every ``k`` against ``k - 1`` (:func:`effdim.bootstrap.blrt_sweep`, B = 100 by
default, each replicate's ``k - 1`` refit from the parameters it was drawn from, its ``k`` refit from the
same 10 starts plus the split starts; ``--stop-after H``: the sequential test) on local worker processes
(``--workers``, default every CPU). Target: the table with its BLRT under 60 s on an idle 2-core machine.

The peer is poLCA (``benchmarks/engine/polca_election.R``, R and poLCA installed system-wide): the same
sweep with ``nrep = 10``; poLCA has no BLRT, so the script draws replicates from the ``k - 1`` class fit
(``poLCA.simdata``) and refits both models with 10 starts, ``--polca-B`` replicates per test (0: the sweep
alone), and this script scales its seconds per replicate to B (one R process: poLCA runs on one core).

Prints the load, a table of seconds (medians of ``--repeats`` runs for effdim; wall and CPU), the best
log-likelihoods of both, and the class-enumeration table itself (Markdown)::

    python -m benchmarks.engine.bench_enumeration --repeats 1 --polca-B 0
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
PEER = ROOT / "benchmarks" / "engine" / "polca_election.R"
ITEMS = [f"{t}{who}" for who in "GB" for t in ("MORAL", "CARES", "KNOW", "LEAD", "DISHON", "INTEL")]
CARDS = range(1, 7)
RESTARTS = 10


def cpu_seconds() -> float:
    """CPU seconds of this process and of its finished children (the BLRT's workers)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def complete_rows() -> pd.DataFrame:
    """The election data's rows with all 12 ratings answered (1,311)."""
    frame = pd.read_csv(ROOT / "core" / "datasets" / "election.csv")[ITEMS].dropna()
    assert len(frame) == 1311, len(frame)
    return frame


def effdim_run(data: pd.DataFrame, B: int, workers: int | None, seed: int, stop_after: int | None) -> dict:
    """One sweep and one table with its BLRT: wall and CPU seconds of each, the table, the log-likelihoods."""
    from effdim import EMSettings
    from effdim.bootstrap import blrt_sweep
    from effdim.enumeration import enumeration_table
    from effdim.executor import Execution
    from effdim.search import sweep

    settings = EMSettings(restarts=RESTARTS, seed=seed)
    model = "X:1:" + ",".join(f"{item}:4" for item in ITEMS)
    wall, cpu = time.perf_counter(), cpu_seconds()
    fits = sweep(data, model, cards=CARDS, settings=settings)
    sweep_wall, sweep_cpu = time.perf_counter() - wall, cpu_seconds() - cpu
    boot = blrt_sweep(
        fits, B, settings.with_seed(seed + 1), execution=Execution("processes", workers), stop_after=stop_after
    )
    table = enumeration_table(fits, boot)
    return {
        "sweep": sweep_wall,
        "sweep_cpu": sweep_cpu,
        "table": time.perf_counter() - wall,
        "table_cpu": cpu_seconds() - cpu,
        "logliks": [f.loglik for f in fits],
        "markdown": table.to_markdown(),
    }


def polca_run(B: int) -> dict:
    done = subprocess.run(["Rscript", str(PEER), str(B)], capture_output=True, text=True, check=True, cwd=ROOT)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="effdim runs (medians; default 3)")
    parser.add_argument("--B", type=int, default=100, help="bootstrap replicates per test (default 100)")
    parser.add_argument("--workers", type=int, default=None, help="BLRT worker processes (default: every CPU)")
    parser.add_argument("--polca-B", type=int, default=3, help="poLCA replicates per test run (0: none; default 3)")
    parser.add_argument("--stop-after", type=int, default=None, help="the sequential BLRT's H (default: all B)")
    parser.add_argument("--no-polca", action="store_true", help="time effdim alone")
    args = parser.parse_args()
    from benchmarks.common import load_average

    before = load_average()
    data = complete_rows()
    runs = [effdim_run(data, args.B, args.workers, seed, args.stop_after) for seed in range(args.repeats)]
    ours = {key: statistics.median(r[key] for r in runs) for key in ("sweep", "sweep_cpu", "table", "table_cpu")}
    peer = None if args.no_polca else polca_run(args.polca_B)
    stop = "" if args.stop_after is None else f", stopping after {args.stop_after} replicates reach the LR"
    print(f"election, 1,311 complete rows, 1-6 classes x {RESTARTS} starts; BLRT B = {args.B}{stop}")
    print(f"effdim: median of {args.repeats}; load {before:.2f} before, {load_average():.2f} after")
    print("| step | effdim wall (s) | effdim CPU (s) | poLCA wall (s) | poLCA CPU (s) | poLCA / effdim (wall) |")
    print("|---|---:|---:|---:|---:|---:|")
    if peer is None:
        print(f"| sweep | {ours['sweep']:.2f} | {ours['sweep_cpu']:.2f} | not run | | |")
        print(f"| table with BLRT (B = {args.B}) | {ours['table']:.1f} | {ours['table_cpu']:.1f} | not run | | |")
    elif not peer["B_timed"]:
        print(
            f"| sweep | {ours['sweep']:.2f} | {ours['sweep_cpu']:.2f} | {peer['sweep_seconds']:.2f} "
            f"| {peer['sweep_cpu']:.2f} | {peer['sweep_seconds'] / ours['sweep']:.1f} |"
        )
        print(f"| table with BLRT (B = {args.B}) | {ours['table']:.1f} | {ours['table_cpu']:.1f} | no BLRT | | |")
    else:
        blrt_wall = args.B * sum(peer["blrt_seconds_per_replicate"])
        blrt_cpu = args.B * sum(peer["blrt_cpu_per_replicate"])
        print(
            f"| sweep | {ours['sweep']:.2f} | {ours['sweep_cpu']:.2f} | {peer['sweep_seconds']:.2f} "
            f"| {peer['sweep_cpu']:.2f} | {peer['sweep_seconds'] / ours['sweep']:.1f} |"
        )
        print(
            f"| table with BLRT (B = {args.B}) | {ours['table']:.1f} | {ours['table_cpu']:.1f} "
            f"| {peer['sweep_seconds'] + blrt_wall:.0f} (BLRT scaled from B = {peer['B_timed']}) "
            f"| {peer['sweep_cpu'] + blrt_cpu:.0f} | {(peer['sweep_seconds'] + blrt_wall) / ours['table']:.1f} |"
        )
    logliks = runs[0]["logliks"]
    print("\nbest log-likelihood by k: effdim " + ", ".join(f"{v:.3f}" for v in logliks))
    if peer is not None:
        print("                           poLCA  " + ", ".join(f"{v:.3f}" for v in peer["logliks"]))
    print("\n" + runs[0]["markdown"])


if __name__ == "__main__":
    main()
