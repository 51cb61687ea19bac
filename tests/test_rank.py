"""Tests of effdim.rank: de as the Jacobian rank (Kocka & Zhang 2002, Section 2.4)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from effdim import rank
from effdim.limits import SizeLimitError
from effdim.model import HLCModel
from effdim.paper import FIGURE2 as PAPER_FIGURE2
from effdim.paper import TABLE1 as PAPER_TABLE1
from effdim.rank import (
    FloatRank,
    P,
    RankResult,
    complete_dimension,
    effective_dimension,
    failure_probability,
    float_rank,
    jacobian,
    modular_rank,
    parameter_labels,
    standard_dimension,
)

FAST = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])

TABLE1 = {row.model: (row.de, row.ds) for row in PAPER_TABLE1}
FIGURE2 = PAPER_FIGURE2.model


# ------------------------------------------------------------------ helpers
@st.composite
def hlc_models(draw, max_hidden=4, hidden_cards=(1, 4), leaf_cards=(2, 4), max_leaves=3):
    """Random trees: hidden nodes joined at random, each with enough observed leaves."""
    n_hidden = draw(st.integers(1, max_hidden))
    hidden = [f"H{i + 1}" for i in range(n_hidden)]
    cards = {h: draw(st.integers(*hidden_cards)) for h in hidden}
    edges = [(hidden[draw(st.integers(0, i - 1))], hidden[i]) for i in range(1, n_hidden)]
    degree = {h: sum(h in e for e in edges) for h in hidden}
    n_obs = 0
    for h in hidden:
        for _ in range(max(0, 2 - degree[h]) + draw(st.integers(0, max_leaves - 1))):
            n_obs += 1
            cards[f"O{n_obs}"] = draw(st.integers(*leaf_cards))
            edges.append((h, f"O{n_obs}"))
    root = hidden[draw(st.integers(0, n_hidden - 1))]
    return HLCModel(cards, hidden, edges, root)


def joint_observed(model: HLCModel, theta: dict[str, np.ndarray]) -> np.ndarray:
    """P(O) by brute force over all configurations (tiny models only)."""
    nodes = model.nodes
    pos = {n: i for i, n in enumerate(nodes)}
    out = np.zeros([model.card(o) for o in model.observed])
    for config in itertools.product(*(range(model.card(n)) for n in nodes)):
        prob = 1.0
        for n in nodes:
            u = 0 if model.parent(n) is None else config[pos[model.parent(n)]]
            prob *= theta[n][u, config[pos[n]]]
        out[tuple(config[pos[o]] for o in model.observed)] += prob
    return out.ravel()


def numeric_jacobian(model: HLCModel, theta: dict[str, np.ndarray], h: float = 1e-6) -> np.ndarray:
    """Central differences in the free parameters (the last entry of a row absorbs the change)."""
    cols = []
    for node, u, x in parameter_labels(model):
        row = 0 if u is None else u
        plus = {k: v.copy() for k, v in theta.items()}
        minus = {k: v.copy() for k, v in theta.items()}
        plus[node][row, x] += h
        plus[node][row, -1] -= h
        minus[node][row, x] -= h
        minus[node][row, -1] += h
        cols.append((joint_observed(model, plus) - joint_observed(model, minus)) / (2 * h))
    return np.stack(cols, axis=1)


# ------------------------------------------------------------ dimensions
@pytest.mark.parametrize("spec", TABLE1)
def test_standard_dimension_table1(spec):
    assert standard_dimension(HLCModel.parse(spec)) == TABLE1[spec][1]


def test_parameter_labels_order():
    model = HLCModel.parse("2(3(2,2),2)")
    labels = parameter_labels(model)
    assert len(labels) == standard_dimension(model) == 1 + 2 * 2 + 3 * 1 * 2 + 2
    assert labels[:3] == [("H1", None, 0), ("H2", 0, 0), ("H2", 0, 1)]
    assert labels[3:5] == [("H2", 1, 0), ("H2", 1, 1)]
    nodes = [lab[0] for lab in labels]
    assert nodes == sorted(nodes, key=model.nodes.index)  # pre-order blocks


# ------------------------------------------------------ the paper's values
@pytest.mark.parametrize("spec", TABLE1)
def test_table1_de(spec):
    model = HLCModel.parse(spec)
    result = effective_dimension(model, seed=1)
    assert result.de == TABLE1[spec][0]
    assert result.float_rank == result.de
    assert result.status in ("proven", "probable")
    if result.de == min(standard_dimension(model), complete_dimension(model)):
        assert result.status == "proven" and result.failure_bound == 0.0


def test_figure2_hlc():
    model = HLCModel.parse(FIGURE2)
    assert standard_dimension(model) == 41
    result = effective_dimension(model, seed=0)
    assert result.de == 23 and result.float_rank == 23
    assert result.status == "probable" and 0 < result.failure_bound < 1e-10
    assert effective_dimension(model, upper_bound=23, seed=0).status == "proven"
    for seed, h in enumerate(model.hidden):
        assert modular_rank(model.rerooted(h), seed) == 23


@FAST
@given(r=st.integers(1, 5), a=st.integers(2, 6), b=st.integers(2, 6), seed=st.integers(0, 2**16))
def test_theorem1_two_observed(r, a, b, seed):
    """Settimi & Smith (1998): LC r:a,b has de = ds - r(r-1) if r <= min(a,b), else dc."""
    model = HLCModel.lc(r, [a, b])
    ds = standard_dimension(model)
    expected = ds - r * (r - 1) if r <= min(a, b) else a * b - 1
    assert effective_dimension(model, seed=seed, check_float=False).de == expected


@FAST
@given(model=hlc_models(max_hidden=5, hidden_cards=(2, 2), leaf_cards=(2, 2)), seed=st.integers(0, 2**16))
def test_theorem2_binary_trees(model, seed):
    """Settimi & Smith (1999): all-binary HLC, k hidden nodes with < 3 neighbours: de = ds - 2k."""
    k = sum(len(model.neighbors(h)) < 3 for h in model.hidden)
    assert effective_dimension(model, seed=seed, check_float=False).de == standard_dimension(model) - 2 * k


# ------------------------------------------------------- message passing
@pytest.mark.parametrize("spec", ["2(3(2,2),2)", "3(2,2(3,2))", "2:3,2,2", "3(1(2,3),2)"])
def test_float_jacobian_matches_finite_differences(spec):
    model = HLCModel.parse(spec)
    tree = rank._compile(model)
    field = rank._Reals()
    rng = np.random.default_rng(7)
    theta = rank._random_point(tree, field, rng)
    weights = rank._weights(tree, field, rng, "dense")
    jac, value = rank._jacobian_at(tree, field, theta, weights)
    np.testing.assert_allclose(value, joint_observed(model, theta), atol=1e-12)
    np.testing.assert_allclose(jac, numeric_jacobian(model, theta), atol=1e-8)


@pytest.mark.parametrize("spec", ["2(3(2,2),2)", "3(2,2(3,2))", "4:3,3,2"])
def test_sketch_rows_are_product_weighted_dense_rows(spec):
    """A sketched row is sum_o w(o) dP(o)/dtheta with w(o) = prod_i w_i(o_i)."""
    model = HLCModel.parse(spec)
    tree = rank._compile(model)
    field = rank._Reals()
    rng = np.random.default_rng(3)
    theta = rank._random_point(tree, field, rng)
    dense, _ = rank._jacobian_at(tree, field, theta, rank._weights(tree, field, rng, "dense"))
    w = rank._weights(tree, field, rng, "sketch")
    sketch, value = rank._jacobian_at(tree, field, theta, w)
    tensor = np.ones((sketch.shape[0], 1))
    for o in model.observed:  # C order, last observed fastest
        tensor = (tensor[:, :, None] * w[o][:, None, :]).reshape(sketch.shape[0], -1)
    np.testing.assert_allclose(sketch, tensor @ dense, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(value, tensor @ joint_observed(model, theta), rtol=1e-10)


@pytest.mark.parametrize("mode", ["dense", "sketch"])
@pytest.mark.parametrize("spec", ["2(3(2,2),2)", "3(2,2(3,2),1(2,2))", "5:3,3,2"])
def test_modular_jacobian_is_exact(spec, mode):
    """Mod-p message passing equals exact integer arithmetic reduced mod p."""
    model = HLCModel.parse(spec)
    tree = rank._compile(model)
    rng = np.random.default_rng(11)
    theta = {}
    for x in model.nodes:
        free = rng.integers(-3, 4, size=(tree.parent_card[x], model.card(x) - 1)).astype(float)
        theta[x] = np.concatenate([free, 1 - free.sum(axis=1, keepdims=True)], axis=1)
    weights = rank._weights(tree, rank._Reals(), rng, mode)
    if mode == "sketch":
        weights = {o: np.round(4 * w) for o, w in weights.items()}
    exact, value = rank._jacobian_at(tree, rank._Reals(), theta, weights)
    assert np.abs(exact).max() < 2**50  # float64 was exact
    field = rank._ModP(P)
    as_mod = lambda a: np.round(a).astype(np.int64) % P  # noqa: E731
    mod_jac, mod_value = rank._jacobian_at(
        tree, field, {k: as_mod(v) for k, v in theta.items()}, {k: as_mod(v) for k, v in weights.items()}
    )
    np.testing.assert_array_equal(mod_jac, as_mod(exact))
    np.testing.assert_array_equal(mod_value, as_mod(value))


# ------------------------------------------------------- agreement checks
@FAST
@given(model=hlc_models(max_hidden=3, max_leaves=2), seed=st.integers(0, 2**16))
def test_ranks_agree_dense_sketch_float_and_roots(model, seed):
    ds = standard_dimension(model)
    dense = modular_rank(model, seed, rows="dense")
    assert dense <= min(ds, complete_dimension(model))
    assert modular_rank(model, seed + 1, rows="sketch") == dense
    assert float_rank(model, seed, rows="dense").rank == dense
    for h in model.hidden:
        rerooted = model.rerooted(h)
        assert standard_dimension(rerooted) == ds
        assert modular_rank(rerooted, seed + 2) == dense


def test_large_observed_space_uses_sketch():
    model = HLCModel.lc(3, [2] * 20)  # 2**20 configurations
    assert rank._resolve_rows(rank._compile(model), "auto") == "sketch"
    result = effective_dimension(model, seed=0)
    assert result.de == standard_dimension(model) == 62
    assert result.status == "proven" and "70 sketched rows" in result.method
    with pytest.raises(SizeLimitError, match="1,048,576 x 62 matrix"):  # the dense rows: refused, not allocated
        jacobian(model, 0, rows="dense")


def test_modular_rank_small_prime_is_lower_bound():
    model = HLCModel.parse(FIGURE2)
    for seed in range(5):
        assert modular_rank(model, seed, prime=3) <= 23


# ------------------------------------------------------------- the result
def test_effective_dimension_result_fields():
    model = HLCModel.parse("3:2,2,2,2")  # de 13 < db 14 (the paper's exception)
    result = effective_dimension(model, upper_bound=14, repeats=3, seed=0)
    assert isinstance(result, RankResult)
    assert (result.de, result.status, result.repeats, result.ranks) == (13, "probable", 3, (13, 13, 13))
    assert result.failure_bound == pytest.approx(failure_probability(model, repeats=3, rank_bound=14))
    assert result.method == f"modular rank, p={P}, 16 dense rows"
    assert result.float_rank == 13 and result.singular_gap > 1e6
    proven = effective_dimension(model, upper_bound=13, seed=0)
    assert (proven.status, proven.repeats, proven.failure_bound) == ("proven", 1, 0.0)
    assert effective_dimension(model, seed=0, check_float=False).float_rank is None


def test_failure_probability_degree():
    model = HLCModel.parse("2:2,2")  # 3 nodes: entries of J have degree 2; rank <= dc = 3
    assert failure_probability(model, rows="dense") == pytest.approx(3 * 2 / P)
    assert failure_probability(model, rows="sketch") == pytest.approx(3 * 4 / P)  # + 2 weights
    assert failure_probability(model, rows="dense", repeats=2) == pytest.approx((6 / P) ** 2)
    assert failure_probability(model, rows="dense", prime=3) == 1.0


def test_wrong_upper_bound_raises():
    with pytest.raises(ValueError, match="upper bound is wrong"):
        effective_dimension(HLCModel.parse("2:2,2,2"), upper_bound=6, seed=0)


def test_screening_prime(monkeypatch):
    monkeypatch.setattr(rank, "SCREEN_MIN_SIZE", 1)
    model = HLCModel.parse("2:2,2,2,2")
    proven = effective_dimension(model, seed=0)
    assert proven.status == "proven" and proven.method.startswith(f"modular rank, p={rank.SCREEN_PRIME},")
    probable = effective_dimension(HLCModel.parse("3:2,2,2,2"), seed=0, repeats=2)
    assert probable.repeats == 3 and f"p={P} after screening at p={rank.SCREEN_PRIME}" in probable.method


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"rows": "all"}, "rows must be"),
        ({"prime": 4}, "not prime"),
        ({"prime": 2**31 + 11}, "2\\*\\*31"),
        ({"repeats": 0}, "repeats"),
        ({"upper_bound": -1}, "upper_bound"),
    ],
)
def test_invalid_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        effective_dimension(HLCModel.parse("2:2,2"), **kwargs)


def test_one_state_hidden_nodes():
    """A one-state hidden node makes its neighbours independent; its CPT rows have no free entry."""
    assert effective_dimension(HLCModel.parse("1:2,3"), seed=0).de == 3
    model = HLCModel.parse("3(1(4,3,2),3,4)")
    # O1,O2,O3 independent (3+2+1), plus LC 3:3,4 over the rest (dc = 11); H2's CPT is inert.
    result = effective_dimension(model, seed=0)
    assert result.de == 17 and result.float_rank == 17


def test_float_rank_fields():
    fr = float_rank(HLCModel.parse("2:2,2,2"), 0)
    assert isinstance(fr, FloatRank)
    assert fr.rank == 7 and math.isinf(fr.gap) and fr.singular_values.shape == (7,)
    fr = float_rank(HLCModel.parse("3:2,2,2"), 0)
    assert fr.rank == 7 and fr.gap > 1e8 and fr.tolerance > 0
