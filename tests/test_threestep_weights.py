"""The three-step method on fits with sampling weights (effdim.casedata): the weights enter the classification
error and every step-3 estimate; a fit with covariates is refused."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from effdim import fit
from effdim.data import DataError, from_frame
from effdim.threestep import distal_outcomes

SIMULATED = Path(__file__).parent / "references" / "three_step_simulated.csv"
MODEL = "X:3:i1:2,i2:2,i3:2,i4:2,i5:2,i6:2"


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    frame = pd.read_csv(SIMULATED).iloc[:800]
    frame["w"] = np.where(np.arange(len(frame)) % 3 == 0, 2, 1)  # every third row counts twice
    frame["x"] = np.random.default_rng(4).normal(size=len(frame)).round(3)
    return frame


def _data(frame: pd.DataFrame):
    return from_frame(frame, unlimited=["z", "x", "w"])


@pytest.mark.parametrize("method", ["bch", "ml", "modal"])
def test_whole_weights_give_the_estimates_of_the_rows_repeated(frame, method):
    weighted = _data(frame)
    repeated = _data(pd.concat([frame, frame[frame["w"] == 2]], ignore_index=True).drop(columns="w"))
    start = fit(repeated, MODEL, seed=1, tol=1e-12, max_iter=5000, warn=False)
    by_weight = fit(weighted, MODEL, weights="w", init=start.params, restarts=0, tol=1e-12, max_iter=5000, warn=False)
    by_rows = fit(repeated, MODEL, init=start.params, restarts=0, tol=1e-12, max_iter=5000, warn=False)
    for column in ("z", "zc"):
        [w] = distal_outcomes(by_weight, weighted, {column: "auto"}, method=method)
        [r] = distal_outcomes(by_rows, repeated, {column: "auto"}, method=method)
        np.testing.assert_allclose(w.estimates, r.estimates, rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(w.classification.error_matrix, r.classification.error_matrix, atol=1e-7)
        assert w.se_method == "robust" and w.n == pytest.approx(len(frame))  # the N of the scores: rows used
        assert not np.allclose(w.se, r.se)  # 800 weighted rows are not 1067 rows


def test_weights_scaled_by_a_constant_change_nothing(frame):
    """Weights are rescaled to the rows used: 3.7 times every weight is the same analysis."""
    data, scaled = _data(frame), _data(frame.assign(w=frame["w"] * 3.7))
    one = fit(data, MODEL, weights="w", seed=1, tol=1e-12, max_iter=5000, warn=False)
    two = fit(scaled, MODEL, weights="w", init=one.params, restarts=0, tol=1e-12, max_iter=5000, warn=False)
    for method in ("bch", "ml"):
        [a] = distal_outcomes(one, data, "z", method=method)
        [b] = distal_outcomes(two, scaled, "z", method=method)
        np.testing.assert_allclose(b.estimates, a.estimates, rtol=1e-7)
        np.testing.assert_allclose(b.se, a.se, rtol=1e-6)


def test_a_regression_fit_is_refused_and_rows_without_a_weight_are_left_out(frame):
    from effdim.errors import InvalidArgument

    data = _data(frame)
    regression = fit(data, MODEL, covariates="x", seed=1, warn=False)
    with pytest.raises(InvalidArgument, match="the three-step method takes the classes of a model without covariates"):
        distal_outcomes(regression, data, "z")
    holes = _data(frame.assign(w=np.where(np.arange(len(frame)) % 10 == 0, np.nan, frame["w"])))
    fitted = fit(holes, MODEL, weights="w", seed=1, warn=False)
    [z] = distal_outcomes(fitted, holes, "z")
    assert (
        z.n == pytest.approx(720)
        and "80 rows left out of the fit (a missing or zero weight) are left out here too" in z.notes
    )


def test_other_data_than_the_fits_are_refused(frame):
    data = _data(frame)
    fitted = fit(data, MODEL, weights="w", seed=1, warn=False)
    other = _data(frame.assign(w=frame["w"][::-1].to_numpy()))
    with pytest.raises(DataError, match="not the data the model was fitted to"):
        distal_outcomes(fitted, other, "z")
