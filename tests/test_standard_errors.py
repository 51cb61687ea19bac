"""Standard errors (effdim.standard_errors) against poLCA's stored output and against the likelihood itself.

poLCA's estimates and standard errors are in tests/references/polca_se.json, written by
tests/references/polca_se.R (poLCA 1.6.0.2, classes by decreasing share, missing answers marginalised).
At poLCA's own estimates effdim's empirical information must give poLCA's standard errors, with and
without covariates; the observed information must be minus the Hessian of the log-likelihood, checked
against second differences of the log-likelihood alone; boundary probabilities and the directions a
singular information leaves flat get a flag, never a number."""

import json
from pathlib import Path

import numpy as np
import pytest

from effdim import datasets, parse_model
from effdim.casedata import arrange
from effdim.distribution import Parameters, random_parameters, sample
from effdim.em import ModelData, fit_em
from effdim.em.estep import estep
from effdim.standard_errors import BOUNDARY_FLAG, NOT_IDENTIFIED, logit_interval, standard_errors
from effdim.standard_errors.information import observed_information
from effdim.standard_errors.parameters import Parametrisation
from effdim.standard_errors.scores import gradients, pattern_scores, state_at

REFERENCE = json.loads((Path(__file__).parent / "references" / "polca_se.json").read_text())["models"]


def polca_case(name):
    """poLCA's fit ``name`` on effdim's data: (model, Parameters, coefficients or None, ModelData)."""
    ref = REFERENCE[name]
    if ref["dataset"] == "values":  # poLCA codes Stouffer-Toby's '-' as 1 and '+' as 2
        data = datasets.load("stouffer-toby")
        for column in "ABCD":
            data = data.with_state_order(column, ["-", "+"])
    else:
        data = datasets.load(ref["dataset"])
    items, k = ref["items"], ref["nclass"]
    model = parse_model(f"X:{k}:" + ",".join(f"{c}:{len(data.states[data.index(c)])}" for c in items))
    case = arrange(data, model, covariates=ref["covariates"])
    assert case.n_rows == ref["N"]
    cpts = {"X": np.array(ref["P"]) / np.sum(ref["P"])}
    cpts.update({c: np.array(ref["probs"][c]) for c in items})
    coefficients = None if ref.get("coeff") is None else np.array(ref["coeff"])
    return model, Parameters(model, cpts), coefficients, case.model_data(model)


@pytest.mark.parametrize("name", list(REFERENCE))
def test_empirical_standard_errors_are_polcas(name):
    ref = REFERENCE[name]
    model, params, coefficients, md = polca_case(name)
    se = standard_errors(params, md, method="empirical", coefficients=coefficients)
    for item in ref["items"]:
        theirs, mine, flags = np.array(ref["probs_se"][item]), se.tables[item], se.flags[item]
        given = flags == ""
        np.testing.assert_allclose(mine[given], theirs[given], rtol=2e-5, atol=1e-9, err_msg=item)
        # poLCA's delta method gives a probability at 0 a standard error of 0: effdim flags it instead
        assert np.all(theirs[~given] < 1e-8) and set(flags[~given]) <= {BOUNDARY_FLAG}
        assert np.all(np.isnan(mine[~given]))
    np.testing.assert_allclose(se.shares["X"], ref["P_se"], rtol=2e-5)
    if coefficients is not None:
        np.testing.assert_allclose(se.coefficients, np.array(ref["coeff_se"]), rtol=2e-5)
    assert se.nullity == 0 and se.negative == 0


def test_boundary_probabilities_are_flagged_not_given_a_standard_error():
    _, params, _, md = polca_case("carcinoma_3")
    se = standard_errors(params, md, method="observed")
    flagged = sum(int(np.sum(f == BOUNDARY_FLAG)) for f in se.flags.values())
    on_boundary = sum(int(np.sum(params.cpts[c] < 1e-7)) for c in "ABCDEFG")
    assert flagged >= on_boundary > 0 and se.n_boundary == flagged
    assert "on the boundary" in " ".join(se.notes())


def _loglik_hessian(par, md, h=1e-3):
    """Minus the Hessian of the log-likelihood by second differences of the log-likelihood alone."""
    eta = par.eta()
    d = eta.size
    eye = np.eye(d)
    points = [
        eta + a * h * eye[i] + b * h * eye[j]
        for i in range(d)
        for j in range(d)
        for a, b in ((1, 1), (1, -1), (-1, 1), (-1, -1))
    ]
    cpts, beta = par.points(np.array(points))
    ll = estep(md, state_at(md, cpts, beta), 0.0, counts=False).ll.reshape(d, d, 4)
    return -(ll[..., 0] - ll[..., 1] - ll[..., 2] + ll[..., 3]) / (4 * h * h)


