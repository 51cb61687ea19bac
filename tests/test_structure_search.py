"""The structure search (effdim.structure.learn_structure) on data with a known answer: recovery, a log-likelihood
that never falls, cancel, the time limit, escapes from an optimum.
"""

import json
import threading
import time

import numpy as np
import pytest
from structure_cases import CLEAR_TREE, clear_tree_data

from effdim import fit
from effdim.data import DataError, from_patterns
from effdim.distribution import random_parameters, sample
from effdim.em import Cancelled
from effdim.em.kernel import load as load_compiled_estep
from effdim.notation import parse_model
from effdim.structure import (
    ESCAPE,
    START_STEPS_ON_TIME,
    islands_model,
    learn_structure,
    mutual_information,
    robinson_foulds,
)
from effdim.structure.learn import climb_and_escape


@pytest.mark.parametrize("start", ["lc", "islands"])
def test_clear_cut_tree_recovered_exactly_at_large_n(start):
    result = learn_structure(clear_tree_data(), score="bic+", start=start, seed=0)
    assert robinson_foulds(result.model, CLEAR_TREE) == 0
    assert sorted(result.model.card(h) for h in result.model.hidden) == [2, 2, 2]
    assert result.stopped == "converged"


@pytest.mark.parametrize("score", ["bic", "cs+"])  # a penalised likelihood, and CS (scored by an exact E-step)
def test_loglik_never_decreases_on_accepted_moves(score):
    result = learn_structure(clear_tree_data(), score=score, start="lc", seed=3)
    assert result.steps, "the LC start is wrong for these data: the search must move"
    previous, before = result.start.loglik, result.start.model
    for step in result.steps:
        assert step.loglik >= step.local_loglik - 1e-6  # full EM starts from the local estimate
        if _nests(before, step):  # SI, and NI with as many states as the parent, nest the current model
            assert step.loglik >= previous - 1e-6
        if step.operator != ESCAPE:  # an escape leaves an optimum downhill; the climb after it does not
            assert step.gain > 0
        previous, before = step.loglik, step.model
    assert result.fit.loglik >= result.steps[-1].loglik - 1e-6


def _nests(before, step) -> bool:
    """The step's model contains ``before`` (its distributions): an SI, or an NI whose node copies its parent."""
    if step.operator == "SI":
        return True
    if step.operator != "NI":
        return False
    new = next(h for h in step.model.hidden if h not in before.hidden)
    return step.model.card(new) == step.model.card(step.model.parent(new))


def test_given_the_true_structure_it_agrees_with_the_fixed_structure_fit():
    result = learn_structure(clear_tree_data(), score="bic+", start=CLEAR_TREE, seed=0)
    fixed = fit(clear_tree_data(), CLEAR_TREE, restarts=5, seed=0)
    assert result.model == CLEAR_TREE and not result.steps
    assert result.fit.loglik == pytest.approx(fixed.loglik, abs=1e-3)
    assert (result.fit.ds, result.fit.de) == (fixed.ds, fixed.de)


def test_cancel_stops_the_search():
    cancel = threading.Event()
    seen = []

    def progress(p):
        seen.append(p.candidates)
        if p.candidates >= 2:
            cancel.set()

    with pytest.raises(Cancelled):
        learn_structure(clear_tree_data(), start="lc", seed=0, progress=progress, cancel=cancel)
    assert max(seen) == 2


def test_max_time_returns_the_best_so_far():
    result = learn_structure(clear_tree_data(), start="lc", seed=0, max_time=0.01)
    assert result.stopped == "max_time"
    assert result.fit.model == result.model


def test_constant_column_is_named():
    data = from_patterns([[0, 1, 0, 0], [1, 0, 0, 1]], columns=["A", "B", "Flat", "D"])
    with pytest.raises(DataError, match="'Flat'"):
        learn_structure(data)


def _wide_data(leaves: int, rows: int, seed: int):
    """Data from a random tree over ``leaves`` binary leaves, groups of five under binary hidden nodes."""
    rng = np.random.default_rng(seed)
    groups = leaves // 5
    spec = ",".join("2(" + ",".join(["2"] * 5) + ")" for _ in range(groups))
    truth = parse_model(f"2({spec})")
    return sample(random_parameters(truth, rng, concentration=2.0), rows, rng)


