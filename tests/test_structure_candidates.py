"""How the structure search scores a candidate move: de updated locally (Corollary 4.1), local EM on the changed
families (the restricted likelihood), the exact starts, mutual information.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import regular_hlc_models

from effdim.data import from_patterns
from effdim.dimensions import dimensions
from effdim.distribution import Parameters, random_parameters, sample
from effdim.em import loglikelihood
from effdim.notation import parse_model
from effdim.structure import (
    LocalDe,
    candidate_moves,
    candidate_starts,
    mutual_information,
    transfer_parameters,
)


@settings(max_examples=12, deadline=None)
@given(regular_hlc_models(max_hidden=3, max_card=3), st.integers(0, 2**16))
def test_local_de_agrees_with_the_whole_tree_for_every_candidate(model, seed):
    leaves = model.observed
    mi = np.random.default_rng(seed).random((len(leaves), len(leaves)))
    mi = mi + mi.T
    local = LocalDe(model)
    assert local.update(model)[1] == dimensions(model).de
    for move in candidate_moves(model, mi, {o: i for i, o in enumerate(leaves)}):
        assert local.dims(move.model)[1] == dimensions(move.model).de, move.text


@settings(max_examples=20, deadline=None)
@given(regular_hlc_models(max_hidden=3, max_card=3), st.integers(0, 2**16))
def test_node_and_state_introduction_start_at_the_current_distribution(model, seed):
    rng = np.random.default_rng(seed)
    params = random_parameters(model, rng)
    data = sample(params, 300, rng)
    leaves = model.observed
    mi = np.zeros((len(leaves), len(leaves)))
    before = loglikelihood(params, data)
    for move in candidate_moves(model, mi, {o: i for i, o in enumerate(leaves)}, operators=("NI", "SI")):
        new = [h for h in move.model.hidden if h not in model.hidden]
        if new and move.model.card(new[0]) != move.model.card(move.model.parent(new[0])):
            continue  # an NI with fewer states than its parent: not a copy of the current model
        warm = transfer_parameters(params, move.model)
        assert loglikelihood(warm, data) == pytest.approx(before, abs=1e-6), move.text


@settings(max_examples=15, deadline=None)
@given(regular_hlc_models(max_hidden=3, max_card=3), st.integers(0, 2**16))
def test_local_fit_is_the_restricted_likelihood_of_the_whole_tree(model, seed):
    from effdim.structure import local_fit

    rng = np.random.default_rng(seed)
    params = random_parameters(model, rng)
    data = sample(params, 200, rng)
    mi = rng.random((len(model.observed),) * 2)
    for move in candidate_moves(model, mi + mi.T, {o: i for i, o in enumerate(model.observed)}):
        fitted = local_fit(data, move, params, seed=0, max_iter=5)
        warm = candidate_starts(params, move)[0]  # the exact start (for a merge, from the pair's joint)
        for node in move.model.nodes:  # only the changed families moved
            if node not in move.free:
                assert np.allclose(fitted.params.cpts[node], warm.cpts[node]), (move.text, node)
        assert fitted.loglik == pytest.approx(loglikelihood(fitted.params, data), abs=1e-6)
        assert fitted.loglik >= loglikelihood(warm, data) - 1e-6, move.text  # EM from the exact start


@settings(max_examples=10, deadline=None)
@given(regular_hlc_models(max_hidden=3, max_card=3), st.integers(0, 2**16))
def test_candidates_sharing_one_step_messages_fit_as_if_alone(model, seed):
    """The evidence of the children outside a region is computed once per step and shared: each candidate's
    local fit is exactly the one it gets with messages of its own."""
    from effdim.structure import Messages, local_fit

    rng = np.random.default_rng(seed)
    params = random_parameters(model, rng)
    data = sample(params, 200, rng)
    mi = rng.random((len(model.observed),) * 2)
    shared = Messages(params, data)
    for move in candidate_moves(model, mi + mi.T, {o: i for i, o in enumerate(model.observed)}):
        together = local_fit(data, move, params, seed=0, max_iter=8, messages=shared)
        alone = local_fit(data, move, params, seed=0, max_iter=8, messages=Messages(params, data))
        assert together.loglik == alone.loglik, move.text
        for node in move.model.nodes:
            assert np.array_equal(together.params.cpts[node], alone.params.cpts[node]), (move.text, node)


def test_state_deletion_of_the_only_state_a_row_uses_gives_valid_parameters():
    model = parse_model("H1:2(A:2,B:2,H2:3(C:2,D:2,E:2))")
    params = random_parameters(model, np.random.default_rng(0))
    params = Parameters(
        model, {**params.cpts, "H1": np.array([0.05, 0.95]), "H2": np.array([[0.0, 0.0, 1.0], [0.5, 0.5, 0.0]])}
    )  # H2's state 2: least used
    smaller = transfer_parameters(params, model.with_card("H2", 2))  # drops state 2, all of row 0's mass
    assert np.allclose(smaller.cpts["H2"], [[0.5, 0.5], [0.5, 0.5]])


def test_node_split_of_a_node_with_states_of_probability_zero_gives_valid_parameters():
    """EM can leave states without mass; a node split whose new state has only such states gave its children
    rows of zeros, and the search stopped with "rows must sum to 1" (the study's 100k replicate 1)."""
    from effdim.structure.local_em import split_parameters

    model = parse_model("H1:4(A:3,B:3,C:3,D:3,E:3,F:3)")
    params = random_parameters(model, np.random.default_rng(0))
    params = Parameters(model, {**params.cpts, "H1": np.array([0.0, 0.0, 0.6, 0.4])})
    split = split_parameters(params, parse_model("H1:3(A:3,B:3,C:3,H2:3(D:3,E:3,F:3))"), "H1", "H2")
    assert all(np.allclose(table.sum(axis=-1), 1.0) for table in split.cpts.values())
    assert np.allclose(split.marginals()["H1"], [0.0, 0.6, 0.4])  # the states with mass as they were


def test_mutual_information_of_independent_and_copied_columns():
    rng = np.random.default_rng(0)
    a = rng.integers(0, 2, 4000)
    data = from_patterns(np.stack([a, a, rng.integers(0, 2, 4000)], axis=1), columns=["A", "B", "C"])
    mi = mutual_information(data)
    assert mi[0, 1] == pytest.approx(np.log(2), abs=0.01)
    assert mi[0, 2] < 0.01 and mi[0, 0] == 0