@pytest.mark.parametrize("case", ["gss82", "cheating_gpa", "hlc"])
def test_observed_information_is_minus_the_hessian_of_the_loglikelihood(case):
    if case == "gss82":
        data = datasets.load("gss82")
        model = parse_model("X:3:" + ",".join(f"{c}:{len(s)}" for c, s in zip(data.columns, data.states)))
        fit = fit_em(data, model, restarts=5, seed=1, tol=1e-12)
        par, md = Parametrisation(fit.params), ModelData(model, data)
    elif case == "cheating_gpa":
        model, params, coefficients, md = polca_case("cheating_gpa")
        par = Parametrisation(params, coefficients)
    else:  # an HLC model at random parameters: the identity holds at any point
        model = parse_model("2(2(2,2,2),2(2,2,3))")
        params = random_parameters(model, 5)
        data = sample(params, 3000, 6)
        par, md = Parametrisation(params), ModelData(model, data)
    mine = observed_information(par, md)
    np.testing.assert_allclose(mine, _loglik_hessian(par, md), atol=2e-6 * np.abs(mine).max())


def test_scores_sum_to_the_gradient():
    model = parse_model("2(3(2,2,2),2(2,3))")
    params = random_parameters(model, 1)
    data = sample(params, 500, 2)
    md = ModelData(model, data)
    par = Parametrisation(params)
    per_pattern = pattern_scores(par, md)
    np.testing.assert_allclose(per_pattern.T @ md.counts, gradients(par, md, par.eta()[None])[0], atol=1e-8)


def test_a_singular_information_names_what_is_not_identified():
    """Stouffer-Toby with 3 classes has de = 13 < ds = 14: one flat direction, nothing inverted on it."""
    data = datasets.load("stouffer-toby")
    model = parse_model("X:3:A:2,B:2,C:2,D:2")
    fit = fit_em(data, model, restarts=10, seed=2, tol=1e-12, max_iter=100_000)
    md = ModelData(model, data)
    for method in ("observed", "empirical", "robust"):
        se = standard_errors(fit.params, md, method=method)
        assert se.nullity == 1, method
        flagged = {f for table in se.flags.values() for f in table.ravel()}
        assert NOT_IDENTIFIED in flagged
        for node, table in se.tables.items():
            assert np.all(np.isnan(table) == (se.flags[node] != ""))
        assert "singular" in " ".join(se.notes())


def test_logit_intervals_stay_inside_zero_and_one():
    low, high = logit_interval(np.array([0.01, 0.5, 0.99]), np.array([0.05, 0.3, 0.05]))
    assert np.all((0 < low) & (low < [0.01, 0.5, 0.99]) & ([0.01, 0.5, 0.99] < high) & (high < 1))


def test_a_fits_parameter_table_carries_each_probabilitys_standard_error_interval_or_flag(stouffer_toby):
    """parameter_table(se=...): the method's standard errors in the CPT's rows, intervals inside 0-1 around
    each probability at the asked level, and NaN with the reason wherever the standard errors have a flag."""
    from effdim import fit

    result = fit(stouffer_toby, 2, seed=0, restarts=3)
    se = result.standard_errors("empirical")
    table = result.parameter_table(se="empirical", level=0.9)
    assert list(table.columns[-4:]) == ["se", "lower", "upper", "flag"]
    expected = np.concatenate([np.ravel(se.tables[node]) for node in result.model.nodes])
    np.testing.assert_array_equal(table["se"].to_numpy(), expected)
    shown = table[table["flag"] == ""]
    assert len(shown) and ((shown.lower < shown.probability) & (shown.probability < shown.upper)).all()
    wider = result.parameter_table(se="empirical", level=0.99)
    assert (wider.upper - wider.lower > table.upper - table.lower)[table["flag"] == ""].all()
    assert table[table["flag"] != ""][["se", "lower", "upper"]].isna().all().all()
    assert "se" not in result.parameter_table().columns


def test_a_parameter_tables_level_and_method_are_checked(stouffer_toby):
    from effdim import fit
    from effdim.errors import InvalidArgument

    result = fit(stouffer_toby, 2, seed=0, restarts=1)
    with pytest.raises(InvalidArgument, match="confidence level"):
        result.parameter_table(se=True, level=95)
    with pytest.raises(InvalidArgument, match="observed, empirical, robust"):
        result.parameter_table(se="bootstrap")
