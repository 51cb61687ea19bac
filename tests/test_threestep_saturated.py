"""For a categorical outcome that every row answers, step 3's ML model is saturated (docs/three-step.md, "The
three steps"): the table of assigned class by outcome category has K R - 1 free cells, the model K - 1 shares and
K (R - 1) probabilities, D held. Its estimates and standard errors are then the BCH correction's, which inverts
the same table, wherever those lie within 0 and 1; rows without the outcome inform the ML shares only, and part
them."""

import numpy as np
import pandas as pd

from effdim import fit
from effdim.data import from_frame
from effdim.threestep import distal_outcomes

ITEMS = [f"i{j}" for j in range(1, 6)]


def _survey(missing: int) -> pd.DataFrame:
    rng = np.random.default_rng(7)
    classes = rng.choice(3, size=900, p=[0.5, 0.3, 0.2])
    profile = np.array([0.85, 0.5, 0.15])
    frame = pd.DataFrame({item: np.where(rng.random(900) < profile[classes], "yes", "no") for item in ITEMS})
    outcome = np.array([[0.6, 0.3, 0.1], [0.3, 0.4, 0.3], [0.1, 0.3, 0.6]])[classes]
    answer = (rng.random(900)[:, None] > np.cumsum(outcome, axis=1)).sum(axis=1)
    frame["plan"] = np.array(["stay", "unsure", "leave"], dtype=object)[answer]
    frame.loc[: missing - 1, "plan"] = None
    return frame


def _both(missing: int):
    data = from_frame(_survey(missing))
    fitted = fit(data.subset(ITEMS), 3, seed=3, restarts=5, warn=False)
    return [distal_outcomes(fitted, data, "plan", method=m)[0] for m in ("bch", "ml")]


def test_ml_equals_bch_for_a_categorical_outcome_every_row_answers():
    bch, ml = _both(missing=0)
    assert bch.se_method == "robust" and ml.se_method == "observed"
    assert np.all((bch.estimates > 0) & (bch.estimates < 1))
    np.testing.assert_allclose(ml.estimates, bch.estimates, atol=1e-6)
    np.testing.assert_allclose(ml.se, bch.se, rtol=1e-4)
    assert abs(ml.wald.statistic - bch.wald.statistic) < 1e-3 * bch.wald.statistic


def test_rows_without_the_outcome_part_them():
    bch, ml = _both(missing=150)
    assert bch.n_missing == ml.n_missing == 150
    assert np.abs(ml.estimates - bch.estimates).max() > 1e-4
