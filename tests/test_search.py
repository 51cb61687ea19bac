"""Cardinality sweeps, hill climbing (Sections 5-6) and the scikit-learn style learner."""

from __future__ import annotations

import json
import threading

import numpy as np
import pandas as pd
import pytest

from effdim import FitResult, HillClimb, hill_climb, lc_model_for, sweep
from effdim.data import DataError, from_patterns
from effdim.distribution import random_parameters, sample
from effdim.learner import LatentTreeLearner, NotFittedError
from effdim.model import HLCModel
from effdim.regularity import is_regular, largest_regular_card
from effdim.scores import SCORES
from effdim.search import Cancelled, start_model

KEYS = {"loglik", "bic", "bic_plus", "cs", "cs_plus", "aic", "ds", "de", "n"}


@pytest.fixture(scope="module")
def fig2_data():
    model = HLCModel.parse("5(3(2,2),2,3(2,2))")
    return sample(random_parameters(model, 21), 3000, 22)


def test_start_model_is_binary_and_regular():
    """One start for hill_climb and the Section 6 experiments: binary, lowered where regularity needs it."""
    fig2 = HLCModel.parse("5(3(2,2),2,3(2,2))")
    assert str(start_model(fig2)) == "2(2(2,2),2,2(2,2))"
    assert str(start_model(fig2, {"H1": 9, "H2": 3})) == "4(3(2,2),2,2(2,2))"
    chain = HLCModel.parse("3(2(2,2),2(2,2))")  # H1 has two hidden neighbours: at most 1
    assert str(start_model(chain)) == "1(2(2,2),2(2,2))"
    with pytest.raises(ValueError, match="'O1', which is not a hidden node"):
        start_model(fig2, {"O1": 2})


def test_lc_sweep_can_cover_every_regular_cardinality(stouffer_toby):
    done = []
    progress = lambda d, t: done.append((d, t))  # noqa: E731
    results = sweep(stouffer_toby, max_card=99, until_saturated=False, restarts=3, seed=0, progress=progress)
    assert [r.card for r in results] == list(range(1, 9))
    assert done[0] == (0, 8) and done[-1] == (8, 8)
    for r in results:
        assert isinstance(r, FitResult)
        assert r.model.card(r.model.root) == r.card
        assert r.n == 216
        payload = r.to_json()
        assert KEYS <= set(payload) and payload["card"] == r.card
        json.dumps(payload)
    assert results[0].ds == results[0].de == 4
    # more classes never fit worse by much (EM restarts are not exhaustive)
    ll = [r.loglik for r in results]
    assert all(b >= a - 0.5 for a, b in zip(ll, ll[1:]))
    # |X| >= 3 saturates 4 binary items (de = dc = 15): the same best fit
    assert results[-1].de == 15


def test_sweep_until_saturated_stops_at_the_first_model_with_de_equal_to_dc(stouffer_toby):
    done = []
    results = sweep(stouffer_toby, restarts=2, seed=0, until_saturated=True, progress=lambda d, t: done.append((d, t)))
    assert [r.card for r in results] == [1, 2, 3, 4]  # |X| = 4 first saturates 4 binary items: de = dc = 15
    assert results[-1].de == 15 and results[-2].de < 15
    assert done[0] == (0, 8) and done[-1] == (4, 4)  # the bar ends full where the sweep ends
    unsaturated = sweep(stouffer_toby, cards=[1, 2], restarts=2, seed=0, until_saturated=True)
    assert [r.card for r in unsaturated] == [1, 2]  # none saturated: every card of the range
    assert [r.to_json() for r in results] == [
        r.to_json() for r in sweep(stouffer_toby, cards=[1, 2, 3, 4], restarts=2, seed=0)
    ]


def test_sweep_of_an_lc_model_and_max_card(stouffer_toby):
    model = HLCModel.parse("X:2:A:2,B:2,C:2,D:2")
    results = sweep(stouffer_toby, model, max_card=3, restarts=2, seed=1)
    assert [r.card for r in results] == [1, 2, 3]
    assert all(r.model.observed == ["A", "B", "C", "D"] for r in results)


def test_sweep_one_node_of_an_hlc_model(fig2_data):
    model = HLCModel.parse("5(3(2,2),2,3(2,2))")
    results = sweep(fig2_data, model, node="H2", cards=range(2, 5), restarts=2, seed=3, max_iter=200)
    assert [r.card for r in results] == [2, 3, 4]
    for r in results:
        assert r.model.card("H1") == 5 and r.model.card("H3") == 3
    with pytest.raises(ValueError, match="not a hidden node"):
        sweep(fig2_data, model, node="O1")


