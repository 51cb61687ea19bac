"""Speed of the dimension engine (docs/performance.md, "Dimension engine").

Run:  python -m benchmarks.engine.bench_dimensions [--runs 5]

Targets: all of Table 1 < 1 s together; db of an LC model with 200 observed
variables of mixed cardinalities < 50 ms; LC 10:2^300 de proven < 10 s; an
HLC tree with 100 binary leaves, de by both routes < 10 s.
Prints the median and spread of several runs (the machine is noisy).
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from effdim import HLCModel, parse_model
from effdim.bounds import lc_bounds, standard_dimension
from effdim.dimensions import _lc_rank, dimensions
from effdim.paper import TABLE1 as PAPER_TABLE1

TABLE1 = [row.model for row in PAPER_TABLE1]


def timed(fn, runs):
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return result, times


def hundred_leaf_tree() -> HLCModel:
    """A tree of 33 hidden nodes (cards 2-3) over 100 binary leaves."""
    rng = random.Random(7)
    cards, edges, hidden = {}, [], []
    leaves = 0
    for i in range(33):
        h = f"H{i + 1}"
        hidden.append(h)
        cards[h] = rng.choice([2, 3])
        if i:
            edges.append((hidden[(i - 1) // 2], h))
    for h in hidden:
        for _ in range(3 if leaves < 99 else 1):
            if leaves == 100:
                break
            leaves += 1
            cards[f"O{leaves}"] = 2
            edges.append((h, f"O{leaves}"))
    return HLCModel(cards, hidden, edges)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()

    def table1():
        _lc_rank.cache_clear()  # measure the computation, not the cache
        return [dimensions(parse_model(m), check_float=False).de for m in TABLE1]

    rng = random.Random(1)
    mixed = HLCModel.lc(10, [rng.choice([2, 3, 4, 5]) for _ in range(200)])
    big_lc = HLCModel.lc(10, [2] * 300)
    tree = hundred_leaf_tree()

    def big():
        _lc_rank.cache_clear()
        return dimensions(big_lc, check_float=False)

    def hlc():
        _lc_rank.cache_clear()
        return dimensions(tree, direct=True, check_float=False)

    cases = [
        ("Table 1, all 21 LC models (de, db, ...)", table1, args.runs, 1.0),
        ("db of LC 10 : 200 variables with 2-5 states", lambda: lc_bounds(mixed), args.runs, 0.05),
        ("de of LC 10:2^300 (ds 3009), proven", big, max(1, args.runs // 2), 10.0),
        (
            f"de of an HLC tree, 100 binary leaves (ds {standard_dimension(tree)}), both routes",
            hlc,
            max(1, args.runs // 2),
            10.0,
        ),
    ]
    print(f"{'case':<70} {'median s':>9} {'min s':>7} {'max s':>7} {'target s':>8}")
    for name, fn, runs, target in cases:
        result, times = timed(fn, runs)
        extra = ""
        if hasattr(result, "de"):
            extra = f"  de={result.de} ({result.de_status})"
            if result.de_direct is not None and result.de_local_sum is not None:
                extra += f" direct={result.de_direct} cor4.1={result.de_local_sum}"
        print(f"{name:<70} {statistics.median(times):9.4f} {min(times):7.4f} {max(times):7.4f} {target:8.2f}{extra}")


if __name__ == "__main__":
    main()
