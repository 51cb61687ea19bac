"""The Vuong-Lo-Mendell-Rubin test (effdim.lmr): the weighted chi-square, the scores and Hessians, the test."""

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import chdtrc

from effdim import fit
from effdim.data import from_patterns
from effdim.distribution import Parameters, random_parameters, sample
from effdim.em import loglikelihood
from effdim.errors import EffdimError
from effdim.lmr import lc_scores, lmr_test, vuong_weights, weighted_chisq_sf
from effdim.model import HLCModel


# ------------------------------------------------------------------ weighted chi-square
@pytest.mark.parametrize("m", [1, 2, 5, 30])
@pytest.mark.parametrize("x", [0.1, 2.0, 11.0, 60.0])
def test_equal_weights_are_a_scaled_chi_square(m, x):
    assert weighted_chisq_sf(x, [0.7] * m) == pytest.approx(chdtrc(m, x / 0.7), abs=1e-12)


@pytest.mark.parametrize("x", [0.0, 0.5, 3.0, 9.0])
def test_unequal_weights_match_the_chi_square_sum_they_stand_for(x):
    # 2 (Z1^2 + Z2^2) + (Z3^2 + Z4^2) is Exp(mean 4) + Exp(mean 2), whose tail is the hypoexponential one
    exact = 2 * math.exp(-x / 4) - math.exp(-x / 2)
    imhof = weighted_chisq_sf(x, [2.0, 2.0, 1.0, 1.0])
    assert imhof == pytest.approx(exact, abs=1e-9)


def test_weights_of_both_signs_agree_with_simulation():
    weights = [1.3, 0.4, -0.6, -0.05, 0.9]
    draws = np.random.default_rng(0).standard_normal((400_000, len(weights))) ** 2 @ np.array(weights)
    for x in (-1.0, 0.0, 0.7, 2.5, 6.0):
        simulated = float(np.mean(draws > x))
        assert weighted_chisq_sf(x, weights) == pytest.approx(simulated, abs=4 * math.sqrt(0.25 / draws.size))


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.floats(-5, 5).filter(lambda w: abs(w) > 1e-3), min_size=1, max_size=12),
    st.floats(0, 40),
    st.floats(0.01, 5),
)
def test_the_tail_probability_is_a_probability_and_falls_with_x(weights, x, step):
    p, q = weighted_chisq_sf(x, weights), weighted_chisq_sf(x + step, weights)
    assert 0.0 <= q <= p + 1e-7 <= 1.0 + 1e-7


# ------------------------------------------------------------ scores and Hessians
def _log_ratio_point(params):
    model = params.model
    pi = params.cpts[model.root]
    vec = list(np.log(pi[:-1] / pi[-1]))
    for o in model.observed:
        for row in params.cpts[o]:
            vec += list(np.log(row[:-1] / row[-1]))
    return np.array(vec)


def _params_at(model, vec):
    def softmax(free):
        a = np.concatenate([free, [0.0]])
        e = np.exp(a - a.max())
        return e / e.sum()

    k = model.card(model.root)
    cpts, at = {model.root: softmax(vec[: k - 1])}, k - 1
    for o in model.observed:
        r = model.card(o)
        cpts[o] = np.array([softmax(vec[at + h * (r - 1) : at + (h + 1) * (r - 1)]) for h in range(k)])
        at += k * (r - 1)
    return Parameters(model, cpts)


def _with_missing_cells(data, share, seed):
    frame = pd.DataFrame(data.patterns, columns=data.columns).loc[
        np.repeat(np.arange(len(data.counts)), data.counts.astype(int))
    ]
    holes = np.random.default_rng(seed).random(frame.shape) < share
    return frame.astype(float).mask(holes).astype("Int64")


def test_scores_and_hessian_are_the_derivatives_of_the_log_likelihood_with_missing_cells():
    model = HLCModel.parse("3:2,3,4,2")
    truth = random_parameters(model, 1, concentration=2.0)
    frame = _with_missing_cells(sample(truth, 300, 2), 0.15, 3)
    point = random_parameters(model, 4, concentration=3.0)  # any point: the identities hold everywhere
    from effdim.data import check_matches_model
    from effdim.validation import as_dataset

    data = check_matches_model(as_dataset(frame.rename(columns=dict(zip(frame.columns, model.observed)))), model)
    S, B, H = lc_scores(point, data.patterns, data.counts)
    vec = _log_ratio_point(point)
    ll = lambda v: loglikelihood(_params_at(model, v), data)  # noqa: E731
    eps = 1e-5
    grad = np.array([(ll(vec + eps * e) - ll(vec - eps * e)) / (2 * eps) for e in np.eye(vec.size)])
    assert data.counts @ S == pytest.approx(grad, abs=1e-5)
    assert B == pytest.approx(S.T @ (data.counts[:, None] * S))
    h = 1e-4
    num = np.array(
        [
            [
                (ll(vec + h * a + h * b) - ll(vec + h * a - h * b) - ll(vec - h * a + h * b) + ll(vec - h * a - h * b))
                / (4 * h * h)
                for b in np.eye(vec.size)
            ]
            for a in np.eye(vec.size)
        ]
    )
    assert np.abs(num - H).max() < 1e-4 * np.abs(H).max()


