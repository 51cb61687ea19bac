"""Nested starts (a hidden state split in two), SQUAREM and the restart schedule."""

from __future__ import annotations

import doctest
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import hlc_models

import effdim.nested
import effdim.restarts
from effdim import datasets, fit, sweep
from effdim.distribution import observed_distribution, random_parameters, sample
from effdim.em import fit_em, loglikelihood
from effdim.model import HLCModel
from effdim.nested import grown_node, nested_start, split_state
from effdim.restarts import best_starts, restart_schedule
from effdim.search import climb
from effdim.squarem import MIN_RATIO, extrapolate

FIG2 = "5(3(2,2),2,3(2,2))"


@pytest.mark.parametrize("module", [effdim.nested, effdim.restarts])
def test_examples_run(module):
    failed, attempted = doctest.testmod(module, raise_on_error=False)
    assert attempted > 0 and failed == 0


# ---------------------------------------------------------------- split a state
@settings(max_examples=25, deadline=None)
@given(model=hlc_models(max_hidden=3, max_card=3, max_children=2), seed=st.integers(0, 2**16), pick=st.integers(0, 9))
def test_split_keeps_the_observed_distribution(model, seed, pick):
    params = random_parameters(model, seed)
    node = model.hidden[pick % len(model.hidden)]
    state = pick % model.card(node)
    big = split_state(params, node, state)
    assert big.model == model.with_card(node, model.card(node) + 1)
    assert grown_node(model, big.model) == node
    np.testing.assert_allclose(observed_distribution(big), observed_distribution(params), atol=1e-12)
    # the two copies differ (else EM could never separate them)
    child = next((c for c in model.children(node) if model.card(c) > 1), None)
    if child is not None:
        assert not np.allclose(big.cpts[child][state], big.cpts[child][-1])


def test_grown_node_accepts_only_one_card_up():
    m = HLCModel.parse(FIG2)
    assert grown_node(m, m.with_card("H3", 4)) == "H3"
    assert grown_node(m, m) is None
    assert grown_node(m, m.with_card("H3", 5)) is None
    assert grown_node(m.with_card("H3", 4), m) is None
    assert grown_node(m, m.with_card("H2", 4).with_card("H3", 4)) is None
    assert nested_start(None, m) is None


def test_split_names_a_bad_node_or_state():
    params = random_parameters(HLCModel.parse("2:2,2,2"), 0)
    with pytest.raises(ValueError, match="'O1' is not a hidden node"):
        split_state(params, "O1")
    with pytest.raises(ValueError, match="states 0..1, not 2"):
        split_state(params, "H1", 2)


def test_sweep_loglik_never_falls_as_the_cardinality_grows():
    """Before nested starts, this sweep of the bundled data fell by up to 0.56 (benchmarks/engine/bench_em_accuracy.py)."""
    data = datasets.load("hlc-figure2")
    results = sweep(data, FIG2, "H1", cards=range(2, 7), restarts=2, seed=0, max_iter=300)
    lls = [r.loglik for r in results]
    assert all(b >= a - 1e-6 for a, b in zip(lls, lls[1:])), lls


def test_a_grown_fit_ends_at_least_as_high_as_the_fit_it_grew_from():
    truth = random_parameters(HLCModel.parse(FIG2), 3)
    data = sample(truth, 3000, 4)
    small = fit(data, "3(2(2,2),2,2(2,2))", restarts=2, seed=1, max_iter=200)
    # one random start and few steps: without the nested start this often ends lower
    big = fit(data, "3(3(2,2),2,2(2,2))", restarts=1, seed=2, max_iter=20, init=small)
    assert big.loglik >= small.loglik - 1e-6
    assert big.restarts["restarts"] == 2  # the nested start plus the random one


@settings(max_examples=10, deadline=None)
@given(model=hlc_models(max_hidden=2, max_card=3, max_children=2), seed=st.integers(0, 2**16), pick=st.integers(0, 9))
def test_growing_a_fit_never_lowers_the_loglikelihood(model, seed, pick):
    data = sample(random_parameters(model, seed), 200, seed + 1)
    small = fit(data, model, restarts=1, seed=seed, max_iter=20)
    node = model.hidden[pick % len(model.hidden)]
    # one random start with 3 steps would often end lower; the nested start cannot
    big = fit(data, model.with_card(node, model.card(node) + 1), restarts=1, seed=seed + 2, max_iter=3, init=small)
    assert big.loglik >= small.loglik - 1e-7 * abs(small.loglik)


def test_climb_passes_the_current_fit_to_grow_from():
    seen = []

    def evaluate(models, smaller):
        seen.append((smaller, models))
        return [
            SimpleNamespace(model=m, scores=SimpleNamespace(bic=-abs(m.card("H1") - 3), ds=m.card("H1"), n=1))
            for m in models
        ]

    path, _ = climb(HLCModel.parse("2:2,2,2,2"), "bic", evaluate)
    assert seen[0][0] is None
    assert all(grown_node(s.model, m) for s, ms in seen[1:] for m in ms)
    assert [f.model.card("H1") for f in path] == [2, 3]


