"""Separation in a latent class regression (effdim.standard_errors): where a class's probability is 0 at some
covariate values its coefficient heads to infinity; it is flagged 'boundary' with no standard error, and the
note says why, instead of printing the huge meaningless SE of an ill-conditioned information."""

import numpy as np
import pandas as pd

from effdim import fit
from effdim.standard_errors import BOUNDARY_FLAG


def _separated_sample(seed: int) -> pd.DataFrame:
    """Rows with z = 1 are all in the first class; rows with z = 0 are split evenly."""
    rng = np.random.default_rng(seed)
    n = 600
    z = rng.integers(0, 2, n)
    cls = np.where(z == 1, 0, rng.integers(0, 2, n))
    yes = rng.random((n, 5)) < np.where(cls == 0, 0.9, 0.1)[:, None]
    frame = pd.DataFrame({f"i{j}": np.where(yes[:, j], "y", "n") for j in range(5)})
    frame["z"] = z
    return frame


def test_a_separated_coefficient_is_flagged_and_the_others_keep_their_errors():
    result = fit(_separated_sample(0), 2, covariates="z", seed=1, warn=False)
    assert result.coefficients[1, 0] < -10  # class 2 against 1, per unit of z: heading to minus infinity
    for method in ("observed", "empirical", "robust"):
        se = result.standard_errors(method)
        assert se.coefficient_flags[1, 0] == BOUNDARY_FLAG and np.isnan(se.coefficients[1, 0])
        assert se.coefficient_flags[0, 0] == "" and 0 < se.coefficients[0, 0] < 1
        assert any("separation" in note for note in se.notes())
    table = result.coefficient_table()
    assert list(table["flag"]) == ["", BOUNDARY_FLAG] and np.isnan(table["or_low"][1])


def test_without_separation_nothing_is_flagged():
    frame = _separated_sample(1)
    frame["z"] = np.random.default_rng(2).integers(0, 2, len(frame))  # unrelated to the classes
    se = fit(frame, 2, covariates="z", seed=1, warn=False).standard_errors()
    assert not any(se.coefficient_flags.ravel()) and np.isfinite(se.coefficients).all()
    assert not any("separation" in note for note in se.notes())
