"""The three-step method (effdim.threestep) on data with a known truth, against independent computations.

The simulated data (``tests/references/three_step_simulated.csv``, drawn by
``tests/references/stepmix_three_step.py`` from the model in its ``TRUTH``) have 3 classes
moderately separated by 6 binary items (modal assignment misclassifies about 15 % of the
units), a continuous outcome ``z`` and a categorical ``zc`` whose class-specific means and
probabilities are known.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy.special import logsumexp

from effdim import ReadLimits, fit
from effdim.data import DataError
from effdim.errors import InvalidArgument
from effdim.reading import read_data
from effdim.threestep import SingularClassification, Units, classify, distal_outcomes

REFERENCES = Path(__file__).parent / "references"
TRUTH = json.loads((REFERENCES / "stepmix_three_step.json").read_text())["truth"]
MODEL = "X:3:i1:2,i2:2,i3:2,i4:2,i5:2,i6:2"


@pytest.fixture(scope="module")
def simulated():
    data = read_data(REFERENCES / "three_step_simulated.csv", limits=ReadLimits(unlimited=["z"])).dataset
    return data, fit(data, MODEL, seed=3, tol=1e-12, max_iter=5000, warn=False)


def _by(method, simulated, **options):
    data, fitted = simulated
    return {r.column: r for r in distal_outcomes(fitted, data, ["z", "zc"], method=method, **options)}


@pytest.mark.parametrize("method", ["bch", "ml"])
def test_the_corrections_recover_the_class_means_that_modal_assignment_shrinks(simulated, method):
    truth_z = np.array(TRUTH["z_means"])
    truth_zc = np.array(TRUTH["zc_probabilities"])
    corrected, modal = _by(method, simulated), _by("modal", simulated)
    z = corrected["z"]
    assert np.all(np.abs(z.estimates[:, 0] - truth_z) < 3 * z.se[:, 0])
    zc = corrected["zc"]
    assert np.all(np.abs(zc.estimates - truth_zc) < 3.5 * zc.se)
    # modal assignment pulls the outer classes towards the others, by more than their standard errors
    m = modal["z"]
    assert m.estimates[0, 0] - truth_z[0] > 2 * m.se[0, 0] and truth_z[2] - m.estimates[2, 0] > 2 * m.se[2, 0]
    assert z.estimates[2, 0] - z.estimates[0, 0] > m.estimates[2, 0] - m.estimates[0, 0] + 0.2
    m = modal["zc"]
    assert truth_zc[2, 2] - m.estimates[2, 2] > 2 * m.se[2, 2]  # the class's most typical category diluted


def test_bch_and_ml_agree_exactly_for_a_categorical_outcome(simulated):
    """With modal assignment the step-3 model of W and a categorical Z is saturated, so its ML estimate
    reproduces the W x Z table and equals BCH's D^-1 transform of it (no negative counts here)."""
    bch, ml = _by("bch", simulated)["zc"], _by("ml", simulated)["zc"]
    assert bch.boundary == () and ml.boundary == ()
    np.testing.assert_allclose(ml.estimates, bch.estimates, atol=1e-9)
    np.testing.assert_allclose(ml.se, bch.se, rtol=1e-5)
    assert ml.wald.statistic == pytest.approx(bch.wald.statistic, rel=1e-6) and ml.wald.df == 4


def test_modal_standard_errors_are_the_textbook_ones(simulated):
    data, fitted = simulated
    post = fitted.posteriors()
    modal = post["X"].to_numpy() - 1
    z = np.array([data.decode("z", c) for c in data.patterns[data.rows, data.index("z")]], dtype=float)
    found = _by("modal", simulated)["z"]
    for c in range(3):
        values = z[modal == c]
        assert found.estimates[c, 0] == pytest.approx(values.mean(), rel=1e-12)
        assert found.se[c, 0] == pytest.approx(values.std() / np.sqrt(values.size), rel=1e-10)
        assert found.sd[c] == pytest.approx(values.std(), rel=1e-10)


def _rows(simulated):
    """Per input row: step 1's posteriors (fit.posteriors, one row per respondent) and z."""
    data, fitted = simulated
    post = fitted.posteriors()[[f"P(X={c})" for c in (1, 2, 3)]].to_numpy()
    z = np.array([data.decode("z", c) for c in data.patterns[data.rows, data.index("z")]], dtype=float)
    return post, z


