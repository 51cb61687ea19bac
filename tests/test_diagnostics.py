"""Fit statistics, bivariate residuals, identification at the estimate (effdim.diagnostics)."""

import io
import itertools
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from strategies import hlc_models

from effdim import datasets, fit
from effdim.data import check_matches_model, from_patterns
from effdim.diagnostics import bivariate_residuals, fit_statistics, identification, relax_pair
from effdim.distribution import Parameters, observed_distribution, random_parameters, sample
from effdim.em import ConvergenceWarning
from effdim.model import HLCModel, ModelError
from effdim.profiles import Labels
from effdim.reading import load_csv


def test_g2_x2_df_by_hand_on_a_two_way_table():
    # one class over two items = independence: expected counts are row * column / N, df = (3-1)(2-1) = 2
    table = np.array([[30, 10], [5, 15], [0, 20]])
    codes = [(i, j) for i in range(3) for j in range(2) for _ in range(table[i, j])]
    data = from_patterns(np.array(codes), columns=["O1", "O2"], cardinalities=[3, 2])
    result = fit(data, "1:3,2", restarts=1, seed=0)
    s = result.fit_statistics()
    expected = table.sum(1, keepdims=True) * table.sum(0, keepdims=True) / table.sum()
    seen = table > 0
    g2 = 2 * np.sum(table[seen] * np.log(table[seen] / expected[seen]))
    x2 = np.sum((table - expected) ** 2 / expected)  # the empty cell counts in X2
    assert s.g2 == pytest.approx(g2, rel=1e-6)
    assert s.x2 == pytest.approx(x2, rel=1e-6)
    assert s.x2 == pytest.approx(stats.chi2_contingency(table, correction=False)[0], rel=1e-6)
    assert (s.df, s.df_standard, s.cells) == (2, 2, 6)
    assert s.p_g2 == pytest.approx(stats.chi2.sf(g2, 2), rel=1e-5)
    assert s.entropy_r2 is None and s.avepp == [1.0]


# Published log-likelihoods of the Stouffer-Toby data ("values" in poLCA; Goodman 1974):
# poLCA documentation, https://rdocumentation.org/packages/poLCA/versions/1.3.1/topics/values
# M0 (1 class) -543.6498, M1 (2 classes) -504.4677, M2 (3 classes) -503.3011.
# poLCA reports 14 parameters and 1 residual df for 3 classes; with de = 13 the df is 15 - 13 = 2.
@pytest.mark.parametrize(
    "k, loglik, df, df_standard", [(1, -543.6498, 11, 11), (2, -504.4677, 6, 6), (3, -503.3011, 2, 1)]
)
def test_stouffer_toby_against_published_values(k, loglik, df, df_standard):
    data = datasets.load("stouffer-toby")
    result = fit(data, f"{k}:2,2,2,2", restarts=20, seed=3, warn=False)
    assert result.loglik == pytest.approx(loglik, abs=2e-3)
    n = data.counts
    saturated = float(np.sum(n * np.log(n / n.sum())))  # all 16 patterns occur
    s = result.fit_statistics()
    assert s.g2 == pytest.approx(2 * (saturated - result.loglik), rel=1e-9)
    assert (s.df, s.df_standard) == (df, df_standard)
    assert (s.df_sentence() is None) == (df == df_standard)
    cells = result.pattern_table()
    assert len(cells) == 16 and cells["observed"].sum() == 216
    assert 2 * np.sum(cells["observed"] * np.log(cells["observed"] / cells["expected"])) == pytest.approx(s.g2)
    assert np.all(np.diff(cells["residual"].abs()) <= 0) and set(cells["A"]) == {"+", "-"}
    if k == 2:
        assert s.g2 == pytest.approx(2.72, abs=0.01)  # implied by poLCA's published -504.4677: 2.72 on 6 df
        assert 0.0 < s.entropy_r2 < 1.0 and all(0.5 < v <= 1.0 for v in s.avepp)


