"""Timings of effdim.rank: effective dimension as a Jacobian rank.

Run:  python -m benchmarks.engine.bench_rank [--runs N] [--skip-flint] [--section K ...]

Prints medians (and min/max) over several runs of
  1. all LC models of Kocka & Zhang (2002), Table 1, together;
  2. LC 10:2,...,2 with 300 binary observed variables (ds = db = 3009), proven;
  3. an HLC tree with 100 binary leaves (hidden cards 2-3), with and without db;
  4. rank mod p backends at (n+8) x n: our BLAS-backed elimination (p = 2**31-1
     and the screening prime 2**20-3) against python-flint nmod_mat (conversion
     + rank); effdim.modp.rank_mod_p uses flint up to FLINT_MAX_SIDE;
  5. dense vs sketched rows for the rows="auto" threshold.
The machine is shared: medians, and expect noise. Under CPU contention
multi-threaded OpenBLAS degrades badly; compare with
    OPENBLAS_NUM_THREADS=1 python -m benchmarks.engine.bench_rank
(measured at load average 4-7 on 2 cores: LC 10:2x300 proven in 3.2 s
single-threaded against 8.3 s with the default two BLAS threads).
"""

from __future__ import annotations

import argparse
import math
import statistics
import time

import numpy as np

from effdim import modp
from effdim.model import HLCModel
from effdim.modp import FLINT_MAX_SIDE, P
from effdim.paper import TABLE1 as PAPER_TABLE1
from effdim.rank import SCREEN_PRIME, effective_dimension, modular_rank, standard_dimension

TABLE1 = {row.model: row.de for row in PAPER_TABLE1}


def hlc_tree(n_leaves: int = 100, seed: int = 0) -> HLCModel:
    """A random tree of hidden nodes (cards 2-3), each with 2-4 binary leaves."""
    rng = np.random.default_rng(seed)
    cards: dict[str, int] = {}
    edges: list[tuple[str, str]] = []
    hidden: list[str] = []
    leaves = 0
    while leaves < n_leaves:
        h = f"H{len(hidden) + 1}"
        cards[h] = int(rng.integers(2, 4))
        if hidden:
            edges.append((hidden[int(rng.integers(max(0, len(hidden) - 3), len(hidden)))], h))
        hidden.append(h)
        for _ in range(min(int(rng.integers(2, 5)), n_leaves - leaves)):
            leaves += 1
            cards[f"O{leaves}"] = 2
            edges.append((h, f"O{leaves}"))
    return HLCModel(cards, hidden, edges)


def timed(fn, runs: int) -> tuple[float, float, float, object]:
    times, out = [], None
    for i in range(runs):
        t = time.perf_counter()
        out = fn(i)
        times.append(time.perf_counter() - t)
    return statistics.median(times), min(times), max(times), out


def report(label: str, stats) -> None:
    med, lo, hi, out = stats
    if hi < 0.1:
        print(f"{label:<58} median {1e3 * med:7.2f} ms (min {1e3 * lo:.2f}, max {1e3 * hi:.2f})")
    else:
        print(f"{label:<58} median {med:7.3f} s  (min {lo:.3f}, max {hi:.3f})")
    if out is not None:
        print(f"    -> {out}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--skip-flint", action="store_true", help="skip the python-flint comparison")
    parser.add_argument("--section", type=int, action="append", help="run only these sections (1-5)")
    args = parser.parse_args()
    runs = args.runs
    sections = set(args.section or range(1, 6))

    models = [HLCModel.parse(s) for s in TABLE1]

    def table(i):
        got = [effective_dimension(m, seed=i).de for m in models]
        assert got == list(TABLE1.values()), got
        return "all 21 de values match Table 1"

    def table_nofloat(i):
        return [effective_dimension(m, seed=i, check_float=False).de for m in models] and None

    if 1 in sections:
        report("1. Table 1, 21 LC models, effective_dimension", timed(table, runs))
        report("   same, check_float=False", timed(table_nofloat, runs))

    if 2 in sections:
        big = HLCModel.lc(10, [2] * 300)
        ds_big = standard_dimension(big)
        report(
            f"2. LC 10:2x300 (ds={ds_big}), upper_bound={ds_big}",
            timed(lambda i: effective_dimension(big, upper_bound=ds_big, seed=i), max(3, runs // 2)),
        )
        report(
            "   same, screen_prime=None (p = 2**31-1 only)",
            timed(lambda i: effective_dimension(big, upper_bound=ds_big, seed=i, screen_prime=None), 3),
        )

    if 3 in sections:
        tree = hlc_tree(100)
        ds_tree = standard_dimension(tree)
        # db by Corollary 4.1 would come from effdim.bounds; the true de is enough to time "proven".
        de_tree = effective_dimension(tree, seed=0, check_float=False).de
        report(
            f"3. HLC, {len(tree.hidden)} hidden, 100 binary leaves (ds={ds_tree}), no bound",
            timed(lambda i: effective_dimension(tree, seed=i), runs),
        )
        report(
            f"   same, upper_bound={de_tree} (as db would give)",
            timed(lambda i: effective_dimension(tree, upper_bound=de_tree, seed=i), runs),
        )

    if 4 in sections:
        print(f"4. rank mod p of a random (n+8) x n matrix (rank_mod_p uses flint up to n = {FLINT_MAX_SIDE})")
        rng = np.random.default_rng(0)
        for n in (20, 60, 150, 256, 500, 1500, 3000):
            a = rng.integers(0, P, size=(n + 8, n), dtype=np.int64)
            k = runs if n <= 500 else (3 if n < 3000 else 1)
            report(f"   n={n}: ours, p=2**31-1", timed(lambda i: modp._rank_blas(a, P), k))
            small = a % SCREEN_PRIME
            report(f"   n={n}: ours, p={SCREEN_PRIME}", timed(lambda i: modp._rank_blas(small, SCREEN_PRIME), k))
            if not args.skip_flint:
                import flint

                def via_flint(i):
                    t = time.perf_counter()
                    mat = flint.nmod_mat(a.shape[0], a.shape[1], a.ravel().tolist(), P)
                    convert = time.perf_counter() - t
                    t = time.perf_counter()
                    r = mat.rank()
                    return f"rank {r}: convert {1e3 * convert:.2f} ms + rank {1e3 * (time.perf_counter() - t):.2f} ms"

                report(f"   n={n}: python-flint nmod_mat, p=2**31-1", timed(via_flint, k))

    if 5 in sections:
        print("5. dense vs sketched rows (one modular_rank, p=2**31-1)")
        for spec in ("3:2,2,2,2,2,2,2,2,2,2", "4:3,3,3,3,3,3,3", "10:2,2,2,2,2,2,2,2,2,2,2,2",
                     "20:2,2,2,2,2,2,2,2,2,2,2,2", "6:4,4,4,4,4,4", "40:2,2,2,2,2,2,2,2,2,2,2,2"):  # fmt: skip
            m = HLCModel.parse(spec)
            nd = math.prod(m.card(o) for o in m.observed)
            ds = standard_dimension(m)
            d = timed(lambda i: modular_rank(m, i, rows="dense"), 3)
            s = timed(lambda i: modular_rank(m, i, rows="sketch"), 3)
            print(
                f"   {spec:<28} ds={ds:4d} prod|O|={nd:5d}: dense {d[0]:.3f} s (rank {d[3]}), "
                f"sketch {s[0]:.3f} s (rank {s[3]})"
            )


if __name__ == "__main__":
    main()
