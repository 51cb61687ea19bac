"""Random data and requests for the three-step method: an answer or a clear EffdimError, never another exception."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from effdim import fit
from effdim.data import from_frame
from effdim.errors import EffdimError
from effdim.threestep import distal_outcomes

FUZZ = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])

#: The outcome's values: numbers with many values, a few whole numbers, text categories, or a mix; some missing.
_styles = [
    st.floats(-1e6, 1e6, allow_nan=False),
    st.integers(-3, 3),
    st.sampled_from(["yes", "no", "maybe"]),
    st.one_of(st.integers(0, 2), st.sampled_from(["yes", "", "n/a"])),
]


@st.composite
def data_and_outcome(draw):
    n = draw(st.integers(6, 60))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    items = {f"i{j}": rng.choice(["a", "b"], n) for j in range(4)}
    values = (
        st.one_of(draw(st.sampled_from(_styles)), st.none()) if draw(st.booleans()) else draw(st.sampled_from(_styles))
    )
    outcome = draw(st.lists(values, min_size=n, max_size=n))
    return pd.DataFrame({**items, "z": pd.Series(outcome, dtype=object)}), seed


@FUZZ
@given(
    data_and_outcome(),
    st.sampled_from(["bch", "ml", "modal", "proportional"]),
    st.sampled_from(["auto", "categorical", "continuous"]),
    st.sampled_from(["modal", "proportional"]),
    st.integers(1, 3),
)
def test_any_outcome_gets_estimates_or_a_clear_error(frame_seed, method, kind, assignment, classes):
    frame, seed = frame_seed
    try:
        data = from_frame(frame, unlimited=["z"])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fitted = fit(data, f"X:{classes}:i0:2,i1:2,i2:2,i3:2", seed=seed, restarts=2, warn=False)
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)  # no numerical warning reaches the user
            [found] = distal_outcomes(fitted, data, {"z": kind}, method=method, assignment=assignment)
    except EffdimError as err:
        assert str(err) and "\n" not in str(err)
        return
    assert found.estimates.shape[0] == classes and np.all(np.isfinite(found.estimates))
    if found.kind == "categorical":
        np.testing.assert_allclose(found.estimates.sum(axis=1), 1.0)
        assert np.all(found.estimates >= 0)
    lower, upper = found.intervals()
    ok = np.isfinite(lower)
    assert np.all(lower[ok] <= found.estimates[ok] + 1e-12) and np.all(found.estimates[ok] <= upper[ok] + 1e-12)
    assert found.to_json()["type"] == found.kind
