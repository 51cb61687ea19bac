"""Summaries of replicated experiments: mean, standard error, paired tests.

The paper reports "average information divergence" with "± standard error"
and marks, per sample size, the best score and "all values with no
significant difference (95%) from the best one" (Section 6, Table 2). It does
not name the test. The replicates of all scores share the same data sets (one
data set per parametrization and size), so the comparison is *paired*: for the
best score ``b`` and another score ``s`` we test the per-replicate
differences ``KL_s - KL_b``

* ``"t"``: the paired t-test (two-sided), which tests the mean difference,
  the quantity the table shows (default);
* ``"wilcoxon"``: the Wilcoxon signed-rank test (two-sided, zero differences
  kept by Pratt's method), robust to the skew of KL values.

Where every difference is exactly zero (both scores selected the same model
in every replicate) the p-value is 1. Where every difference is the same
non-zero number (whole-number measures such as a Robinson-Foulds distance on
a few replicates) the t statistic is infinite, yet ``n`` values of one sign
occur with probability ``2 / 2**n`` under a null of no difference: the t-test
then gives that exact sign-test p-value, not 0 (four replicates: 0.125).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ..errors import InvalidArgument

__all__ = ["TESTS", "mean_se", "paired_pvalue", "mark_best", "pvalues_against_best"]

TESTS = ("t", "wilcoxon")


def mean_se(values: Sequence[float]) -> tuple[float, float]:
    """Mean and standard error ``s / sqrt(n)`` (sample standard deviation, ``ddof=1``; 0 for one value)."""
    x = np.asarray(values, dtype=float)
    if x.size == 0:
        return math.nan, math.nan
    if x.size == 1:
        return float(x[0]), 0.0
    return float(x.mean()), float(x.std(ddof=1) / math.sqrt(x.size))


def paired_pvalue(a: Sequence[float], b: Sequence[float], test: str = "t") -> float:
    """Two-sided p-value of the paired ``test`` (``"t"`` or ``"wilcoxon"``) of ``a`` against ``b``."""
    from scipy import stats

    if test not in TESTS:
        raise InvalidArgument(f"unknown test {test!r}; choose from {', '.join(TESTS)}")
    x = np.asarray(a, dtype=float)
    y = np.asarray(b, dtype=float)
    if x.shape != y.shape:
        raise InvalidArgument(f"paired samples need the same length, got {x.size} and {y.size}")
    d = x - y
    if d.size < 2 or not np.any(d != 0):
        return 1.0
    if test == "t":
        if np.all(d == d[0]):  # no spread: the t statistic is infinite; the exact sign test says how sure n are
            return 2.0 * 0.5**d.size  # n >= 2 here, so at most 0.5
        p = stats.ttest_rel(x, y).pvalue
    else:
        p = stats.wilcoxon(x, y, zero_method="pratt").pvalue
    return float(p) if np.isfinite(p) else 1.0


def mark_best(
    samples: dict[str, Sequence[float]], test: str = "t", alpha: float = 0.05
) -> dict[str, tuple[bool, float]]:
    """For paired samples per score, the lowest-mean score and those not significantly worse.

    Returns ``score -> (marked, p_value)``: the best (lowest mean) score is
    marked with p-value 1; another score is marked when the paired test
    against the best gives ``p >= alpha`` (no significant difference at the
    ``1 - alpha`` level).
    """
    means = {s: float(np.mean(v)) for s, v in samples.items() if len(v)}
    if not means:
        return {}
    best = min(means, key=means.get)
    out = {}
    for s, v in samples.items():
        if s == best:
            out[s] = (True, 1.0)
        elif not len(v):
            out[s] = (False, math.nan)
        else:
            p = paired_pvalue(v, samples[best], test)
            out[s] = (p >= alpha, p)
    return out


def pvalues_against_best(samples: dict[str, Sequence[float]]) -> dict[str, dict[str, float]]:
    """``score -> {test: p}`` of every paired test against the lowest-mean score (1 for the best itself)."""
    means = {s: float(np.mean(v)) for s, v in samples.items() if len(v)}
    if not means:
        return {}
    best = min(means, key=means.get)
    return {
        s: {t: (1.0 if s == best else paired_pvalue(v, samples[best], t)) for t in TESTS}
        for s, v in samples.items()
        if len(v)
    }
