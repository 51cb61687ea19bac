"""Model-selection scores of Kocka & Zhang (2002), Section 2.3.

All scores approximate the log marginal likelihood ``log p(D | G)`` of the
data ``D`` given the model structure ``G``, evaluated at an ML or MAP
estimate ``theta`` (from :func:`effdim.em.fit_em`). Natural logarithms
throughout; ``N = |D|`` is the number of data rows (the sum of the pattern
counts); ``ds`` is the standard dimension (number of free parameters) and
``de`` the effective dimension (:func:`effdim.dimensions.dimensions`).

* log-likelihood: ``LL = log p(D | G, theta) = sum_p N(p) log P(p | theta)``
* ``BIC  = LL - ds/2 log N``                      (Schwarz 1978)
* ``BIC+ = LL - de/2 log N``                      (Geiger et al. 1996)
* ``AIC  = LL - ds``                              (Akaike, on the log-likelihood scale)
* ``CS   = log p(D'| G) - log p(D'| G, theta) + LL``   (Cheeseman & Stutz 1995)
* ``CS+  = CS + (ds - de)/2 log N``               (Geiger et al. 1996)

``D'`` is the data completed by the final E-step: the expected counts
``N'_ijk`` (family ``i``: a node and its parent, every hidden family
included; ``j`` a parent state; ``k`` a state of the node; the root's family
has one ``j``). Its marginal likelihood is the Cooper-Herskovits formula
with Dirichlet hyper-parameters ``alpha_ijk = 1`` (GUIDE.md section 2)::

    log p(D' | G) = sum_ij [lgamma(alpha_ij) - lgamma(alpha_ij + N'_ij)]
                  + sum_ijk [lgamma(alpha_ijk + N'_ijk) - lgamma(alpha_ijk)],

``alpha_ij = sum_k alpha_ijk = r_i``, ``N'_ij = sum_k N'_ijk``, and the
completed-data log-likelihood is ``log p(D' | G, theta) = sum_ijk N'_ijk
log theta_ijk`` (``0 log 0 = 0``). ``theta`` must be the estimate that
produced ``N'`` (Chickering & Heckerman 1997), which
:class:`effdim.em.EMResult` guarantees. As in the paper, no ``log r!``
correction for relabelling hidden states is applied.
"""

from __future__ import annotations

import functools
import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from scipy.special import gammaln

from .model import HLCModel

__all__ = [
    "Scores",
    "bic",
    "bic_plus",
    "aic",
    "cooper_herskovits",
    "completed_loglik",
    "cheeseman_stutz",
    "cs_plus",
    "model_dimensions",
    "score_fit",
    "SCORE_NAMES",
]

#: Accepted score names -> attribute of :class:`Scores`.
SCORE_NAMES = {
    "loglik": "loglik",
    "bic": "bic",
    "bic+": "bic_plus",
    "bic_plus": "bic_plus",
    "cs": "cs",
    "cs+": "cs_plus",
    "cs_plus": "cs_plus",
    "aic": "aic",
}


def bic(loglik: float, ds: int, n: float) -> float:
    """``BIC = LL - ds/2 log N`` (Section 2.3)."""
    return float(loglik) - ds / 2.0 * math.log(n)


def bic_plus(loglik: float, de: int, n: float) -> float:
    """``BIC+ = LL - de/2 log N``: BIC with the effective dimension (Section 2.3)."""
    return float(loglik) - de / 2.0 * math.log(n)


def aic(loglik: float, ds: int) -> float:
    """``AIC = LL - ds`` (half of Akaike's ``2 LL - 2 ds``, on the scale of the other scores)."""
    return float(loglik) - ds


