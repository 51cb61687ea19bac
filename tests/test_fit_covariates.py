"""effdim.fit and ``effdim fit`` with covariates, sampling weights and standard errors: poLCA's cheating
regression reproduced through the public face, weights that mean what they say, the JSON's ``covariates``
and ``params_se`` keys, and every bad option refused in one line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import effdim

REFERENCE = json.loads((Path(__file__).parent / "references" / "polca_se.json").read_text())["models"]
CHEATING = REFERENCE["cheating_gpa"]


@pytest.fixture(scope="module")
def cheating_fit():
    return effdim.fit(effdim.datasets.load("cheating"), 2, covariates="GPA", restarts=10, seed=4)


def test_the_polca_regression_through_the_public_face(cheating_fit):
    r = cheating_fit
    assert str(r.model) == "X:2(LIEEXAM:2,LIEPAPER:2,FRAUD:2,COPYEXAM:2)"  # every column but the covariate
    assert r.loglik >= CHEATING["llik"] - 1e-6 and r.n == CHEATING["N"]
    np.testing.assert_allclose(r.coefficients, CHEATING["coeff"], rtol=1e-4)
    np.testing.assert_allclose(r.standard_errors("empirical").coefficients, CHEATING["coeff_se"], rtol=1e-3)
    table = r.coefficient_table()
    assert list(table["term"]) == ["(Intercept)", "GPA"] and list(table["class"]) == [2, 2]
    gpa = table.iloc[1]
    assert (
        np.isclose(gpa["odds_ratio"], np.exp(gpa["coefficient"])) and gpa["or_low"] < gpa["odds_ratio"] < gpa["or_high"]
    )
    assert gpa["p"] < 0.01  # poLCA's manual: a higher GPA, less likely a cheater
    # scores count the slope: ds = 9 + 1; no CS for a regression
    assert r.ds == 10 and r.de == 10 and np.isnan(r.scores.cs)
    assert r.to_json()["cs"] is None and r.to_json()["rows"]["left_out_missing_covariate"] == 4


def test_diagnostics_of_models_without_covariates_are_refused_with_the_reason(cheating_fit):
    for method in ("fit_statistics", "bivariate_residuals", "pattern_table", "identification"):
        with pytest.raises(effdim.EffdimError, match="latent class regression on GPA"):
            getattr(cheating_fit, method)()


def test_posteriors_per_row_under_each_rows_own_prior(cheating_fit):
    post = cheating_fit.posteriors()
    assert len(post) == 319  # every input row, in order
    assert post.iloc[:4].isna().all().all()  # the four rows without GPA are left out
    used = post.iloc[4:]
    np.testing.assert_allclose(used[["P(X=1)", "P(X=2)"]].sum(axis=1), 1.0)
    # two students with the same answers and different GPAs get different posteriors
    same = used.groupby(["LIEEXAM", "LIEPAPER", "FRAUD", "COPYEXAM"])["P(X=2)"].nunique()
    assert same.max() > 1


def _weighted_frame(weights):
    data = effdim.datasets.load("cheating").to_frame()
    rows = data.loc[data.index.repeat(data["count"])].drop(columns="count").reset_index(drop=True)
    rows["w"] = weights(len(rows))
    return rows.dropna(subset=["GPA"])


def test_weights_are_relative_and_whole_weights_act_as_copies():
    frame = _weighted_frame(lambda n: np.where(np.arange(n) < n // 2, 2.0, 1.0))
    tripled = frame.assign(w=3 * frame["w"])
    once = effdim.fit(frame, 2, weights="w", seed=1, restarts=5, warn=False)
    thrice = effdim.fit(tripled, 2, weights="w", seed=1, restarts=5, warn=False)
    assert np.isclose(once.loglik, thrice.loglik, atol=1e-8) and once.n == thrice.n == len(frame)
    # weight 2 on the first half: the estimate of the data with those rows copied, the N of the rows used
    weighted = effdim.fit(frame, 2, weights="w", seed=1, restarts=5, warn=False)
    copies = frame.loc[frame.index.repeat(frame["w"].astype(int))].drop(columns="w")
    copied = effdim.fit(copies, 2, seed=1, restarts=5, warn=False)
    for node in weighted.params.cpts:
        np.testing.assert_allclose(weighted.params.cpts[node], copied.params.cpts[node], atol=1e-5)
    assert weighted.n == len(frame) and copied.n == frame["w"].sum()
    robust = weighted.standard_errors()
    assert robust.method == "robust"
    # the copies' observed SEs pretend to more rows than were sampled: the robust ones are larger
    assert robust.tables["LIEEXAM"][1, 1] > copied.standard_errors().tables["LIEEXAM"][1, 1]


def test_cli_json_has_covariates_and_params_se(cli):
    status, out, _ = cli("fit", "cheating", "--model", "2", "--covariates", "GPA", "--seed", "4", "--json")
    assert status == 0
    payload = json.loads(out)
    cov = payload["covariates"]
    assert cov["node"] == "X" and cov["terms"] == ["(Intercept)", "GPA"] and cov["classes"] == [2]
    assert cov["reference"] == {"class": 1, "categories": {}}
    assert np.shape(cov["coefficients"]) == np.shape(cov["se"]) == np.shape(cov["p"]) == (2, 1)
    np.testing.assert_allclose(cov["coefficients"], CHEATING["coeff"], rtol=1e-4)
    se = payload["params_se"]
    assert se["method"] == "observed" and se["tables"].keys() == payload["params"]["tables"].keys()
    for node, table in payload["params"]["tables"].items():
        for key, row in table["rows"].items():
            assert se["tables"][node]["rows"][key].keys() == row.keys()
    assert payload["rows"]["n_used"] == 315 and payload["cs"] is None


def test_cli_categorical_covariate_and_no_standard_errors(cli):
    status, out, _ = cli(
        "fit", "cheating", "--model", "2", "--covariates", "C(GPA)", "--se", "none", "--seed", "1", "--json"
    )
    assert status == 0
    payload = json.loads(out)
    assert payload["covariates"]["terms"] == ["(Intercept)", "GPA[2]", "GPA[3]", "GPA[4]", "GPA[5]"]
    assert payload["covariates"]["reference"]["categories"] == {"GPA": 1}
    assert "params_se" not in payload and payload["covariates"]["se"][0] == [None]


def test_cli_text_shows_the_coefficients_and_the_errors_in_brackets(cli):
    status, out, _ = cli("fit", "cheating", "--model", "2", "--covariates", "GPA", "--seed", "4")
    assert status == 0
    assert "n = 315 of 319 rows (4 left out for a missing covariate)" in out
    assert "latent class regression of X on GPA" in out and "odds ratio" in out
    assert "0.9903 (0.0123)" in out  # P(LIEEXAM = 1 | X = 1) and its standard error


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--covariates", "GPA +"], "a column name is missing at the end"),
        (["--covariates", "LIEEXAM"], "covariate 'LIEEXAM' is an item of the model"),
        (["--covariates", "AGE"], "no column named 'AGE' for the covariates"),
        (["--weights", "nope"], "no column named 'nope'"),
        (["--covariates", "GPA", "--bootstrap", "5"], "--bootstrap tests the fit of a model without covariates"),
        (["--se", "huge"], "invalid choice"),
    ],
)
def test_cli_refuses_in_one_line(cli, argv, says):
    model = "X:2:LIEEXAM:2,LIEPAPER:2,FRAUD:2,COPYEXAM:2" if "LIEEXAM" in argv else "2"
    status, _, err = cli("fit", "cheating", "--model", model, "--restarts", "1", *argv)
    assert status == 2 and says in err and len(err.strip().splitlines()) == 1


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(["GPA", "C(GPA)", "LIEEXAM", "w", "+", "*", ":", "(", ")", " ", "`"]), max_size=6))
def test_cli_any_covariate_formula_fits_or_says_why(cli, tmp_path_factory, pieces):
    path = tmp_path_factory.getbasetemp() / "cheating_w.csv"
    if not path.exists():
        frame = effdim.datasets.load("cheating").to_frame()
        frame["w"] = np.linspace(0.5, 2.0, len(frame))
        frame.to_csv(path, index=False)
    text = "".join(pieces)
    status, _, err = cli(
        "fit", str(path), "--model", "2", "--covariates", text, "--restarts", "1", "--max-iter", "20", "--quiet"
    )
    assert status in (0, 2) and (status == 0 or len(err.strip().splitlines()) == 1), err


def test_a_frame_with_a_continuous_covariate_needs_no_reading_limit():
    rng = np.random.default_rng(0)
    n = 400
    age = rng.uniform(18, 90, n)
    cls = rng.random(n) < 1 / (1 + np.exp(-(age - 50) / 10))
    items = {f"i{j}": np.where(rng.random(n) < np.where(cls, 0.8, 0.2), "yes", "no") for j in range(4)}
    frame = pd.DataFrame({**items, "age": age})
    result = effdim.fit(frame, 2, covariates="age", seed=0, restarts=3, warn=False)
    assert result.design.names == ("(Intercept)", "age") and abs(result.coefficients[1, 0]) > 0.05
