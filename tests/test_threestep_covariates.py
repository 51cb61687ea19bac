"""Covariates of the classes by the three-step method (effdim.threestep.covariates), on data drawn from a
latent class regression with known coefficients, against independent computations, and on the command line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.special import logsumexp

from effdim import ReadLimits, fit
from effdim.cli import main
from effdim.data import from_frame
from effdim.formula import FormulaError
from effdim.threestep import covariates_3step

MODEL = "X:3:i1:2,i2:2,i3:2,i4:2,i5:2,i6:2"
#: P(item = 2 | class) of the three classes, and the classes' log odds against the first: intercept, x, g = b.
PROFILES = np.array([[0.8] * 6, [0.8] * 3 + [0.2] * 3, [0.2] * 6])
BETA = np.array([[0.0, 0.0, 0.0], [0.3, 1.0, 0.5], [-0.5, -1.0, 1.0]])


def _draw(n: int = 3000, seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x, g = rng.normal(size=n), rng.choice(["a", "b"], size=n)
    eta = np.column_stack([np.ones(n), x, g == "b"]) @ BETA.T
    p = np.exp(eta - logsumexp(eta, axis=1, keepdims=True))
    classes = (rng.random(n)[:, None] > np.cumsum(p, axis=1)).sum(axis=1)
    frame = pd.DataFrame(
        (rng.random((n, 6)) < PROFILES[classes]).astype(int) + 1, columns=[f"i{j}" for j in range(1, 7)]
    )
    return frame.assign(x=x.round(4), g=g)


@pytest.fixture(scope="module")
def drawn():
    data = from_frame(_draw(), unlimited=["x"])
    fitted = fit(data, MODEL, seed=1, tol=1e-12, max_iter=5000, warn=False)
    # each fitted class is the true class whose profile it is nearest
    fitted_profiles = np.array([fitted.params.cpts[f"i{j}"][:, 1] for j in range(1, 7)]).T
    order = [int(np.argmin(np.abs(PROFILES - row).sum(axis=1))) for row in fitted_profiles]
    assert sorted(order) == [0, 1, 2]
    truth = BETA[order] - BETA[order[0]]  # against the fitted class 1
    return data, fitted, truth[1:].T  # (terms, classes 2..3), as the coefficients


@pytest.mark.parametrize("method", ["bch", "ml"])
def test_the_corrections_recover_the_coefficients_that_modal_assignment_shrinks(drawn, method):
    data, fitted, truth = drawn
    corrected = covariates_3step(fitted, data, "x + g", method=method)
    modal = covariates_3step(fitted, data, "x + g", method="modal")
    assert corrected.design.names == ("(Intercept)", "x", "g[b]")
    assert np.all(np.abs(corrected.coefficients - truth) < 3.5 * corrected.se)
    shrunk = np.abs(modal.coefficients[1]) < np.abs(truth[1]) - 3 * modal.se[1]  # the slope of x, both classes
    assert shrunk.all(), (modal.coefficients[1], truth[1])
    assert [t[0] for t in corrected.tests] == ["x", "g"] and corrected.tests[0][3] < 1e-10


def test_ml_coefficients_are_the_maximum_and_their_errors_the_inverse_hessian(drawn):
    data, fitted, _ = drawn
    found = covariates_3step(fitted, data, "x + g", method="ml")
    frame = _draw()
    post = fitted.posteriors()[[f"P(X={c})" for c in (1, 2, 3)]].to_numpy()
    assigned = post.argmax(axis=1)
    error = np.array([[post[assigned == s, c].sum() for s in range(3)] for c in range(3)]) / post.sum(axis=0)[:, None]
    x = np.column_stack([np.ones(len(frame)), frame["x"], frame["g"] == "b"])

    def loglik(theta):
        eta = np.column_stack([np.zeros(len(x)), x @ theta.reshape(3, 2)])
        log_pi = eta - logsumexp(eta, axis=1, keepdims=True)
        return logsumexp(log_pi + np.log(error[:, assigned].T), axis=1).sum()

    theta = found.coefficients.ravel()
    h, eye = 1e-4, np.eye(theta.size) * 1e-4
    grad = np.array([(loglik(theta + e) - loglik(theta - e)) / (2 * h) for e in eye])
    assert np.abs(grad).max() < 1e-4
    hessian = np.array(
        [[(loglik(theta + a + b) - loglik(theta + a - b) - loglik(theta - a + b) + loglik(theta - a - b)) / (4 * h * h)
          for b in eye] for a in eye]
    )  # fmt: skip
    np.testing.assert_allclose(found.se.ravel(), np.sqrt(np.diag(np.linalg.inv(-hessian))), rtol=1e-4)
    assert found.se_method == "observed"


def test_whole_weights_give_the_coefficients_of_the_rows_repeated():
    frame = _draw(1200, seed=8).assign(w=lambda f: np.where(np.arange(len(f)) % 4 == 0, 3, 1))
    weighted = from_frame(frame, unlimited=["x", "w"])
    repeated_frame = pd.concat([frame] + [frame[frame["w"] == 3]] * 2, ignore_index=True).drop(columns="w")
    repeated = from_frame(repeated_frame, unlimited=["x"])
    start = fit(repeated, MODEL, seed=1, tol=1e-12, max_iter=5000, warn=False)
    by_rows = fit(repeated, MODEL, init=start.params, restarts=0, tol=1e-12, max_iter=5000, warn=False)
    by_weight = fit(weighted, MODEL, weights="w", init=start.params, restarts=0, tol=1e-12, max_iter=5000, warn=False)
    for method in ("bch", "ml", "modal"):
        a = covariates_3step(by_weight, weighted, "x + g", method=method)
        b = covariates_3step(by_rows, repeated, "x + g", method=method)
        np.testing.assert_allclose(a.coefficients, b.coefficients, rtol=1e-5, atol=1e-6)
        assert a.se_method == "robust"


def test_rows_with_a_missing_covariate_are_counted_and_left_out():
    frame = _draw(1500, seed=5)
    frame.loc[::10, "x"] = np.nan
    data = from_frame(frame, unlimited=["x"])
    fitted = fit(data, MODEL, seed=1, warn=False)
    found = covariates_3step(fitted, data, "x")
    assert (found.n, found.n_missing) == (1350, 150)
    payload = found.to_json()
    assert payload["terms"] == ["(Intercept)", "x"] and len(payload["coefficients"]) == 2
    assert payload["method"] == "bch" and payload["n_missing"] == 150 and payload["wald"][0]["df"] == 2


def test_bad_formulas_are_refused_naming_the_culprit(drawn):
    data, fitted, _ = drawn
    with pytest.raises(FormulaError, match="covariate 'i1' is an item of the model"):
        covariates_3step(fitted, data, "x + i1")
    with pytest.raises(FormulaError, match="a column name is missing at the end"):
        covariates_3step(fitted, data, "x +")


def test_the_command_line_prints_and_gives_the_json(tmp_path, capsys):
    path = tmp_path / "drawn.csv"
    _draw(1500, seed=6).to_csv(path, index=False)
    assert main(["fit", str(path), "--model", MODEL, "--seed", "1", "--covariates-3step", "x + g", "--json"]) == 0
    found = json.loads(capsys.readouterr().out)["covariates_3step"]
    assert found["terms"] == ["(Intercept)", "x", "g[b]"] and found["classes"] == [2, 3]
    assert found["reference"]["categories"] == {"g": "a"} and found["se_method"] == "robust"
    assert (
        main(["fit", str(path), "--model", MODEL, "--seed", "1", "--covariates-3step", "x", "--distal-method", "ml"])
        == 0
    )
    out = capsys.readouterr().out
    assert (
        "three-step regression of X (ML correction; 1500 rows; standard errors observed, the classification error taken as known) on x"
        in out
    )
    assert "Wald test that x leaves the classes alike: W = " in out
    for argv, said in [
        (["--covariates-3step", "x + i1"], "--covariates-3step names 'i1', an item of the model"),
        (["--covariates-3step", "x", "--covariates", "g"], "--covariates (one step) and --covariates-3step"),
        (["--covariates-3step", "x + nope"], "no column named 'nope'"),
    ]:
        assert main(["fit", str(path), "--model", MODEL, *argv]) == 2
        err = capsys.readouterr().err
        assert said in err and len(err.strip().splitlines()) == 1


@pytest.fixture(scope="module")
def drawn_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("three-step") / "drawn.csv"
    _draw(600, seed=9).to_csv(path, index=False)
    return path


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.one_of(
        st.sampled_from(["x", "g", "x*g", "C(g)", "x:g", "~ x", "(x + g):x", "i1", "C(x)", "x + x", "`x`"]),
        st.text(alphabet="xgi1C()+*:~` ", max_size=14),
    ),
    st.sampled_from(["bch", "ml", "modal", "proportional"]),
)
def test_any_formula_text_gets_an_answer_or_one_line(capsys, drawn_file, text, method):
    argv = ["fit", str(drawn_file), "--model", MODEL, "--seed", "1", "--restarts", "1", "--json"]
    code = main([*argv, f"--covariates-3step={text}", "--distal-method", method])
    out = capsys.readouterr()
    if code == 0:
        found = json.loads(out.out)["covariates_3step"]
        assert found["terms"][0] == "(Intercept)" and found["method"] == method
    else:
        assert code == 2 and len(out.err.strip().splitlines()) == 1 and "Traceback" not in out.err


def test_the_report_shows_the_three_step_regression(drawn_file, tmp_path, capsys):
    report = tmp_path / "report.html"
    argv = ["fit", str(drawn_file), "--model", MODEL, "--seed", "1", "--covariates-3step", "x + g"]
    assert main([*argv, "--report", str(report)]) == 0
    page = report.read_text()
    assert '<section id="covariates-3step"' in page and 'href="#covariates-3step"' in page
    assert "on x + g by the three-step method, step 3 by the BCH correction" in page
    assert "(reference categories: g = a)" in page and "Wald test that g leaves the classes alike" in page
    assert "--covariates-3step &#x27;x + g&#x27;" in page
    section = page[page.index('<section id="covariates-3step"') :]
    section = section[: section.index("</section>")]
    assert section.count("<td>X = 2</td>") == 3 and section.count("<td>X = 3</td>") == 3
    assert "&lt; 0.0001" in section and ">0.0000<" not in section  # x's slopes: p far below 1e-4


REFERENCES = Path(__file__).parent / "references"


@pytest.mark.parametrize("method", ["bch", "ml", "modal"])
def test_the_same_coefficients_as_stepmix_on_the_same_measurement_model(method):
    """StepMix's ``n_steps=3, structural="covariate"`` (tests/references/stepmix_three_step_covariates.py), effdim's
    EM started from the measurement model StepMix ended at."""
    from effdim import parse_model, read_data
    from effdim.distribution import Parameters

    found = json.loads((REFERENCES / "stepmix_three_step_covariates.json").read_text())[method]
    data = read_data(REFERENCES / "three_step_covariates.csv", limits=ReadLimits(unlimited=["x"])).dataset
    model = parse_model(MODEL)
    cpts = {"X": np.array(found["shares"]), **{i: np.array(p)[:, :2] for i, p in zip(model.observed, found["items"])}}
    fitted = fit(data, model, init=Parameters(model, cpts), restarts=0, tol=1e-13, max_iter=20000, warn=False)
    assert fitted.loglik == pytest.approx(found["measurement_loglik"], abs=1e-6)
    result = covariates_3step(fitted, data, "x + g", method=method)
    np.testing.assert_allclose(result.classification.error_matrix, found["error_matrix"], atol=1e-5)
    np.testing.assert_allclose(result.coefficients, found["coefficients"], atol=1e-9 if method == "modal" else 5e-5)


def test_step_1s_uncertainty_widens_the_errors_of_the_coefficients(drawn_file, capsys):
    argv = ["fit", str(drawn_file), "--model", MODEL, "--seed", "1", "--covariates-3step", "x", "--json"]
    for method in ("bch", "ml"):
        assert main([*argv, "--distal-method", method]) == 0
        known = json.loads(capsys.readouterr().out)["covariates_3step"]
        assert main([*argv, "--distal-method", method, "--step1-uncertainty"]) == 0
        wide = json.loads(capsys.readouterr().out)["covariates_3step"]
        assert wide["coefficients"] == known["coefficients"]
        assert wide["se_method"].endswith("with step 1's uncertainty")
        assert np.all(np.array(wide["se"]) > np.array(known["se"]))