def test_missing_cells_use_complete_rows_for_g2_and_all_rows_for_the_posteriors():
    text = "A,B,C\n1,1,1\n1,1,1\n1,2,2\n2,2,2\n2,2,1\n2,,2\n1,2,\n2,1,1\n"
    data = load_csv(io.BytesIO(text.encode()))
    result = fit(data, "1:2,2,2", restarts=1, seed=0, warn=False)
    s = result.fit_statistics()
    assert s.n_used == 6
    assert any("complete rows" in note for note in s.notes)
    # by hand: the complete rows against 6 * P(o) of the fitted independence model
    complete = result.data.patterns[(result.data.patterns >= 0).all(axis=1)]
    counts = result.data.counts[(result.data.patterns >= 0).all(axis=1)]
    p = observed_distribution(result.params)
    m = 6 * np.array([p[tuple(r)] for r in complete])
    assert s.g2 == pytest.approx(2 * np.sum(counts * np.log(counts / m)), rel=1e-9)
    assert len(result.posteriors()) == 8
    # no complete row at all: no G2, said plainly, and valid JSON
    holes = load_csv(io.BytesIO(b"A,B\n1,\n,2\n2,\n,1\n"))
    empty = fit(holes, "1:2,2", restarts=1, seed=0, warn=False).fit_statistics()
    assert empty.n_used == 0 and empty.to_json()["g2"] is None and empty.p_g2 is None
    assert any("no row is complete" in note for note in empty.notes)


def test_bivariate_residuals_by_hand():
    model = HLCModel.parse("X:2(A:2,B:3,C:2)")
    params = random_parameters(model, 4)
    data = sample(params, 300, 5)
    arranged = check_matches_model(data, model)
    bvr = bivariate_residuals(params, arranged)
    joint = observed_distribution(params)  # axes A, B, C
    rows = np.repeat(arranged.patterns, arranged.counts.astype(int), axis=0)
    for (i, a), (j, b) in itertools.combinations(enumerate("ABC"), 2):
        observed = np.zeros((model.card(a), model.card(b)))
        for r in rows:
            observed[r[i], r[j]] += 1
        other = tuple(k for k in range(3) if k not in (i, j))
        expected = 300 * joint.sum(axis=other)
        x2 = np.sum((observed - expected) ** 2 / expected)
        assert bvr.loc[a, b] == pytest.approx(x2 / ((model.card(a) - 1) * (model.card(b) - 1)), rel=1e-9)
        assert bvr.loc[b, a] == bvr.loc[a, b]
    assert np.isnan(bvr.loc["A", "A"])


def test_bvr_flags_a_planted_local_dependence_and_the_move_relaxes_it():
    # C and D copy a second hidden variable the one-class-variable model does not have
    truth = HLCModel.parse("X:2(A:2,B:2,H:2(C:2,D:2),E:2,F:2)")
    strong = [[0.9, 0.1], [0.1, 0.9]]
    cpts = {
        "X": [0.5, 0.5],
        "A": strong,
        "B": strong,
        "E": strong,
        "F": strong,
        "H": [[0.6, 0.4], [0.4, 0.6]],
        "C": [[0.85, 0.15], [0.15, 0.85]],
        "D": [[0.85, 0.15], [0.15, 0.85]],
    }
    data = sample(Parameters(truth, cpts), 2000, 1)
    lc = HLCModel.parse("X:2(A:2,B:2,C:2,D:2,E:2,F:2)")
    result = fit(data, lc, restarts=5, seed=0, warn=False)
    bvr = result.bivariate_residuals()
    values = bvr.where(~np.eye(6, dtype=bool)).stack()
    assert values.idxmax() in (("C", "D"), ("D", "C")) and values.max() > 10
    moved = relax_pair(lc, "C", "D")
    assert moved.is_hidden("H1") and sorted(moved.children("H1")) == ["C", "D"] and moved.parent("H1") == "X"
    better = fit(data, moved, restarts=5, seed=0, warn=False)
    assert better.bivariate_residuals().loc["C", "D"] < 1.5


def test_relax_pair_rejects_what_it_cannot_do():
    model = HLCModel.parse("X:2(A:2,B:2,H:2(C:2))")
    with pytest.raises(ModelError, match="'H' is a leaf"):
        relax_pair(model, "A", "C")
    with pytest.raises(ModelError, match="not an observed leaf"):
        relax_pair(model, "A", "X")