def test_the_weights_do_not_depend_on_the_order_of_the_categories():
    model = HLCModel.parse("2:3,3,3,3")
    data = sample(random_parameters(model, 5, concentration=1.5), 400, 6)
    small = fit(data, model.with_card("H1", 1), restarts=3, seed=1, warn=False)
    large = fit(data, model, restarts=3, seed=1, init=small, warn=False)
    first = lmr_test(small, large)
    order = [2, 0, 1]
    flipped = data.patterns.copy()
    flipped[:, 1] = np.array(order)[flipped[:, 1]]
    other = from_patterns(flipped, data.counts, data.columns, cardinalities=data.cardinalities)
    small2 = fit(other, model.with_card("H1", 1), restarts=3, seed=1, warn=False)
    large2 = fit(other, model, restarts=3, seed=1, init=small2, warn=False)
    second = lmr_test(small2, large2)
    assert second.statistic == pytest.approx(first.statistic, abs=1e-5)
    assert second.weights == pytest.approx(first.weights, abs=1e-4)


def test_a_real_second_class_is_found_and_the_adjustment_shrinks_the_statistic():
    two = Parameters(
        HLCModel.parse("2:2,2,2,2,2"),
        {"H1": [0.6, 0.4], **{f"O{i}": [[0.85, 0.15], [0.2, 0.8]] for i in range(1, 6)}},
    )
    data = sample(two, 500, 11)
    one = fit(data, "1:2,2,2,2,2", restarts=2, seed=0, warn=False)
    both = fit(data, "2:2,2,2,2,2", restarts=4, seed=0, init=one, warn=False)
    result = lmr_test(one, both)
    assert result.p_value < 1e-6 and result.p_adjusted < 1e-6
    assert result.adjusted == pytest.approx(result.statistic / (1 + 1 / (6 * math.log(500))))
    assert result.k == 2 and result.delta == 6
    assert "Jeffries" in result.note
    assert set(result.to_json()) >= {"statistic", "adjusted", "p_value", "p_adjusted", "weights"}


def test_vuong_weights_of_a_model_against_itself_cancel():
    # f = g: the stacked scores are (s, s), W's blocks cancel and no weight is left
    model = HLCModel.parse("2:2,2,2,2")
    data = sample(random_parameters(model, 3), 300, 4)
    fitted = fit(data, model, restarts=3, seed=0, warn=False)
    S, _, H = lc_scores(fitted.params, data.patterns, data.counts)
    assert vuong_weights(S, H, S, H, data.counts).size == 0


def test_the_test_refuses_what_it_cannot_compute():
    data = sample(random_parameters(HLCModel.parse("2:2,2,2,2"), 0), 200, 1)
    one = fit(data, "1:2,2,2,2", restarts=1, seed=0, warn=False)
    three = fit(data, "3:2,2,2,2", restarts=1, seed=0, warn=False)
    with pytest.raises(EffdimError, match="k - 1 with k classes"):
        lmr_test(one, three)
    tree = HLCModel.parse("2(2(2,2),2(2,2))")
    tree_data = sample(random_parameters(tree, 0), 200, 1)
    small = fit(tree_data, tree.with_card(tree.root, 1), restarts=1, seed=0, warn=False)
    big = fit(tree_data, tree, restarts=1, seed=0, warn=False)
    with pytest.raises(EffdimError, match="latent class models"):
        lmr_test(small, big)


def test_many_small_weights_do_not_underflow_the_tail_bound():
    """Hundreds of small eigenvalues (an LC model of many many-category items) made their product 0; the
    p-value must still be computed, and match the chi-square where the weights are nearly equal."""
    weights = np.full(400, 1e-3)
    weights[0] = 1.001e-3
    x = 0.5
    assert weighted_chisq_sf(x, weights) == pytest.approx(float(chdtrc(400, x / 1e-3)), abs=2e-3)
    assert 0.0 <= weighted_chisq_sf(3.0, [*np.full(300, 1e-4), 1.0, 2.0]) <= 1.0