def test_hill_climb_follows_section_6(fig2_data):
    model = HLCModel.parse("5(3(2,2),2,3(2,2))")
    seen = []
    climb = hill_climb(
        fig2_data, model, "bic", restarts=2, seed=4, max_iter=300, progress=lambda d, t: seen.append((d, t))
    )
    assert isinstance(climb, HillClimb)
    first = climb.path[0].model
    assert all(first.card(h) == 2 for h in model.hidden)
    for a, b in zip(climb.path, climb.path[1:]):
        diff = [h for h in model.hidden if a.model.card(h) != b.model.card(h)]
        assert len(diff) == 1 and b.model.card(diff[0]) == a.model.card(diff[0]) + 1
        assert b.scores.bic > a.scores.bic
    assert climb.best is climb.path[-1]
    assert all(is_regular(f.model) for f in climb.tried)
    # stopped because no single increase raised the score
    best = climb.best.model
    room = [h for h in model.hidden if best.card(h) < largest_regular_card(best, h)]
    final_step = climb.tried[len(climb.tried) - len(room) :]
    assert {f.model for f in final_step} == {best.with_card(h, best.card(h) + 1) for h in room}
    assert all(f.scores.bic <= climb.best.scores.bic + 1e-6 * f.n for f in final_step)
    assert seen[-1][0] == seen[-1][1] == len(climb.tried)
    json.dumps(climb.to_json())


def test_hill_climb_rejects_unknown_score(fig2_data):
    with pytest.raises(ValueError, match="unknown score"):
        hill_climb(fig2_data, HLCModel.parse("2(2(2,2),2,2(2,2))"), "hqic")


def test_cancel_between_fits(stouffer_toby):
    event = threading.Event()

    def progress(done, total):
        if done == 2:
            event.set()

    with pytest.raises(Cancelled):
        sweep(stouffer_toby, restarts=2, seed=0, progress=progress, cancel=event)


def test_lc_model_for_names():
    data = from_patterns([[0, 1], [1, 0]], columns=["item one", "item two"])
    model = lc_model_for(data)
    assert model.observed == ["O1", "O2"]
    data = from_patterns([[0, 1], [1, 0]], columns=["X", "H"])
    model = lc_model_for(data, 3)
    assert model.observed == ["X", "H"] and model.card(model.root) == 3 and model.root not in ("X", "H")


def test_fit_result_scores(stouffer_toby_fit):
    r = stouffer_toby_fit
    assert r.card is None and r.ds == 9 and r.de == 9
    assert r.score("bic+") == r.scores.bic_plus == r.to_json()["bic_plus"]
    assert r.params is not None
    assert r.restarts["restarts"] == 5


# ----------------------------------------------------------------------- learner
def frame(data, labels=("no", "yes")):
    rows = np.repeat(data.patterns, data.counts.astype(int), axis=0)
    return pd.DataFrame({c: [labels[v] for v in rows[:, j]] for j, c in enumerate(data.columns)})


def test_learner_fit_returns_self_with_learned_attributes():
    model = HLCModel.parse("2:2,2,2,2")
    data = sample(random_parameters(model, 5), 2000, 6)
    learner = LatentTreeLearner("2:2,2,2,2", restarts=3, seed=0)
    with pytest.raises(NotFittedError):
        learner.predict_proba(data)
    assert learner.fit(data) is learner
    assert learner.loglik_ == pytest.approx(learner.scores_["loglik"])
    assert set(learner.scores_) == {"loglik", *(c.key for c in SCORES.values() if not c.chain)}
    assert (learner.ds_, learner.de_) == (9, 9)
    assert len(learner.restarts_) == 3
    assert learner.degenerate_ == ()
    assert learner.get_params()["restarts"] == 3
    assert "LatentTreeLearner" in repr(learner)


