"""Parameters, forward sampling, the exact P(O), and KL (effdim.distribution)."""

from __future__ import annotations

import itertools
import math
import string
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from effdim import datasets
from effdim.distribution import (
    Parameters,
    SpaceTooLargeError,
    kl_divergence,
    observed_distribution,
    random_parameters,
    sample,
)
from effdim.model import HLCModel

MODELS = ["2:2,2,2", "3:2,3,2,2", "5(3(2,2),2,3(2,2))", "2(3(2,3),2(2,2,4))", "2(2(2,2(2,3)),2)"]


def brute_force(params: Parameters) -> np.ndarray:
    """P(O) by summing the full joint over every node (einsum of all CPTs)."""
    model = params.model
    letters = dict(zip(model.nodes, string.ascii_letters))
    operands, subscripts = [], []
    for node in model.nodes:
        parent = model.parent(node)
        subscripts.append(letters[node] if parent is None else letters[parent] + letters[node])
        operands.append(params.cpts[node])
    out = "".join(letters[o] for o in model.observed)
    return np.einsum(",".join(subscripts) + "->" + out, *operands)


def empirical(ds, shape) -> np.ndarray:
    freq = np.zeros(shape)
    np.add.at(freq, tuple(ds.patterns.T), ds.counts)
    return freq / ds.n_rows


# ---------------------------------------------------------------- parameters
@pytest.mark.parametrize("text", MODELS)
def test_random_parameters_shapes_and_rows(text):
    model = HLCModel.parse(text)
    params = random_parameters(model, 0)
    for node in model.nodes:
        table = params.cpts[node]
        parent = model.parent(node)
        if parent is None:
            assert table.shape == (model.card(node),)
        else:
            assert table.shape == (model.card(parent), model.card(node))
        np.testing.assert_allclose(table.sum(axis=-1), 1.0)
    again = random_parameters(model, np.random.default_rng(0))
    for node in model.nodes:
        np.testing.assert_array_equal(params.cpts[node], again.cpts[node])


def test_parameters_are_validated():
    model = HLCModel.parse("2:2,2")
    good = random_parameters(model, 1).cpts
    with pytest.raises(ValueError, match="no CPT for node 'O2'"):
        Parameters(model, {k: v for k, v in good.items() if k != "O2"})
    with pytest.raises(ValueError, match=r"CPT of 'O1' \(P\(O1 \| H1\)\) must have shape \(2, 2\)"):
        Parameters(model, {**good, "O1": np.ones((2, 3)) / 3})
    with pytest.raises(ValueError, match="CPT of 'H1': rows must sum to 1"):
        Parameters(model, {**good, "H1": np.array([0.5, 0.6])})
    with pytest.raises(ValueError, match="negative"):
        Parameters(model, {**good, "O1": np.array([[1.5, -0.5], [0.5, 0.5]])})
    with pytest.raises(ValueError, match="concentration"):
        random_parameters(model, 0, concentration=0)


@pytest.mark.parametrize(
    ("bad", "message"),
    [(np.nan, "has negative or non-finite entries"), (-0.1, "has negative"), (0.3, "rows must sum to 1")],
)
def test_every_table_is_checked_and_the_bad_one_named(bad, message):
    """All tables are checked at once; the error still names the node, wherever it is in the tree."""
    model = HLCModel.parse("H1:2(O1:2,H2:3(O2:2,O3:3),O4:2)")
    good = random_parameters(model, 1).cpts
    assert Parameters(model, good).cpts.keys() == good.keys()
    for node in model.nodes:
        table = good[node].copy()
        table.flat[-1] = bad if bad != 0.3 else table.flat[-1] + 0.3
        with pytest.raises(ValueError, match=f"CPT of '{node}'.*{message}"):
            Parameters(model, {**good, node: table})