def test_ml_estimates_and_standard_errors_are_the_maximum_and_the_inverse_hessian(simulated):
    post, z = _rows(simulated)
    assigned = post.argmax(axis=1)
    error = np.array([[post[assigned == s, c].sum() for s in range(3)] for c in range(3)]) / post.sum(axis=0)[:, None]

    def loglik(theta):
        alpha, mu, log_var = np.concatenate([[0.0], theta[:2]]), theta[2:5], theta[5:8]
        log_pi = alpha - logsumexp(alpha)
        log_f = -0.5 * (np.log(2 * np.pi) + log_var + (z[:, None] - mu) ** 2 / np.exp(log_var))
        return logsumexp(log_pi + np.log(error[:, assigned].T) + log_f, axis=1).sum()

    found = _by("ml", simulated)["z"]
    np.testing.assert_allclose(found.classification.error_matrix, error, rtol=1e-9)
    pi = found.shares
    theta = np.concatenate([np.log(pi[1:] / pi[0]), found.estimates[:, 0], 2 * np.log(found.sd)])
    h = 1e-4
    eye = np.eye(theta.size) * h
    grad = np.array([(loglik(theta + e) - loglik(theta - e)) / (2 * h) for e in eye])
    assert np.abs(grad).max() < 1e-5  # the maximum
    hessian = np.array(
        [
            [
                (loglik(theta + a + b) - loglik(theta + a - b) - loglik(theta - a + b) + loglik(theta - a - b))
                / (4 * h * h)
                for b in eye
            ]
            for a in eye
        ]
    )
    covariance = np.linalg.inv(-hessian)
    np.testing.assert_allclose(found.se[:, 0], np.sqrt(np.diag(covariance)[2:5]), rtol=1e-4)
    assert found.se_method == "observed"


def test_held_shares_are_step_ones(simulated):
    held = _by("ml", simulated, shares="measurement")["z"]
    free = _by("ml", simulated)["z"]
    np.testing.assert_allclose(held.shares, held.classification.shares, rtol=1e-12)
    assert not np.allclose(free.shares, held.shares, rtol=1e-6)
    np.testing.assert_allclose(held.estimates, free.estimates, atol=3 * free.se.max())


def test_classification_error_matrix_and_bch_weights():
    rng = np.random.default_rng(1)
    post = rng.dirichlet([2.0, 1.0, 1.0], size=200)
    units = Units(post, rng.integers(1, 4, size=200))
    for assignment in ("modal", "proportional"):
        found = classify(units, assignment)
        np.testing.assert_allclose(found.error_matrix.sum(axis=1), 1.0)
        np.testing.assert_allclose(found.bch_weights().sum(axis=1), 1.0)
        # P(W = s) = sum_c P(X = c) D[c, s] is the share assigned to s
        assigned = (units.mass[:, None] * found.assigned).sum(axis=0) / units.mass.sum()
        np.testing.assert_allclose(found.assigned_shares, assigned, rtol=1e-12)
    assert classify(units, "proportional").error_rate > classify(units, "modal").error_rate


def test_outcome_missing_values_are_counted_and_left_out(tmp_path):
    text = (REFERENCES / "three_step_simulated.csv").read_text().splitlines()
    text = [text[0]] + [
        line.rsplit(",", 2)[0] + ",," + line.rsplit(",", 1)[1] if i % 10 == 0 else line
        for i, line in enumerate(text[1:])
    ]
    data = read_data("\n".join(text).encode(), name="holes.csv", limits=ReadLimits(unlimited=["z"])).dataset
    fitted = fit(data, MODEL, seed=3, warn=False)
    for method in ("bch", "ml", "modal"):
        [z] = distal_outcomes(fitted, data, "z", method=method)
        assert z.n_missing == 200 and z.n == 1800
        assert np.all(np.isfinite(z.se))


def test_wrong_requests_are_refused_in_the_users_words(simulated):
    data, fitted = simulated
    with pytest.raises(InvalidArgument, match="three-step method must be one of bch, ml, modal, proportional"):
        distal_outcomes(fitted, data, "z", method="3step")
    with pytest.raises(DataError, match="column i1 is an item of the model"):
        distal_outcomes(fitted, data, "i1")
    with pytest.raises(DataError, match="no column named 'nope'"):
        distal_outcomes(fitted, data, "nope")
    with pytest.raises(InvalidArgument, match="the outcome zc cannot be continuous: its value 'x'"):
        other = read_data(b"a,b\n1,x\n2,y\n", name="t.csv").dataset
        from effdim.threestep import outcome_kind

        outcome_kind("zc", other.states[1], "continuous")
    with pytest.raises(InvalidArgument, match="'Y' is not a hidden node"):
        distal_outcomes(fitted, data, "z", node="Y")
    fewer = data.subset([c for c in data.columns])  # the same data: accepted
    assert distal_outcomes(fitted, fewer, "z")[0].column == "z"
    half = read_data(
        "\n".join((REFERENCES / "three_step_simulated.csv").read_text().splitlines()[:1001]).encode(),
        name="half.csv",
        limits=ReadLimits(unlimited=["z"]),
    ).dataset
    with pytest.raises(DataError, match="not the data the model was fitted to"):
        distal_outcomes(fitted, half, "z")


