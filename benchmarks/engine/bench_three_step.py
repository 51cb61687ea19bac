"""The three-step method's time beside StepMix's: a distal outcome of poLCA's election data.

Both fit the 3-class LC model of the 12 candidate ratings (1,785 rows, missing answers
marginalised) with 10 random starts and then relate the classes to ``AGE`` (continuous) by
the BCH and by the ML correction, each at its defaults otherwise (effdim: ``EMSettings()``'s
tolerance and pruned starts; StepMix: ``abs_tol=1e-10``, every start run to the end, then its
``n_steps=3`` fit of the structural model). StepMix refits the measurement model in every
``fit``; effdim fits it once and runs step 2 and 3 on the fit, so its rows give the fit and the
three-step part apart. StepMix runs in its own environment (``benchmarks/.venv-peers``, git-ignored:
``python3 -m venv benchmarks/.venv-peers && benchmarks/.venv-peers/bin/pip install stepmix``); this
script starts it there with ``--peer``.

    python -m benchmarks.engine.bench_three_step --repeats 5
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PEER_PYTHON = ROOT / "benchmarks" / ".venv-peers" / "bin" / "python"
DATA = ROOT / "core" / "datasets" / "election.csv"
ITEMS = [f"{t}{who}" for who in "GB" for t in ("MORAL", "CARES", "KNOW", "LEAD", "DISHON", "INTEL")]


def effdim_times(repeats: int) -> dict:
    import effdim
    from effdim.threestep import distal_outcomes

    data = effdim.datasets.load("election")
    model = "X:3:" + ",".join(f"{item}:4" for item in ITEMS)
    times: dict[str, list[float]] = {"fit": [], "bch": [], "ml": []}
    for seed in range(repeats):
        start = time.perf_counter()
        fitted = effdim.fit(data, model, seed=seed, restarts=10, warn=False)
        times["fit"].append(time.perf_counter() - start)
        for method in ("bch", "ml"):
            start = time.perf_counter()
            distal_outcomes(fitted, data, {"AGE": "continuous"}, method=method)
            times[method].append(time.perf_counter() - start)
    return {k: statistics.median(v) for k, v in times.items()}


def stepmix_times(repeats: int) -> dict:
    """Run in StepMix's environment: a ``fit`` per correction and repeat, the measurement model included."""
    import csv

    import numpy as np
    from stepmix.stepmix import StepMix

    with open(DATA, newline="") as f:
        rows = list(csv.DictReader(f))

    def codes(column):
        present = sorted({r[column] for r in rows if r[column] != ""}, key=lambda v: float(v.split()[0]))
        index = {v: i for i, v in enumerate(present)}
        return [index[r[column]] if r[column] != "" else np.nan for r in rows]

    X = np.column_stack([codes(c) for c in ITEMS])
    Y = np.array([[float(r["AGE"]) if r["AGE"] != "" else np.nan] for r in rows])
    times: dict[str, list[float]] = {"bch": [], "ml": []}
    for seed in range(repeats):
        for label, correction in (("bch", "BCH"), ("ml", "ML")):
            model = StepMix(
                n_components=3, measurement="categorical_nan", structural="gaussian_diag_nan", n_steps=3,
                correction=correction, n_init=10, random_state=seed, progress_bar=0, verbose=0,
            )  # fmt: skip
            start = time.perf_counter()
            model.fit(X, Y)
            times[label].append(time.perf_counter() - start)
    return {k: statistics.median(v) for k, v in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--peer", action="store_true", help="time StepMix (run in its environment) and print JSON")
    args = parser.parse_args()
    if args.peer:
        print(json.dumps(stepmix_times(args.repeats)))
        return
    from benchmarks.common import load_average

    before = load_average()
    ours = effdim_times(args.repeats)
    peer = None
    if PEER_PYTHON.exists():
        done = subprocess.run(
            [str(PEER_PYTHON), str(Path(__file__).resolve()), "--peer", "--repeats", str(args.repeats)],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        peer = json.loads(done.stdout.strip().splitlines()[-1])
    print(f"median of {args.repeats}; load {before:.2f} before, {load_average():.2f} after")
    print("| step | effdim (s) | StepMix (s) | StepMix / effdim |")
    print("|---|---:|---:|---:|")
    print(f"| measurement model, 10 starts | {ours['fit']:.2f} | | |")
    for method in ("bch", "ml"):
        total = ours["fit"] + ours[method]
        theirs = f"{peer[method]:.2f} | {peer[method] / total:.1f}" if peer else "not run | "
        print(f"| {method.upper()}: steps 2-3 alone | {ours[method]:.3f} | | |")
        print(f"| {method.upper()}: all three steps | {total:.2f} | {theirs} |")


if __name__ == "__main__":
    main()