@pytest.mark.exclusive  # a bound on seconds
@pytest.mark.parametrize("max_time", [0.5, 4.0])
def test_max_time_covers_every_phase_and_returns_a_model(cli, tmp_path, max_time):
    """200 columns: mutual information, the start fit and one step's candidates each take longer than the
    limit here; the search still ends near it, with a model over every column, and says it stopped on time."""
    load_compiled_estep()  # once per process (compiled at the first E-step otherwise, inside the timed search)
    data = _wide_data(200, 2000, 0)
    path = tmp_path / "wide.csv"
    data.to_frame().to_csv(path, index=False)
    t = time.perf_counter()
    status, out, err = cli("learn", path, "--json", "--seed", "0", "--max-time", max_time)
    elapsed = time.perf_counter() - t
    assert status == 0, err
    result = json.loads(out)
    assert result["stopped"] == "max_time"
    assert len(parse_model(result["model"]).observed) == 200
    # the margin: the mutual information and the start model fitted by a few EM steps from one start, which
    # the search needs to return a model at all (measured here, as the machine's load changes it)
    t = time.perf_counter()
    islands = islands_model(data, mutual_information(data))
    fit(data, islands, restarts=0, init=random_parameters(islands, 0), max_iter=START_STEPS_ON_TIME, warn=False)
    margin = 2 * (time.perf_counter() - t) + 1.0
    assert result["seconds"] < max_time + margin, f"searched {result['seconds']:.1f} s for --max-time {max_time}"
    assert elapsed < result["seconds"] + margin + 5.0, f"{elapsed:.1f} s in all"  # CSV read and JSON output too


class _Landscape:
    """A made-up search space for :func:`climb_and_escape`: models are letters with a score and neighbours; a
    climb goes to the best unvisited neighbour while it scores higher, and its end's lower neighbours are the
    losing refits an escape takes (``(score, move)`` entries whose ``move.model`` is the neighbour)."""

    def __init__(self, scores: dict, neighbours: dict):
        self.scores, self.neighbours, self.left = scores, neighbours, []

    def climb(self, model, visited):
        visited.add(model)
        while True:
            up = [m for m in self.neighbours[model] if m not in visited and self.scores[m] > self.scores[model]]
            if not up:
                break
            model = max(up, key=self.scores.get)
            visited.add(model)
        down = [m for m in self.neighbours[model] if self.scores[m] < self.scores[model]]
        return model, [(self.scores[m], type("Move", (), {"model": m})) for m in down]

    def leave(self, optimum, downhill):
        entry = downhill.pop(max(range(len(downhill)), key=lambda i: downhill[i][0]))
        self.left.append((optimum, entry[1].model))
        return entry[1].model

    def better(self, a, b):
        return self.scores[a] > self.scores[b]


def test_each_escape_leaves_the_optimum_the_search_is_at_then_the_optima_before_it():
    """From A the first escape (to B) climbs to D; the next must leave D (to E, then up to G), not A; G gets two
    escapes of its own (H, I; its third neighbour J is not tried); then the search goes back to D's untried
    neighbour F, and to A's, C, from which it climbs to K, the highest."""
    scores = {"A": 0, "B": -1, "C": -2, "D": 5, "E": 4, "F": 3, "G": 10, "H": 8, "I": 7, "J": 6, "K": 12}
    neighbours = {
        "A": "BC",
        "B": "AD",
        "C": "AK",
        "D": "BEF",
        "E": "DG",
        "F": "D",
        "G": "EHIJ",
        "H": "G",
        "I": "G",
        "J": "G",
        "K": "C",
    }
    space = _Landscape(scores, {m: list(n) for m, n in neighbours.items()})
    assert climb_and_escape("A", space.climb, space.leave, space.better, escapes=2) == "K"
    assert space.left == [("A", "B"), ("D", "E"), ("G", "H"), ("G", "I"), ("D", "F"), ("A", "C")]