def cooper_herskovits(counts: dict[str, np.ndarray], alpha: float = 1.0) -> float:
    """``log p(D' | G)`` of completed data with expected counts ``N'_ijk`` (Section 2.3).

    ``counts[node]`` has shape ``(r,)`` for the root and ``(q, r)`` for a
    node with ``q`` parent states; each row is one ``j``::

        sum_ij [lgamma(alpha_ij) - lgamma(alpha_ij + N'_ij)]
        + sum_ijk [lgamma(alpha_ijk + N'_ijk) - lgamma(alpha_ijk)],

    with ``alpha_ijk = alpha`` (1 in the paper) and ``alpha_ij = r * alpha``.
    """
    total = 0.0
    for table in counts.values():
        t = np.atleast_2d(np.asarray(table, dtype=np.float64))
        r = t.shape[1]
        a_ij = r * alpha
        n_ij = t.sum(axis=1)
        total += float(np.sum(gammaln(a_ij) - gammaln(a_ij + n_ij)))
        total += float(np.sum(gammaln(alpha + t) - gammaln(alpha)))
    return total


def completed_loglik(counts: dict[str, np.ndarray], cpts: dict[str, np.ndarray]) -> float:
    """``log p(D' | G, theta) = sum_ijk N'_ijk log theta_ijk`` with ``0 log 0 = 0``."""
    total = 0.0
    for node, table in counts.items():
        n = np.asarray(table, dtype=np.float64)
        theta = np.asarray(cpts[node], dtype=np.float64)
        used = n > 0
        with np.errstate(divide="ignore"):
            total += float(np.sum(n[used] * np.log(theta[used])))
    return total


def cheeseman_stutz(loglik: float, counts: dict[str, np.ndarray], cpts: dict[str, np.ndarray], alpha: float = 1.0) -> float:
    """``CS = log p(D'|G) - log p(D'|G, theta) + log p(D|G, theta)`` (Section 2.3).

    ``counts`` are the expected counts of the E-step at ``theta`` (``cpts``)
    and ``loglik`` is ``log p(D | G, theta)`` at the same ``theta``.
    """
    return cooper_herskovits(counts, alpha) - completed_loglik(counts, cpts) + float(loglik)


def cs_plus(cs: float, ds: int, de: int, n: float) -> float:
    """``CS+ = CS + (ds - de)/2 log N``: CS with the effective dimension (Section 2.3)."""
    return float(cs) + (ds - de) / 2.0 * math.log(n)


@functools.lru_cache(maxsize=512)
def _dims(model: HLCModel) -> tuple[int, int]:
    from .dimensions import dimensions

    report = dimensions(model)
    return int(report.ds), int(report.de)


def model_dimensions(model: HLCModel) -> tuple[int, int]:
    """``(ds, de)`` of ``model`` from :func:`effdim.dimensions.dimensions` (cached per model)."""
    return _dims(model)


@dataclass(frozen=True)
class Scores:
    """Every score of one fitted model (natural logs; ``n = |D|``)."""

    loglik: float
    bic: float
    bic_plus: float
    cs: float
    cs_plus: float
    aic: float
    ds: int
    de: int
    n: float

    def get(self, name: str) -> float:
        """A score by name: ``loglik``, ``bic``, ``bic+``, ``cs``, ``cs+``, ``aic``."""
        try:
            return float(getattr(self, SCORE_NAMES[name.lower()]))
        except KeyError:
            raise ValueError(f"unknown score {name!r}; choose from bic, bic+, cs, cs+, aic") from None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def score_fit(fit: Any, *, ds: int | None = None, de: int | None = None) -> Scores:
    """All scores of an :class:`effdim.em.EMResult` (``ds``, ``de`` computed unless given)."""
    if ds is None or de is None:
        d_s, d_e = model_dimensions(fit.model)
        ds = d_s if ds is None else ds
        de = d_e if de is None else de
    n = fit.n
    ll = fit.loglik
    cs = cheeseman_stutz(ll, fit.expected_counts, fit.params.cpts)
    return Scores(
        loglik=float(ll),
        bic=bic(ll, ds, n),
        bic_plus=bic_plus(ll, de, n),
        cs=cs,
        cs_plus=cs_plus(cs, ds, de, n),
        aic=aic(ll, ds),
        ds=int(ds),
        de=int(de),
        n=float(n),
    )