# ------------------------------------------------------------------- SQUAREM
def test_extrapolation_stays_inside_the_simplex():
    rng = np.random.default_rng(0)
    rows = lambda: rng.dirichlet(np.ones(3), size=(4, 2))  # noqa: E731  (starts, rows, states)
    x0, x1, x2 = rows(), rows(), rows()
    x, alpha = extrapolate([x0], [x1], [x2], np.full(4, 1e6))
    assert np.all(alpha >= 1)
    np.testing.assert_allclose(x[0].sum(axis=-1), 1.0, atol=1e-9)
    assert np.all(x[0] >= MIN_RATIO * x2 - 1e-15)
    # step length 1 is exactly the second EM point
    x, alpha = extrapolate([x0], [x1], [x2], np.ones(4))
    assert np.all(alpha == 1) and np.array_equal(x[0], x2)


def test_extrapolation_of_several_tables_is_that_of_each_table_with_the_shared_step():
    """The tables of a start are extrapolated side by side: each comes out as ``x0 + 2a r + a^2 v`` with the
    step ``a`` that keeps every table of that start inside the simplex (halved towards 1 otherwise)."""
    from effdim.squarem import step_length

    rng = np.random.default_rng(1)
    shapes = [(5, 3), (5, 2, 4), (5, 3, 2, 2)]
    rows = lambda s: rng.dirichlet(np.ones(s[-1]), size=s[:-1])  # noqa: E731
    x0 = [0.5 * rows(s) + 0.5 / s[-1] for s in shapes]
    r = [0.05 * (rows(s) - rows(s)) for s in shapes]  # EM steps that barely shrink: a long SQUAREM step
    x1 = [a + b for a, b in zip(x0, r)]
    x2 = [a + b + 0.002 * (rows(s) - rows(s)) for a, b, s in zip(x1, r, shapes)]
    step_max = np.array([1.0, 2.0, 1e6, 8.0, 1e6])
    x, alpha = extrapolate(x0, x1, x2, step_max)
    start = step_length(x0, x1, x2, step_max)
    assert np.all((alpha == start) | (alpha < start)) and alpha[0] == 1.0
    for got, a0, a1, a2 in zip(x, x0, x1, x2):
        al = alpha.reshape((-1,) + (1,) * (a0.ndim - 1))
        expected = np.where(al == 1.0, a2, a0 + 2 * al * (a1 - a0) + al**2 * (a2 - 2 * a1 + a0))
        assert got.shape == a0.shape and np.array_equal(got, expected)
        assert np.all(got >= MIN_RATIO * a2)
    shrunk = alpha < start  # a start whose first step left the simplex somewhere, in any of its tables
    assert shrunk.any()


def test_squarem_reaches_plain_em_optimum_in_fewer_steps():
    model = HLCModel.parse("4:2,2,2,2")
    data = sample(random_parameters(model, 5), 5000, 6)
    init = random_parameters(model, 7)
    fast = fit_em(data, model, restarts=0, init=init, tol=1e-9, max_iter=3000)
    slow = fit_em(data, model, restarts=0, init=init, tol=1e-9, max_iter=3000, accelerate=False)
    assert fast.converged
    assert fast.n_iter < slow.n_iter
    assert fast.loglik >= slow.loglik - 1e-3
    assert np.all(np.diff(fast.trace) >= -1e-9 * abs(fast.trace[-1]))
    assert fast.loglik == pytest.approx(loglikelihood(fast.params, data), abs=1e-8)


def test_squarem_climbs_higher_where_em_creeps_and_neither_claims_convergence():
    """Figure 2's model (de < ds) on 5,000 rows: EM creeps along its flat directions, the log-likelihood
    still rising 0.03 nats between 3,000 and 10,000 SQUAREM steps. Neither fit may say it converged
    (effdim.em.iteration, test 2: the rises of its plain EM steps shrink too slowly), and SQUAREM is the higher with the
    same budget."""
    model = HLCModel.parse(FIG2)
    data = sample(random_parameters(model, 5), 5000, 6)
    init = random_parameters(model, 7)
    fast = fit_em(data, model, restarts=0, init=init, tol=1e-9, max_iter=3000)
    slow = fit_em(data, model, restarts=0, init=init, tol=1e-9, max_iter=3000, accelerate=False)
    assert fast.loglik >= slow.loglik - 1e-3
    assert np.all(np.diff(fast.trace) >= -1e-9 * abs(fast.trace[-1]))
    more = fit_em(data, model, restarts=0, init=fast.params, tol=None, max_iter=1000, order_states=False)
    assert more.loglik - fast.loglik > 1e-9 * data.n_rows  # it was still rising...
    assert not fast.converged and not slow.converged  # ...and said so


def test_max_iter_is_exact_with_squarem():
    model = HLCModel.parse(FIG2)
    data = sample(random_parameters(model, 1), 500, 2)
    for k in (1, 2, 3, 7, 30):
        assert fit_em(data, model, restarts=1, seed=0, tol=None, max_iter=k).n_iter == k


# --------------------------------------------------------------- the schedule
def test_restart_schedule_halves_and_doubles():
    stages = restart_schedule(9, 10)
    assert [(s.steps, s.keep) for s in stages] == [(10, 5), (20, 3), (40, 2), (80, 1), (None, 1)]
    assert [(s.steps, s.keep) for s in restart_schedule(1)] == [(None, 1)]
    with pytest.raises(ValueError, match="at least one start"):
        restart_schedule(0)
    np.testing.assert_array_equal(best_starts(np.array([1.0, 3.0, 3.0, 2.0]), 2), [1, 2])
