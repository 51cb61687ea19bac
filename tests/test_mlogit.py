"""The weighted multinomial logit (effdim.mlogit): its gradient and information are the derivatives of its
objective, its Newton step never lowers it and ends at the maximum, and grouping rows changes nothing."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from effdim.mlogit import (
    GroupedDesign,
    class_probabilities,
    expected_loglik,
    gradient,
    information,
    newton_step,
)


def problem(seed, S=2, m=40, p=3, K=3):
    rng = np.random.default_rng(seed)
    design = np.column_stack([np.ones(m), rng.normal(size=(m, p - 1))])
    counts = rng.integers(1, 4, size=m).astype(float)
    post = rng.dirichlet(np.ones(K), size=(S, m)).transpose(0, 2, 1)  # (S, K, m)
    return design, counts, post * counts, rng.normal(size=(S, p, K - 1))


def test_gradient_and_information_are_the_derivatives_of_q():
    design, counts, targets, beta = problem(0)
    probs = class_probabilities(design, beta)
    grad = gradient(design, probs, targets, counts).reshape(2, -1)
    info = information(design, probs, counts)
    flat = beta.reshape(2, -1)
    h = 1e-5
    for i in range(flat.shape[1]):
        step = np.zeros_like(flat)
        step[:, i] = h
        up = expected_loglik(design, (flat + step).reshape(beta.shape), targets)
        down = expected_loglik(design, (flat - step).reshape(beta.shape), targets)
        np.testing.assert_allclose((up - down) / (2 * h), grad[:, i], rtol=1e-6, atol=1e-6)
        g_up = gradient(design, class_probabilities(design, (flat + step).reshape(beta.shape)), targets, counts)
        g_down = gradient(design, class_probabilities(design, (flat - step).reshape(beta.shape)), targets, counts)
        column = -(g_up - g_down).reshape(2, -1) / (2 * h)
        np.testing.assert_allclose(column, info[:, :, i], rtol=1e-5, atol=1e-6)


@given(st.integers(0, 10_000))
def test_newton_steps_climb_to_the_maximum(seed):
    design, counts, targets, beta = problem(seed)
    q = expected_loglik(design, beta, targets)
    for _ in range(30):
        beta, q_new = newton_step(design, beta, targets, counts)
        assert np.all(q_new >= q - 1e-9)
        q = q_new
    grad = gradient(design, class_probabilities(design, beta), targets, counts)
    assert np.abs(grad).max() < 1e-6 * counts.sum()


def test_grouped_rows_give_the_rows_probabilities_and_sums():
    design = np.array([[1.0, 2.0], [1.0, 0.0], [1.0, 2.0], [1.0, 5.0]])
    grouped = GroupedDesign.of(design)
    assert grouped.n_groups == 3
    beta = np.array([[[0.3], [-0.2]]])
    np.testing.assert_allclose(grouped.probabilities(beta), class_probabilities(design, beta))
    values = np.arange(8.0).reshape(1, 2, 4)
    sums = grouped.sums(values)
    assert sums.shape == (1, 2, 3) and np.isclose(sums.sum(), values.sum())
    np.testing.assert_allclose(sums[0, :, grouped.index[0]], values[0, :, 0] + values[0, :, 2])
