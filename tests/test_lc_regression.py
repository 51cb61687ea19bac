"""Latent class regression by EM (a root whose classes depend on covariates; effdim.em with a design):
poLCA's log-likelihood and coefficients reached on its own examples (tests/references/polca_se.json), the
coefficients following a relabelling of the classes, the likelihood never falling."""

import json
from pathlib import Path

import numpy as np
import pytest

from effdim import datasets, parse_model
from effdim.casedata import arrange
from effdim.em import fit_em
from effdim.mlogit import class_probabilities

REFERENCE = json.loads((Path(__file__).parent / "references" / "polca_se.json").read_text())["models"]


def regression(name):
    ref = REFERENCE[name]
    data = datasets.load(ref["dataset"])
    model = parse_model(
        f"X:{ref['nclass']}:" + ",".join(f"{c}:{len(data.states[data.index(c)])}" for c in ref["items"])
    )
    case = arrange(data, model, covariates=ref["covariates"])
    return ref, model, case


@pytest.mark.parametrize(("name", "restarts"), [("cheating_gpa", 10), ("election_party", 4), ("election_party_age", 4)])
def test_polca_loglikelihood_and_coefficients_are_reached(name, restarts):
    ref, model, case = regression(name)
    fit = fit_em(case.model_data(model), model, restarts=restarts, seed=3)
    assert fit.converged and fit.loglik >= ref["llik"] - 1e-6
    assert case.design.names == tuple(ref["coeff_names"])
    np.testing.assert_allclose(fit.coefficients, np.array(ref["coeff"]), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(fit.params.cpts["X"], ref["P"], atol=1e-5)
    assert np.all(np.diff(fit.trace) >= -1e-8 * abs(fit.loglik))


def test_relabelling_the_classes_carries_the_coefficients():
    ref, model, case = regression("cheating_gpa")
    md = case.model_data(model)
    fit = fit_em(md, model, restarts=4, seed=1)
    swapped = fit.relabeled("X", [1, 0])
    rows = md.design.rows
    before = class_probabilities(rows, fit.coefficients[None])[0]
    after = class_probabilities(rows, swapped.coefficients[None])[0]
    np.testing.assert_allclose(after, before[[1, 0]], atol=1e-12)


def test_plain_em_and_map_pseudo_counts_run_with_covariates():
    ref, model, case = regression("cheating_gpa")
    md = case.model_data(model)
    plain = fit_em(md, model, restarts=3, seed=2, accelerate=False, max_iter=5000)
    assert plain.loglik >= ref["llik"] - 1e-4
    smoothed = fit_em(md, model, restarts=3, seed=2, prior=1.0)
    assert smoothed.coefficients.shape == (2, 1) and smoothed.loglik < plain.loglik + 1e-9
