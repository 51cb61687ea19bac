"""The information matrices of a fit and the covariance of its estimate, singular ones included.

Three estimates of the covariance of the log-ratio parameters ``eta`` (:mod:`.parameters`):

* ``observed``: the inverse of the observed information, minus the Hessian of the log-likelihood (the
  default of Latent GOLD and Mplus), taken as central differences of the exact gradient
  (:func:`.scores.gradients`) with steps of :data:`STEP` (scaled by each design column's size);
* ``empirical``: the inverse of the outer product of the patterns' scores, ``sum_p N(p) s_p s_p^T``
  (poLCA, Linzer & Lewis 2011, section 3.3);
* ``robust``: the sandwich ``A^-1 B A^-1``, ``A`` the observed information of the (weighted)
  log-likelihood and ``B = sum_p W2(p) s_p s_p^T`` with ``W2(p)`` the sum of the squared weights of
  the pattern's rows (Huber 1967, White 1982); for sampling weights, the with-replacement
  design-based variance without strata or clusters.

**Singular information.** Where the effective dimension is below the number of free parameters
(``de < ds``, Kocka & Zhang 2002, Section 2.4) the information has ``ds - de`` null directions: the
likelihood is flat along them and the parameters moving along them are not identified. Nothing is
inverted there: the information is scaled to a unit diagonal, and its null space is spanned by the
eigenvectors with eigenvalues below :data:`NULL_TOL` (times the largest), and by the smallest ones
below :data:`GAP_CEILING` that end in a gap of :data:`GAP` to the next (an estimate a little off the
flat set of maxima curves the flat directions a little: 5e-7 against 4e-2 next for Stouffer-Toby's
three classes converged to 1e-12, ``tests/test_standard_errors.py``); the covariance is the inverse on
the rest (the Moore-Penrose inverse). A quantity whose gradient has a part in the null space larger than
:data:`ESTIMABLE_TOL` of its length is *not identified* and gets no standard error; one whose gradient
is orthogonal to it (a function of the identified directions) gets its standard error from the
inverse on the rest, which is its exact variance there.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..em.design import ModelData
from .parameters import Parametrisation
from .scores import gradients, pattern_scores

__all__ = ["ESTIMABLE_TOL", "METHODS", "NULL_TOL", "STEP", "Covariance", "covariance"]

#: The estimates of the covariance, by name.
METHODS = ("observed", "empirical", "robust")
#: Central-difference step of the observed information, in log-ratio units (divided by the root mean
#: square of a coefficient's design column).
STEP = 1e-4
#: Eigenvalues of the unit-diagonal information below this times the largest are its null space.
NULL_TOL = 1e-7
#: The smallest eigenvalues below this (times the largest) followed by one :data:`GAP` times larger are
#: its null space too.
GAP_CEILING = 1e-4
GAP = 1e3
#: A gradient whose part in the null space exceeds this fraction of its length is not identified.
ESTIMABLE_TOL = 1e-3
#: Points whose gradient one E-step computes together (memory: points x hidden states x patterns).
_BATCH_CELLS = 1 << 23


@dataclass(frozen=True)
class Covariance:
    """The covariance of ``eta`` as one estimate gives it, with the information's null space.

    ``matrix``: the covariance (the inverse on the identified directions);
    ``null``: an orthonormal basis of the null space, in ``eta``'s own units
    (``(n_free, nullity)``); ``negative``: eigenvalues of the unit-diagonal
    information below ``-GAP_CEILING`` (a Hessian that is not negative
    definite: the estimate is not a maximum), their number.
    """

    method: str
    matrix: np.ndarray
    null: np.ndarray
    negative: int

    @property
    def nullity(self) -> int:
        return int(self.null.shape[1])

    def variance(self, gradient: np.ndarray) -> np.ndarray:
        """The variance of quantities with these gradients (rows ``(q, n_free)``); NaN where one is not
        identified (its gradient has a part in the null space)."""
        g = np.atleast_2d(gradient)
        var = np.einsum("qi,ij,qj->q", g, self.matrix, g)
        if self.nullity:
            length = np.linalg.norm(g, axis=1)
            part = np.linalg.norm(g @ self.null, axis=1)
            var = np.where(part > ESTIMABLE_TOL * np.maximum(length, 1e-300), np.nan, var)
        return np.maximum(var, 0.0)

    def identified(self, gradient: np.ndarray) -> np.ndarray:
        return ~np.isnan(self.variance(gradient))


def covariance(
    par: Parametrisation, md: ModelData, method: str, squares: np.ndarray | None = None
) -> tuple[Covariance, np.ndarray]:
    """The covariance of ``eta`` by ``method`` (module docstring), and the information it inverted.

    ``squares``: each pattern's sum of squared weights (``robust``; by default the counts).
    """
    if method == "empirical":
        scores = pattern_scores(par, md)
        info = scores.T @ (scores * md.counts[:, None])
        cov, null, negative = _inverse(info)
        return Covariance(method, cov, null, negative), info
    observed = observed_information(par, md)
    inverse, null, negative = _inverse(observed)
    if method == "observed":
        return Covariance(method, inverse, null, negative), observed
    scores = pattern_scores(par, md)
    w2 = md.counts if squares is None else squares
    meat = scores.T @ (scores * w2[:, None])
    return Covariance(method, inverse @ meat @ inverse, null, negative), observed


def observed_information(par: Parametrisation, md: ModelData) -> np.ndarray:
    """Minus the Hessian of the log-likelihood in ``eta``: central differences of the exact gradient."""
    eta = par.eta()
    d = eta.size
    steps = np.full(d, STEP)
    if md.design is not None:
        design = md.design.rows[md.design.index]
        scale = np.sqrt(np.average(design**2, axis=0, weights=md.counts))
        k1 = par.coefficients.shape[1]
        steps[par.beta_offset :] = STEP / np.repeat(np.maximum(scale, 1e-12), k1)
    points = np.concatenate([eta + np.diag(steps), eta - np.diag(steps)])
    per_point = md.n_patterns * md.n_hidden_states + md.n_leaf_states * md.n_hidden_states
    batch = max(1, _BATCH_CELLS // max(per_point, 1))
    grads = np.concatenate([gradients(par, md, points[i : i + batch]) for i in range(0, len(points), batch)])
    hessian = (grads[:d] - grads[d:]) / (2 * steps[:, None])
    hessian = 0.5 * (hessian + hessian.T)
    return -hessian


def _inverse(info: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """The inverse of a symmetric information on its identified directions, an orthonormal basis of its
    null space (in the parameters' own units) and the number of clearly negative eigenvalues."""
    d = info.shape[0]
    if d == 0:
        return np.zeros((0, 0)), np.zeros((0, 0)), 0
    diag = np.diag(info).copy()
    scale = np.sqrt(np.where(diag > 0, diag, 1.0))
    scaled = info / np.outer(scale, scale)
    values, vectors = np.linalg.eigh(scaled)
    top = max(float(np.abs(values).max()), 1e-300)
    regular = values > NULL_TOL * top
    small = np.abs(values) / top  # eigh sorts the eigenvalues increasing
    for k in range(int(np.sum(values < GAP_CEILING * top)), 0, -1):
        if k < d and values[k] > GAP * max(small[k - 1] * top, NULL_TOL * top):
            regular[:k] = False
            break
    negative = int(np.sum(values < -GAP_CEILING * top))
    zero_diag = diag <= 0
    inv_scaled = (vectors[:, regular] / values[regular]) @ vectors[:, regular].T
    inverse = inv_scaled / np.outer(scale, scale)
    null_scaled = vectors[:, ~regular]
    # the null space in eta's units: eta = D^-1/2 u, so a null direction u of the scaled matrix is D^-1/2 u
    null = null_scaled / scale[:, None]
    if zero_diag.any():  # a parameter without information (a row of an empty class): null by itself
        extra = np.zeros((d, int(zero_diag.sum())))
        extra[np.flatnonzero(zero_diag), np.arange(int(zero_diag.sum()))] = 1.0
        null = np.concatenate([null, extra], axis=1)
    if null.shape[1]:
        null, _ = np.linalg.qr(null)
    return inverse, null, negative
