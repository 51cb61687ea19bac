"""The Wald test that an outcome's mean, or its category probabilities, are the same in every class.

With ``theta[c, j]`` the class estimates (a mean: ``J = 1``; probabilities:
the first ``J - 1`` categories, the last being one minus their sum) and
``V`` their covariance, the contrasts ``d = theta[c, j] - theta[0, j]`` for
``c = 1..K-1`` have covariance ``C V C'`` and::

    W = d' (C V C')^+ d,   df = rank(C V C'),   p = P(chi2_df > W)

(Bakk, Tekle and Vermunt 2013, Section 4; Latent GOLD's Step3 reports the
same test). The generalised inverse drops the directions without variance:
a probability on the boundary (0 in every class) tests nothing, and the
degrees of freedom say what was tested.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import chdtrc

__all__ = ["Wald", "equality_test"]

#: An eigenvalue of ``C V C'`` below this fraction of the largest is no direction of the test.
RANK_TOLERANCE = 1e-10


@dataclass(frozen=True)
class Wald:
    """The statistic, its degrees of freedom and the p-value (NaN when nothing could be tested)."""

    statistic: float
    df: int
    p_value: float

    def to_json(self) -> dict:
        return {"statistic": _finite(self.statistic), "df": self.df, "p": _finite(self.p_value)}


def _finite(x: float) -> float | None:
    return float(x) if math.isfinite(x) else None


def equality_test(estimates: np.ndarray, covariance: np.ndarray) -> Wald:
    """The test of the module docstring for ``estimates`` ``(K, J)`` and their class-major covariance.

    >>> round(equality_test(np.array([[0.0], [2.0]]), np.eye(2)).statistic, 6)   # (2 - 0)^2 / (1 + 1)
    2.0
    """
    k, n_cat = estimates.shape
    tested = range(n_cat) if n_cat == 1 else range(n_cat - 1)
    rows = []
    for c in range(1, k):
        for j in tested:
            row = np.zeros(k * n_cat)
            row[c * n_cat + j], row[j] = 1.0, -1.0
            rows.append(row)
    contrast = np.array(rows)
    if not np.all(np.isfinite(covariance)) or contrast.size == 0:
        return Wald(math.nan, 0, math.nan)
    d = contrast @ estimates.reshape(-1)
    values, vectors = np.linalg.eigh(contrast @ covariance @ contrast.T)
    keep = values > RANK_TOLERANCE * max(values.max(), 0.0)
    if not keep.any():
        return Wald(math.nan, 0, math.nan)
    projected = vectors[:, keep].T @ d
    statistic = float(projected @ (projected / values[keep]))
    df = int(keep.sum())
    return Wald(statistic, df, float(chdtrc(df, statistic)))
