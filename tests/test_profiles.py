"""Readable parameters, class order and posterior membership (effdim.profiles)."""

import io
import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from effdim import datasets, fit
from effdim.distribution import Parameters, observed_distribution, random_parameters
from effdim.learner import LatentTreeLearner
from effdim.model import HLCModel
from effdim.reading import load_csv
from effdim.scores import score_fit


def brute_posterior(params: Parameters, row: dict, node: str) -> np.ndarray:
    """P(node | observed answers in ``row``) by enumerating every hidden configuration."""
    model = params.model
    hidden = model.hidden
    post = np.zeros(model.card(node))
    for config in itertools.product(*[range(model.card(h)) for h in hidden]):
        value = dict(zip(hidden, config))
        p = 1.0
        for x in model.nodes:
            parent = model.parent(x)
            if not model.is_hidden(x):
                if row.get(x) is None:
                    continue  # missing: summed out
                p *= params.cpts[x][value[parent], row[x]]
            elif parent is None:
                p *= params.cpts[x][value[x]]
            else:
                p *= params.cpts[x][value[parent], value[x]]
        post[value[node]] += p
    return post / post.sum()


def test_posteriors_match_brute_force_on_a_small_tree_in_input_order():
    text = "A,B,C,D\nx,1,u,0\ny,2,v,1\nx,,v,1\ny,1,u,\nx,2,u,1\nx,1,u,0\ny,2,v,0\n"
    data = load_csv(io.BytesIO(text.encode()))
    model = HLCModel.parse("R:2(A:2,B:2,S:3(C:2,D:2))")
    result = fit(data, model, restarts=2, seed=0, warn=False)
    table = result.posteriors()
    assert len(table) == 7  # one row per input row, in input order
    assert table["A"].tolist() == ["x", "y", "x", "y", "x", "x", "y"]
    assert table["B"].isna().tolist() == [False, False, True, False, False, False, False]
    codes = {"A": {"x": 0, "y": 1}, "B": {1: 0, 2: 1}, "C": {"u": 0, "v": 1}, "D": {0: 0, 1: 1}}
    for _i, r in table.iterrows():
        row = {leaf: None if r[leaf] is None or r[leaf] != r[leaf] else codes[leaf][r[leaf]] for leaf in "ABCD"}
        for node in ("R", "S"):
            cols = [f"P({node}={h + 1})" for h in range(model.card(node))]
            got = r[cols].to_numpy(dtype=float)
            assert got.sum() == pytest.approx(1.0)
            np.testing.assert_allclose(got, brute_posterior(result.params, row, node), rtol=1e-9, atol=1e-12)
            assert r[node] == int(np.argmax(got)) + 1


def test_count_data_give_one_posterior_row_per_pattern_with_its_count(stouffer_toby_fit):
    table = stouffer_toby_fit.posteriors()
    assert len(table) == 16 and table["count"].sum() == 216
    assert set(table["A"]) == {"+", "-"}


def test_tables_use_column_names_and_labels_and_classes_come_largest_first():
    data = datasets.load("stouffer-toby")
    result = fit(data, "3:2,2,2,2", restarts=5, seed=0, warn=False)
    shares = result.class_shares()["share"].to_numpy()
    assert np.all(np.diff(shares) <= 0)
    params = result.parameter_table()
    leaf_rows = params[params["node"] == "A"]
    assert set(leaf_rows["state"]) == {"+", "-"} and set(leaf_rows["parent_state"]) == {1, 2, 3}
    prof = result.profiles()
    for (_cls, _item), group in prof.groupby(["class", "item"]):
        assert group["probability"].sum() == pytest.approx(1.0)
    as_json = result.parameters_json()
    assert set(as_json["tables"]) == {"H1", "A", "B", "C", "D"}
    assert as_json["tables"]["A"]["rows"]["2"]["+"] == pytest.approx(
        float(result.params.cpts["O1"][1, data.states[0].index("+")])
    )
    # reordering the classes moves every table with them and keeps the distribution
    moved = result.relabeled("H1", [2, 0, 1])
    assert moved.class_shares()["share"].tolist() == [shares[2], shares[0], shares[1]]
    np.testing.assert_allclose(observed_distribution(moved.params), observed_distribution(result.params))
    assert score_fit(moved.em).cs == pytest.approx(result.scores.cs, abs=1e-9)
    assert moved.fit_statistics().g2 == pytest.approx(result.fit_statistics().g2)


def test_profiles_of_a_deeper_hidden_node_reach_every_item():
    model = HLCModel.parse("R:2(A:2,S:3(B:2,C:2),D:2)")
    params = random_parameters(model, 1)
    from effdim.profiles import Labels, profiles

    prof = profiles(params, Labels.of(model), "S")
    assert set(prof["item"]) == {"A", "B", "C", "D"}
    # P(A | S) by Bayes through R
    joint = params.marginals()["R"][:, None] * params.cpts["S"]  # P(R, S)
    p_a_given_s = (joint / joint.sum(0)).T @ params.cpts["A"]
    got = prof[(prof["item"] == "A")].pivot(index="class", columns="category", values="probability").to_numpy()
    np.testing.assert_allclose(got, p_a_given_s, rtol=1e-9)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), perm=st.permutations([0, 1, 2]))
def test_relabeling_hidden_states_keeps_the_distribution(seed, perm):
    model = HLCModel.parse("X:3(A:2,H:3(B:2,C:3),D:2)")
    params = random_parameters(model, seed)
    for node in ("X", "H"):
        moved = params.relabeled(node, perm)
        np.testing.assert_allclose(observed_distribution(moved), observed_distribution(params), atol=1e-12)
        assert np.allclose(moved.marginals()[node], params.marginals()[node][list(perm)])
    ordered = params
    for node, order in params.size_order().items():
        ordered = ordered.relabeled(node, order)
    for node in ("X", "H"):
        assert np.all(np.diff(ordered.marginals()[node]) <= 1e-15)


def test_learner_predicts_any_hidden_node_and_reorders():
    data = datasets.load("stouffer-toby")
    learner = LatentTreeLearner("3:2,2,2,2", restarts=5, seed=0).fit(data)
    frame = data.to_frame().drop(columns="count")
    proba = learner.predict_proba(frame)
    assert proba.shape == (16, 3) and np.allclose(proba.sum(axis=1), 1.0)
    assert learner.fit_statistics().df == 2
    before = proba.copy()
    learner.reorder("H1", [1, 2, 0])
    np.testing.assert_allclose(learner.predict_proba(frame), before[:, [1, 2, 0]], rtol=1e-9)
    assert learner.predict(frame).tolist() == np.argmax(before[:, [1, 2, 0]], axis=1).tolist()
    assert learner.profiles()["class"].max() == 3


def test_a_hidden_node_named_like_a_data_column_does_not_overwrite_it():
    data = datasets.load("stouffer-toby")
    result = fit(data, "A:2(O1:2,O2:2,O3:2,O4:2)", restarts=2, seed=0, warn=False)  # leaves by position
    table = result.posteriors()
    assert list(table.columns[:4]) == ["A", "B", "C", "D"] and set(table["A"]) == {"+", "-"}
    assert set(table["A (hidden)"]) <= {1, 2} and "P(A (hidden)=1)" in table
    assert set(result.parameters_json()["tables"]) == {"A", "B", "C", "D", "A (hidden)"}
