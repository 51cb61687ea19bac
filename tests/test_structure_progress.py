"""What a structure search reports as it runs (``progress``, :class:`effdim.structure.StructureProgress`): a fraction
that only grows and ends at 1, and the best tree so far, a valid model over the data's columns whose score only
rises, ending at the tree and score the search returns (the dashboard's progress bar and live drawing,
effdim_app/tasks.py)."""

from __future__ import annotations

import numpy as np
import pytest
from structure_cases import CLEAR_TREE, clear_tree_data

from effdim import learn_structure
from effdim.distribution import sample
from effdim.experiments.structure import random_latent_tree, separated_parameters
from effdim.regularity import is_regular
from effdim.scores import TIE_TOLERANCE
from effdim.structure import robinson_foulds


def _reports(data, **search):
    shown = []
    result = learn_structure(data, progress=shown.append, seed=0, **search)
    return result, shown


def _check(result, shown, data) -> list[float]:
    """The reports' invariants; returns their fractions."""
    fractions = [p.fraction for p in shown]
    assert all(f is not None and 0.0 <= f <= 1.0 for f in fractions), fractions
    assert fractions == sorted(fractions), fractions  # monotone
    assert shown[-1].phase == "done" and fractions[-1] == 1.0 and fractions.count(1.0) <= 2
    tie = TIE_TOLERANCE * data.n_rows
    scores = [p.score for p in shown]
    assert all(b >= a - tie for a, b in zip(scores, scores[1:])), scores  # the best so far never falls
    assert scores[-1] >= scores[0] + tie  # and here it rose
    for tree in {p.model for p in shown}:
        assert sorted(tree.observed) == sorted(data.columns) and is_regular(tree)
    assert (shown[-1].model, shown[-1].score) == (result.model, result.fit.score(result.score))
    steps = [p.steps for p in shown]
    assert steps == sorted(steps) and steps[-1] == len(result.steps)
    return fractions


def test_a_search_cut_by_its_time_limit_reports_the_time_used_and_ends_at_its_best_tree():
    truth = random_latent_tree(np.random.default_rng(5), (16, 16), (4, 5))
    data = sample(separated_parameters(truth), 2000, np.random.default_rng(1))
    result, shown = _reports(data, score="bic", start="lc", max_time=4.0, cpu_time=True, restarts=2)
    assert result.stopped == "max_time"
    fractions = _check(result, shown, data)
    # the bar moves while the search runs: the share of its time limit used, at many points on the way
    assert len({round(f, 2) for f in fractions[:-1]}) >= 10 and max(fractions[:-1]) > 0.5
    assert all(p.max_time == 4.0 and p.fraction == pytest.approx(min(1.0, p.elapsed / 4.0)) for p in shown[:-1])
    assert len({p.model for p in shown}) >= 3  # new best trees on the way


def test_a_search_that_converges_with_rounds_reports_monotone_fractions_across_its_rounds():
    """The rounds after a search count on from its time and keep its time limit: their fractions go on rising."""
    data = clear_tree_data()
    result, shown = _reports(data, score="bic+", start="lc", max_time=600.0, rounds=2)
    assert result.stopped == "converged" and robinson_foulds(result.model, CLEAR_TREE) == 0
    assert any(p.phase.startswith("round 2: ") for p in shown)  # a round ran
    assert all(p.max_time == 600.0 for p in shown)
    _check(result, shown, data)


def test_without_a_time_limit_the_fraction_is_known_only_at_the_end():
    data = clear_tree_data()
    result, shown = _reports(data, score="bic", start=CLEAR_TREE, rounds=0)
    assert [p.fraction for p in shown[:-1]] == [None] * (len(shown) - 1) and shown[-1].fraction == 1.0