def test_a_class_nobody_is_assigned_to_leaves_bch_without_weights():
    post = np.array([[0.6, 0.1, 0.3], [0.2, 0.5, 0.3], [0.45, 0.2, 0.35], [0.3, 0.4, 0.3]])
    found = classify(Units(post, [5, 5, 5, 5]), "modal")
    with pytest.raises(SingularClassification, match="class 3 is no unit's most probable class"):
        found.bch_weights()
    # proportional assignment leaves nobody out
    assert np.all(np.isfinite(classify(Units(post, [5, 5, 5, 5]), "proportional").bch_weights()))


def test_step_1s_uncertainty_widens_the_corrected_errors_as_draws_of_the_measurement_model_do(simulated):
    """The delta method of effdim.threestep.step1 against a Monte Carlo of it: the measurement model's
    parameters drawn from their estimated sampling distribution, D and the BCH estimates recomputed at each
    draw (the assignment held), their covariance added to step 3's."""
    from effdim.distribution import Parameters
    from effdim.standard_errors.information import covariance
    from effdim.standard_errors.parameters import Parametrisation
    from effdim.threestep.units import fit_rows

    data, fitted = simulated
    [plain] = distal_outcomes(fitted, data, "z")
    [wide] = distal_outcomes(fitted, data, "z", step1=True)
    assert wide.se_method == "robust, with step 1's uncertainty"
    assert np.all(wide.se > plain.se * 1.02)
    np.testing.assert_array_equal(wide.estimates, plain.estimates)
    par = Parametrisation(fitted.params)
    cov, _ = covariance(par, fitted.model_data(), "observed")
    rows = fit_rows(fitted, data, "X")
    held = plain.classification.assigned
    draws = np.random.default_rng(0).multivariate_normal(par.eta(), cov.matrix, size=300)
    cpts, _ = par.points(draws)
    means = []
    for s in range(len(draws)):
        units, outcome = rows.at(Parameters(fitted.model, {n: t[s] for n, t in cpts.items()})).with_outcome("z", "auto")
        weights = classify(units, "modal", assigned=held).bch_weights()
        seen = outcome.observed
        means.append((units.mass[seen] * outcome.values[seen]) @ weights[seen] / (units.mass[seen] @ weights[seen]))
    monte_carlo = np.var(np.array(means), axis=0)
    np.testing.assert_allclose(wide.se[:, 0] ** 2 - plain.se[:, 0] ** 2, monte_carlo, rtol=0.25)
    [modal] = distal_outcomes(fitted, data, "z", method="modal", step1=True)  # the assignment alone: nothing moves
    np.testing.assert_allclose(modal.se, distal_outcomes(fitted, data, "z", method="modal")[0].se, rtol=1e-9)


def test_step_1s_uncertainty_is_left_out_where_the_measurement_model_is_not_identified():
    """Three classes of four binary items: de = 13 < ds = 14 (the paper's Table 1), a singular information."""
    rng = np.random.default_rng(2)
    rows = ["a,b,c,d,z"] + [
        ",".join(map(str, [*(rng.random(4) < p).astype(int) + 1, round(float(rng.normal(k)), 3)]))
        for k, p in enumerate([0.8, 0.5, 0.2] * 200)
    ]
    data = read_data("\n".join(rows).encode(), name="four.csv", limits=ReadLimits(unlimited=["z"])).dataset
    fitted = fit(data.subset(["a", "b", "c", "d"]), "X:3:a:2,b:2,c:2,d:2", seed=1, warn=False)
    [plain] = distal_outcomes(fitted, data, "z")
    [wide] = distal_outcomes(fitted, data, "z", step1=True)
    assert "the measurement model is not identified (de < ds)" in wide.notes[-1]
    np.testing.assert_array_equal(wide.se, plain.se)