def test_learner_on_a_dataframe_predicts_per_row():
    model = HLCModel.parse("2:2,2,2,2")
    data = sample(random_parameters(model, 1), 1000, 2)
    df = frame(data)
    df.columns = ["a", "b", "c", "d"]
    learner = LatentTreeLearner("X:2:a:2,b:2,c:2,d:2", restarts=2, seed=1).fit(df)
    proba = learner.predict_proba(df)
    assert proba.shape == (1000, 2)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    # rows with equal values get equal posteriors; reordered columns change nothing
    shuffled = df[["d", "b", "a", "c"]]
    np.testing.assert_allclose(learner.predict_proba(shuffled), proba)
    assert learner.score(df) == pytest.approx(learner.loglik_ / 1000)
    assert learner.predict(df).shape == (1000,)
    # a missing cell is marginalised; an unseen value is named
    few = df.head(3).copy()
    few.iloc[0, 0] = None
    out = learner.predict_proba(few)
    assert np.all(np.isfinite(out))
    assert learner.score_samples(few)[0] > learner.score_samples(df.head(1))[0]
    bad = df.head(2).copy()
    bad.iloc[0, 1] = "maybe"
    with pytest.raises(DataError, match="'maybe'"):
        learner.predict_proba(bad)


def test_learner_posterior_of_an_inner_node(fig2_data):
    learner = LatentTreeLearner("5(3(2,2),2,3(2,2))", restarts=2, seed=0, max_iter=100).fit(fig2_data)
    post = learner.predict_proba(fig2_data, node="H3")
    assert post.shape == (fig2_data.n_patterns, 3)
    np.testing.assert_allclose(post.sum(axis=1), 1.0)
    with pytest.raises(ValueError, match="not a hidden node"):
        learner.predict_proba(fig2_data, node="O2")


def test_learner_map_option(stouffer_toby):
    learner = LatentTreeLearner("3:2,2,2,2", restarts=3, seed=0, prior=1.0).fit(stouffer_toby)
    for table in learner.params_.cpts.values():
        assert np.all(table > 0)


# --------------------------------------------------------------------------- CLI


def test_cli_fit_sweep_search_json(cli):
    code, out, _ = cli("fit", "stouffer-toby", "--model", "2:2,2,2,2", "--seed", "0", "--json")
    assert code == 0 and KEYS <= set(json.loads(out))
    code, out, err = cli("sweep", "stouffer-toby", "--max-card", "3", "--seed", "0", "--restarts", "2", "--json")
    rows = json.loads(out)
    assert code == 0 and [r["card"] for r in rows] == [1, 2, 3] and all(KEYS <= set(r) for r in rows)
    assert err == ""  # no progress bar with --json
    code, out, err = cli(
        "search",
        "stouffer-toby",
        "--model",
        "2:2,2,2,2",
        "--score",
        "bic+",
        "--seed",
        "0",
        "--restarts",
        "2",
    )
    assert code == 0 and "best:" in out and err == ""  # a progress bar on a terminal only (test_cli_robustness.py)


def test_cli_bad_input_exits_2_with_one_line(cli):
    code, _, err = cli("sweep", "stouffer-toby", "--node", "Q", "--quiet")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "'Q'" in err
    code, _, err = cli("fit", "stouffer-toby", "--model", "2:2,2,2")
    assert code == 2 and len(err.strip().splitlines()) == 1


def test_pick_caveats_name_the_top_of_the_range_and_saturated_models():
    from types import SimpleNamespace

    from effdim.scores import model_dimensions
    from effdim.search import pick_caveats

    def fake(k):
        m = HLCModel.parse(f"{k}:2,2,2,2")
        return SimpleNamespace(model=m, card=k, de=model_dimensions(m)[1])

    sweep_1_3 = [fake(k) for k in (1, 2, 3)]
    assert pick_caveats(sweep_1_3[2], sweep_1_3) == ["top of the swept range"]
    assert pick_caveats(sweep_1_3[1], sweep_1_3) == []
    sweep_1_8 = [fake(k) for k in range(1, 9)]
    assert pick_caveats(sweep_1_8[7], sweep_1_8) == ["largest regular cardinality", "saturated (de = dc = 15)"]
    assert pick_caveats(sweep_1_8[4], sweep_1_8) == ["saturated (de = dc = 15)"]
    # a sweep stopped where the model saturates (until_saturated): nothing beyond its top can score higher
    sweep_1_4 = sweep_1_8[:4]  # 4:2,2,2,2 is the first saturated one
    assert pick_caveats(sweep_1_4[3], sweep_1_4) == ["saturated (de = dc = 15)"]
    # a climb's pick: no range, but the search space may have ended
    assert pick_caveats(fake(8)) == ["every hidden node at its regular maximum", "saturated (de = dc = 15)"]
    assert pick_caveats(fake(2)) == []