def test_identification_flags_a_planted_empty_class_and_names_its_parameters():
    model = HLCModel.parse("3:2,2,2,2")
    generic = random_parameters(model, 2)
    labels = Labels.of(model)
    ok = identification(generic, de=13, labels=labels)  # de 13 < ds 14: regular, but not unique
    assert ok.rank == 13 and ok.null_parameters == () and "not locally identified" not in ok.sentence()
    assert not ok.unique and not ok.identified and ok.equivalent_fit_dimension == 1
    cpts = {k: v.copy() for k, v in generic.cpts.items()}
    cpts["H1"] = np.array([0.6, 0.4, 0.0])  # class 3 is empty: its item probabilities are free
    bad = identification(Parameters(model, cpts), de=13, labels=labels)
    assert not bad.identified and bad.rank < 13
    assert "H1 = 3's item probabilities" in bad.null_parameters
    assert "not locally identified" in bad.sentence()


def test_identification_on_stouffer_toby_reaches_de(stouffer_toby_fit):
    result = stouffer_toby_fit
    ident = result.identification()
    assert ident.rank == result.de == 9 and ident.identified


def test_convergence_warning():
    data = datasets.load("stouffer-toby")
    with pytest.warns(ConvergenceWarning, match="without converging"):
        fit(data, "3:2,2,2,2", restarts=3, seed=0, max_iter=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        fit(data, "1:2,2,2,2", restarts=3, seed=0)  # closed form: every start reaches it at once


def test_identification_refuses_models_too_large_for_an_svd():
    from effdim.errors import EffdimError

    model = HLCModel.lc(2, [2] * 800)  # ds = 1601
    with pytest.raises(EffdimError, match="not computed for more than 1500 parameters"):
        identification(random_parameters(model, 0), de=1601)


@settings(max_examples=20, deadline=None)
@given(model=hlc_models(max_hidden=3, max_card=3), seed=st.integers(0, 10_000))
def test_fit_statistics_invariants_on_random_trees_with_missing_cells(model, seed):
    # any parameters, not only an ML estimate: G2 >= 0 (Gibbs), X2 >= 0, df = dc - de,
    # posteriors sum to one per row and hidden node, BVR symmetric and >= 0
    rng = np.random.default_rng(seed)
    params = random_parameters(model, rng)
    data = sample(params, 60, rng)
    codes = np.repeat(data.patterns, data.counts.astype(int), axis=0)
    codes[rng.random(codes.shape) < 0.1] = -1
    data = from_patterns(codes, columns=model.observed, cardinalities=[model.card(o) for o in model.observed])
    arranged = check_matches_model(data, model)
    from effdim.dimensions import dimensions
    from effdim.profiles import posterior_table

    report = dimensions(model)
    s = fit_statistics(params, arranged, ds=report.ds, de=report.de)
    if s.n_used > 0:
        assert s.g2 >= -1e-9 and s.x2 >= 0
    assert s.df == report.dc - report.de and s.df_standard == report.dc - report.ds
    table = posterior_table(params, arranged, Labels.of(model, arranged))
    assert len(table) == 60
    for h in model.hidden:
        cols = [f"P({h}={k + 1})" for k in range(model.card(h))]
        np.testing.assert_allclose(table[cols].sum(axis=1), 1.0, rtol=1e-9)
    bvr = bivariate_residuals(params, arranged).to_numpy()
    off = ~np.eye(len(model.observed), dtype=bool)
    assert np.all(np.isnan(bvr[off]) | (bvr[off] >= 0)) and np.allclose(bvr, bvr.T, equal_nan=True)


@pytest.mark.parametrize(("classes", "df_standard", "df_polca"), [(2, 112, 103), (3, 104, 95), (4, 96, 87)])
def test_df_of_other_tools_on_a_sample_smaller_than_the_table(classes, df_standard, df_polca):
    """carcinoma: N = 118 rows, 128 cells. poLCA prints min(N, dc) - ds (its resid.df), the manuals'
    count dc - ds; effdim keeps dc - de and says which is which."""
    from pathlib import Path

    from effdim.reading import load_csv

    data = load_csv(Path(__file__).parent / "data" / "carcinoma.csv")
    result = fit(data, f"{classes}:2,2,2,2,2,2,2", restarts=3, seed=0, warn=False)
    s = result.fit_statistics()
    assert (s.df, s.df_standard, s.df_polca) == (127 - result.de, df_standard, df_polca)
    assert f"poLCA reports min(N, dc) - ds = {df_polca}" in s.df_sentence()
    assert s.to_json()["df_polca"] == df_polca
