"""Data and records the structure search's tests share: a clear-cut tree, small replicates of the study's
design, and a study run's row."""

from __future__ import annotations

from functools import cache

import numpy as np

from effdim.experiments.structure import separated_parameters
from effdim.notation import parse_model
from effdim.structure import SEARCH_VERSION

#: A clear-cut tree: three groups of three leaves, every hidden node with leaves of its own.
CLEAR_TREE = parse_model("H1:2(A:2,B:2,C:2,H2:2(D:2,E:2,F:2),H3:2(G:2,H:2,I:2))")

#: A small replicate of the study's design (1,000 rows, 6-8 leaves, 2-3 hidden nodes) searched under CS+.
SMALL_STUDY_CONFIG = {
    "replicate": 3,
    "n": 1000,
    "seed": 0,
    "scores": ["cs+"],
    "leaves": [6, 8],
    "hidden": [2, 3],
    "restarts": 5,
    "max_time": 600.0,
    "clock": "cpu",
    "search": SEARCH_VERSION,
}
#: A small replicate searched under CS+ with 3 restarts: its rounds run (and gain nothing, its search ends at an optimum).
ROUNDS_STUDY_CONFIG = {**SMALL_STUDY_CONFIG, "replicate": 0, "restarts": 3}


@cache
def clear_tree_data():
    """20,000 rows from :data:`CLEAR_TREE` with well-separated parameters (made once per process)."""
    from effdim.distribution import sample

    return sample(separated_parameters(CLEAR_TREE, 0.85), 20000, np.random.default_rng(1))


def run_row(score, learned, rf, kl, *, card_errors=0, hidden=2, ds=20, de=20, stopped="converged") -> dict:
    """One run of a study job's ``runs`` as :func:`effdim.experiments.structure.structure_job` records it."""
    return {
        "score": score,
        "learned": learned,
        "rf": rf,
        "kl_bits": kl,
        "kl_exact": True,
        "hidden_true": 2,
        "hidden_learned": hidden,
        "card_errors": card_errors,
        "exact": rf == 0 and card_errors == 0,
        "steps": 3,
        "seconds": 1.0,
        "stopped": stopped,
        "ds": ds,
        "de": de,
        "score_learned": -100.0 - rf,
        "score_truth": -100.0,
        "gap": -float(rf),
    }
