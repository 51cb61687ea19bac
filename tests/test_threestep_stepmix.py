"""effdim's three-step estimates against StepMix's (``n_steps=3``), stored by tests/references/stepmix_three_step.py.

On the same data and the same measurement model (effdim's EM started from StepMix's, so both stand on the
same local maximum), the classification error matrix, the modal estimates, and the BCH and ML corrections equal
StepMix's; effdim's ML estimates the class shares in step 3 where StepMix holds them (docs/three-step.md), which
``shares="measurement"`` reproduces and which moves the estimates by a small fraction of a standard error.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from effdim import ReadLimits, datasets, fit, parse_model, read_data
from effdim.distribution import Parameters
from effdim.threestep import distal_outcomes

REFERENCES = Path(__file__).parent / "references"
REFERENCE = json.loads((REFERENCES / "stepmix_three_step.json").read_text())
CASES = [(name, column) for name in ("simulated", "election") for column in REFERENCE[name]["outcomes"]]


def _data(name: str):
    if name == "simulated":
        return read_data(REFERENCES / "three_step_simulated.csv", limits=ReadLimits(unlimited=["z"])).dataset
    return datasets.load("election")


def _model(name: str):
    cards = {"simulated": 2, "election": 4}[name]
    return parse_model("X:3:" + ",".join(f"{item}:{cards}" for item in REFERENCE[name]["items"]))


def _at_stepmix_optimum(name: str, column: str, method: str):
    """effdim's fit of the measurement model started from the one StepMix's fit for (``column``, ``method``) ended at."""
    found = REFERENCE[name]["outcomes"][column][method]
    model, data = _model(name), _data(name)
    cpts = {"X": np.array(found["shares"])}
    for item, rows in zip(model.observed, found["items"]):
        cpts[item] = np.array(rows)[:, : model.card(item)]  # StepMix pads every item to the most categories
    fitted = fit(data, model, init=Parameters(model, cpts), restarts=0, tol=1e-13, max_iter=20000, warn=False)
    return fitted, data, found


def _estimates(outcome) -> np.ndarray:
    return outcome.estimates[:, 0] if outcome.kind == "continuous" else outcome.estimates


def _stepmix(found: dict) -> np.ndarray:
    return np.array(found["means"] if "means" in found else found["probabilities"])


@pytest.mark.parametrize(("name", "column"), CASES)
@pytest.mark.parametrize("method", ["bch", "ml", "modal"])
def test_the_same_estimates_as_stepmix_on_the_same_measurement_model(name, column, method):
    fitted, data, found = _at_stepmix_optimum(name, column, method)
    assert fitted.loglik == pytest.approx(found["measurement_loglik"], abs=1e-6)  # the same maximum
    np.testing.assert_allclose(fitted.class_shares()["share"], found["shares"], atol=1e-5)
    kind = REFERENCE[name]["outcomes"][column]["type"]
    options = {"shares": "measurement"} if method == "ml" else {}
    [outcome] = distal_outcomes(fitted, data, {column: kind}, method=method, **options)
    np.testing.assert_allclose(outcome.classification.error_matrix, found["error_matrix"], atol=1e-5)
    if method == "modal":  # the same assignment: equal up to rounding
        np.testing.assert_allclose(_estimates(outcome), _stepmix(found), rtol=1e-9, atol=1e-12)
    else:  # as close as the two measurement models (their shares agree to about 1e-6)
        np.testing.assert_allclose(_estimates(outcome), _stepmix(found), rtol=1e-6, atol=1e-5)
    if kind == "continuous" and method == "ml":
        np.testing.assert_allclose(outcome.sd**2, found["variances"], rtol=1e-5)


@pytest.mark.parametrize(("name", "column"), CASES)
def test_estimating_the_shares_in_step_3_moves_the_ml_estimates_by_little(name, column):
    fitted, data, found = _at_stepmix_optimum(name, column, "ml")
    kind = REFERENCE[name]["outcomes"][column]["type"]
    [outcome] = distal_outcomes(fitted, data, {column: kind}, method="ml")
    moved = np.abs(_estimates(outcome) - _stepmix(found))
    se = outcome.se[:, 0] if kind == "continuous" else outcome.se
    assert np.nanmax(moved / se) < 0.1
    assert np.abs(outcome.shares - np.array(found["shares"])).max() < 0.01


def test_effdim_restarts_find_a_higher_maximum_of_the_election_data_than_stepmix():
    """StepMix's 10 starts (``random_state=7``) end 0.017 nats below the maximum effdim's 10 restarts reach."""
    fitted = fit(_data("election"), _model("election"), seed=0, restarts=10, warn=False)
    stepmix = REFERENCE["election"]["outcomes"]["AGE"]["bch"]["measurement_loglik"]
    assert fitted.loglik - stepmix == pytest.approx(0.0172, abs=5e-4)