# ---------------------------------------------------- exact observed distribution
@pytest.mark.parametrize("text", MODELS)
def test_observed_distribution_matches_brute_force_and_sums_to_one(text):
    model = HLCModel.parse(text)
    params = random_parameters(model, 7, concentration=0.7)
    p = observed_distribution(params)
    assert p.shape == tuple(model.card(o) for o in model.observed)
    assert math.isclose(p.sum(), 1.0, rel_tol=1e-12)
    np.testing.assert_allclose(p, brute_force(params), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("text", MODELS)
def test_observed_distribution_invariant_to_rerooting(text):
    model = HLCModel.parse(text)
    params = random_parameters(model, 3)
    p = observed_distribution(params)
    for hidden in model.hidden:
        moved = params.rerooted(hidden)
        assert moved.model.root == hidden
        q = observed_distribution(moved)
        q = np.transpose(q, [moved.model.observed.index(o) for o in model.observed])
        np.testing.assert_allclose(q, p, rtol=1e-10, atol=1e-15)
        for node, marginal in params.marginals().items():  # every node's marginal is kept
            np.testing.assert_allclose(moved.marginals()[node], marginal, atol=1e-12)


def test_observed_distribution_refuses_huge_spaces():
    model = HLCModel.lc(2, [4] * 11)  # 4**11 = 4,194,304 states
    params = random_parameters(model, 0)
    with pytest.raises(SpaceTooLargeError, match="4,194,304 states"):
        observed_distribution(params)
    small = HLCModel.lc(2, [2] * 3)
    with pytest.raises(SpaceTooLargeError):
        observed_distribution(random_parameters(small, 0), max_states=7)


# --------------------------------------------------------------------- sampling
@pytest.mark.parametrize("text", ["3:2,3,2,2", "5(3(2,2),2,3(2,2))", "2(3(2,3),2(2,2,4))"])
def test_sample_frequencies_converge_to_observed_distribution(text):
    model = HLCModel.parse(text)
    params = random_parameters(model, 11)
    p = observed_distribution(params)
    ds = sample(params, 400_000, 5)
    assert ds.columns == tuple(model.observed)
    assert ds.states == tuple(tuple(range(model.card(o))) for o in model.observed)
    assert ds.n_rows == 400_000 and ds.n_missing == 0
    freq = empirical(ds, p.shape)
    assert 0.5 * np.abs(freq - p).sum() < 0.01  # total variation
    observed_counts = freq.reshape(-1) * ds.n_rows
    result = stats.chisquare(observed_counts, p.reshape(-1) * ds.n_rows)
    assert result.pvalue > 1e-4


def test_sample_keeps_unobserved_states_and_zero_probabilities():
    model = HLCModel.parse("H:2(A:3,B:2)")
    params = Parameters(
        model,
        {
            "H": np.array([1.0, 0.0]),
            "A": np.array([[0.0, 1.0, 0.0], [1 / 3, 1 / 3, 1 / 3]]),
            "B": np.array([[0.5, 0.5], [0.5, 0.5]]),
        },
    )
    ds = sample(params, 10_000, 0)
    assert ds.cardinalities == (3, 2)
    assert set(ds.patterns[:, 0].tolist()) == {1}


def test_sample_is_reproducible_and_validates_n():
    params = random_parameters(HLCModel.parse("3:2,2,2"), 0)
    a, b = sample(params, 1000, 42), sample(params, 1000, 42)
    np.testing.assert_array_equal(a.patterns, b.patterns)
    np.testing.assert_array_equal(a.counts, b.counts)
    for bad in (0, -3, 2.5):
        with pytest.raises(ValueError, match="positive integer"):
            sample(params, bad, 0)


def test_sample_large_space_uses_unique_path():
    model = HLCModel.lc(2, [3] * 30)  # 3**30 > 2**22: no bincount; still packable
    params = random_parameters(model, 0)
    ds = sample(params, 5000, 0)
    assert ds.n_rows == 5000 and ds.patterns.shape[1] == 30
    huge = HLCModel.lc(2, [7] * 25)  # 7**25 > 2**62: row-wise unique
    ds = sample(random_parameters(huge, 0), 2000, 0)
    assert ds.n_rows == 2000 and ds.cardinalities == (7,) * 25


def test_sample_243000_rows_is_fast():
    params = random_parameters(HLCModel.parse("5(3(2,2),2,3(2,2))"), 0)
    sample(params, 1000, 0)
    # CPU seconds of this process: the other tests running meanwhile do not count, so it need not run alone
    start = time.process_time()
    ds = sample(params, 243_000, 1)
    elapsed = time.process_time() - start
    assert ds.n_rows == 243_000 and ds.n_patterns <= 32
    assert elapsed < 1.0, f"sampling took {elapsed:.2f} s of CPU"  # ~0.04 s measured; slack for slow CPUs


# ------------------------------------------------------------------------- KL
def test_kl_of_a_distribution_with_itself_is_zero():
    params = random_parameters(HLCModel.parse("5(3(2,2),2,3(2,2))"), 0)
    assert kl_divergence(params, params) == 0.0
    assert kl_divergence(params, params.rerooted("H3")) == pytest.approx(0.0, abs=1e-12)


def test_kl_matches_definition_and_base():
    model = HLCModel.parse("2:2,3")
    p, q = random_parameters(model, 1), random_parameters(model, 2)
    pp, qq = observed_distribution(p).ravel(), observed_distribution(q).ravel()
    bits = float(np.sum(pp * np.log2(pp / qq)))
    assert kl_divergence(p, q) == pytest.approx(bits, rel=1e-12)
    assert kl_divergence(p, q, base=math.e) == pytest.approx(bits * math.log(2), rel=1e-12)
    assert kl_divergence(p, q) == pytest.approx(stats.entropy(pp, qq, base=2), rel=1e-10)


def test_kl_zero_conventions():
    model = HLCModel.parse("H:2(A:2,B:2)")
    base = {"H": np.array([1.0, 0.0]), "B": np.array([[0.5, 0.5], [0.5, 0.5]])}
    p = Parameters(model, {**base, "A": np.array([[1.0, 0.0], [0.5, 0.5]])})  # P(A=1) = 0
    q = Parameters(model, {**base, "A": np.array([[0.5, 0.5], [0.5, 0.5]])})
    assert kl_divergence(p, q) == pytest.approx(1.0)  # 0 log 0 terms vanish: log2(1/0.5)
    assert kl_divergence(q, p) == math.inf


def test_kl_across_structures_and_mismatches():
    tree = random_parameters(HLCModel.parse("5(3(2,2),2,3(2,2))"), 0)
    lc = random_parameters(HLCModel.parse("3:2,2,2,2,2"), 0)
    assert kl_divergence(tree, lc) > 0
    with pytest.raises(ValueError, match="different variables"):
        kl_divergence(tree, random_parameters(HLCModel.parse("3:2,2,2,2"), 0))
    with pytest.raises(ValueError, match="leaf 'O1' has 2 states in P but 3 in Q"):
        kl_divergence(tree, random_parameters(HLCModel.parse("3:3,2,2,2,2"), 0))


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from(MODELS),
    st.integers(0, 2**32 - 1),
    st.integers(0, 2**32 - 1),
    st.floats(0.05, 5.0),
)
def test_kl_is_non_negative(text, seed_p, seed_q, concentration):
    model = HLCModel.parse(text)
    p = random_parameters(model, seed_p, concentration=concentration)
    q = random_parameters(model, seed_q, concentration=concentration)
    value = kl_divergence(p, q)
    assert value >= 0.0
    assert kl_divergence(p, p) == 0.0


# ------------------------------------------------------ bundled synthetic data
@pytest.mark.parametrize("name", ["lc-8-2222", "hlc-figure2"])
def test_bundled_samples_fit_their_generating_parameters(name):
    params = datasets.generating_parameters(name)
    assert str(params.model) == datasets.info(name).model
    ds = datasets.load(name)
    p = observed_distribution(params)
    counts = empirical(ds, p.shape).reshape(-1) * ds.n_rows
    assert stats.chisquare(counts, p.reshape(-1) * ds.n_rows).pvalue > 1e-4


def test_generating_parameters_refused_for_real_data():
    with pytest.raises(ValueError, match="real data"):
        datasets.generating_parameters("stouffer-toby")


def test_all_patterns_enumerated_once():
    """observed_distribution axes follow model.observed (pattern order = data column order)."""
    model = HLCModel.parse("H:2(A:2,B:3)")
    params = random_parameters(model, 0)
    p = observed_distribution(params)
    for a, b in itertools.product(range(2), range(3)):
        expected = sum(params.cpts["H"][h] * params.cpts["A"][h, a] * params.cpts["B"][h, b] for h in range(2))
        assert p[a, b] == pytest.approx(expected)
