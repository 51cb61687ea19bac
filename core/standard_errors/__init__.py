"""Standard errors of a fitted LC or HLC model: every probability, every class share, every coefficient.

:func:`standard_errors` takes the covariance of the log-ratio parameters (:mod:`.parameters`) by one of
three estimates (:mod:`.information`: ``observed``, ``empirical``, ``robust``) and carries it to the
probability scale by the delta method: ``se(f) = sqrt(g^T V g)`` with ``g`` the gradient of ``f``
(analytic for the tables' entries, central differences for the hidden nodes' shares, which are sums of
products of the tables; a regression's shares are its mean class probabilities over the rows, as
poLCA's ``P.se``).

No standard error is made up: an entry on the boundary (within :data:`.parameters.BOUNDARY` of 0, or
the 1 of a row with one category left) is flagged ``"boundary"``; a quantity that moves along the null
space of a singular information (where ``de < ds``) is flagged ``"not identified"``; both have NaN
for a standard error. Confidence intervals of probabilities are Wald intervals on the logit scale,
carried back (they stay inside 0-1); of coefficients, on their own scale (odds ratios: exponentiated).

Modules: :mod:`.parameters` (the log-ratio form), :mod:`.scores` (scores per pattern and summed),
:mod:`.information` (the three estimates, singular information).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..distribution import Parameters
from ..em.design import ModelData
from ..errors import InvalidArgument
from .information import METHODS, STEP, Covariance, covariance
from .parameters import BOUNDARY, Parametrisation

__all__ = ["BOUNDARY_FLAG", "METHODS", "NOT_IDENTIFIED", "StandardErrors", "logit_interval", "standard_errors"]

#: The flag of an entry held on the boundary of the parameter space.
BOUNDARY_FLAG = "boundary"
#: The flag of a quantity that a singular information leaves without a standard error.
NOT_IDENTIFIED = "not identified"


@dataclass(frozen=True)
class StandardErrors:
    """The standard errors of one fit by one ``method`` (module docstring).

    ``tables[node]`` is shaped as the node's CPT (NaN where ``flags`` says
    why there is none: ``"boundary"`` or ``"not identified"``, else ``""``);
    ``shares[node]`` the standard errors of each hidden node's marginal
    shares (a regression's root: its mean class probabilities);
    ``coefficients`` those of a regression's coefficients (``p x (k - 1)``,
    with ``coefficient_covariance`` over ``coefficients.ravel()``);
    ``n_free`` the free log-ratio parameters, ``nullity`` the dimension of
    the information's null space, ``negative`` its clearly negative
    eigenvalues (none at a maximum).
    """

    method: str
    tables: dict
    flags: dict
    shares: dict
    share_flags: dict
    n_free: int
    nullity: int
    negative: int
    n_boundary: int
    coefficients: np.ndarray | None = None
    coefficient_flags: np.ndarray | None = None
    coefficient_covariance: np.ndarray | None = field(default=None, repr=False)
    n_separated: int = 0

    def notes(self) -> list[str]:
        """Sentences on what has no standard error and why (empty when every quantity has one)."""
        notes = []
        if self.n_boundary:
            notes.append(
                f"{self.n_boundary} probabilities are on the boundary (0 or 1): held there, without a standard error"
            )
        if self.nullity:
            missing = sum(int(np.sum(f == NOT_IDENTIFIED)) for f in self.flags.values())
            notes.append(
                f"the information is singular ({self.nullity} of {self.n_free} directions flat): "
                f"{missing} probabilities are not identified and have no standard error"
            )
        if self.n_separated:
            notes.append(
                f"{self.n_separated} coefficients head to infinity: a class's probability is 0 at some covariate "
                "values (separation); they are flagged, without a standard error"
            )
        if self.negative:
            notes.append(
                f"the observed information has {self.negative} negative eigenvalues: the estimate is not a maximum "
                "of the likelihood, and its standard errors are not to be trusted"
            )
        return notes


def standard_errors(
    params: Parameters,
    md: ModelData,
    *,
    method: str = "observed",
    coefficients: np.ndarray | None = None,
    squares: np.ndarray | None = None,
) -> StandardErrors:
    """The standard errors of the fit ``params`` (and a regression's ``coefficients``) to the data ``md``.

    ``md`` must be the data the fit was made on (:class:`effdim.em.ModelData`, with the regression's
    design); ``squares`` each pattern's sum of squared weights (``robust``, sampling weights).
    """
    if method not in METHODS:
        raise InvalidArgument(f"the standard errors are {', '.join(METHODS)}, not {method!r}")
    par = Parametrisation(params, coefficients)
    cov, _ = covariance(par, md, method, squares)
    model = params.model
    tables, flags = {}, {}
    n_boundary = 0
    for node in model.nodes:
        if node == model.root and coefficients is not None:
            continue
        jac = par.probability_jacobian(node)
        table = np.asarray(params.cpts[node])
        var = cov.variance(jac.reshape(-1, par.n_free)).reshape(table.shape)
        boundary = par.on_boundary(node)
        n_boundary += int(boundary.sum())
        flag = np.where(boundary, BOUNDARY_FLAG, np.where(np.isnan(var), NOT_IDENTIFIED, "")).astype(object)
        tables[node] = np.where(flag == "", np.sqrt(np.nan_to_num(var)), np.nan)
        flags[node] = flag
    shares, share_flags = _share_errors(par, md, cov)
    if coefficients is not None:
        root = model.root
        tables[root], flags[root] = shares[root], share_flags[root]
        beta_cols = slice(par.beta_offset, par.n_free)
        grad = np.zeros((coefficients.size, par.n_free))
        grad[:, beta_cols] = np.eye(coefficients.size)
        var = cov.variance(grad).reshape(coefficients.shape)
        coef_flags = np.where(np.isnan(var), NOT_IDENTIFIED, "").astype(object)
        separated = _separated(md, coefficients)
        coef_flags[separated] = BOUNDARY_FLAG
        var[separated] = np.nan
        return StandardErrors(
            method,
            tables,
            flags,
            shares,
            share_flags,
            par.n_free,
            cov.nullity,
            cov.negative,
            n_boundary,
            np.sqrt(var),
            coef_flags,
            cov.matrix[beta_cols, beta_cols].copy(),
            int(separated.sum()),
        )
    return StandardErrors(method, tables, flags, shares, share_flags, par.n_free, cov.nullity, cov.negative, n_boundary)


#: In a regression whose class probabilities reach the boundary at some covariate values, a coefficient at
#: least this large (in log odds) is taken as heading to infinity (separation).
SEPARATION = 10.0


def _separated(md: ModelData, coefficients: np.ndarray) -> np.ndarray:
    """A mask of the coefficients that separation drives to infinity: where some distinct row of covariates
    gives a class a probability within :data:`.parameters.BOUNDARY` of 0, the coefficients of at least
    :data:`SEPARATION` in size."""
    probs = md.design.probabilities(coefficients[None]) if md.design is not None else None
    if probs is None or probs.min() >= BOUNDARY:
        return np.zeros(coefficients.shape, dtype=bool)
    return np.abs(coefficients) >= SEPARATION


def _share_errors(par: Parametrisation, md: ModelData, cov: Covariance) -> tuple[dict, dict]:
    """Standard errors of every hidden node's marginal shares (central differences of the shares)."""
    eta = par.eta()
    d = eta.size
    points = np.concatenate([eta + STEP * np.eye(d), eta - STEP * np.eye(d)]) if d else np.zeros((0, 0))
    plus_minus = _shares_at(par, md, points)
    shares, flags = {}, {}
    for node, values in plus_minus.items():
        grad = ((values[:d] - values[d:]) / (2 * STEP)).T  # (k, d)
        var = cov.variance(grad)
        flag = np.where(np.isnan(var), NOT_IDENTIFIED, "").astype(object)
        shares[node] = np.where(flag == "", np.sqrt(np.nan_to_num(var)), np.nan)
        flags[node] = flag
    return shares, flags


def _shares_at(par: Parametrisation, md: ModelData, etas: np.ndarray) -> dict:
    """Each hidden node's marginal shares at the points ``etas``: node -> ``(S, k)``."""
    cpts, beta = par.points(etas)
    model = par.model
    out: dict = {}
    for node in model.nodes:
        if not model.is_hidden(node):
            continue
        parent = model.parent(node)
        if parent is None:
            if beta is None:
                out[node] = cpts[node]
            else:
                probs = md.design.probabilities(beta)  # (S, k, m)
                out[node] = probs @ md.counts / md.counts.sum()
        else:
            out[node] = np.einsum("su,suk->sk", out[parent], cpts[node])
    return out


def interval_z(level: float) -> float:
    """The normal quantile of a two-sided ``level`` confidence interval, ``level`` checked (0.5 to 0.999999).

    >>> round(interval_z(0.95), 4)
    1.96
    """
    from statistics import NormalDist

    from ..validation import check_number

    return NormalDist().inv_cdf(0.5 + check_number("the confidence level", level, low=0.5, high=0.999999) / 2)


def logit_interval(value: np.ndarray, se: np.ndarray, z: float = 1.959963984540054) -> tuple[np.ndarray, np.ndarray]:
    """Wald intervals of probabilities on the logit scale, carried back: ``logit(p) +- z se / (p (1 - p))``.

    >>> low, high = logit_interval(np.array([0.5]), np.array([0.1]))
    >>> round(float(low[0]), 3), round(float(high[0]), 3)
    (0.313, 0.687)
    """
    p = np.clip(np.asarray(value, dtype=float), 1e-12, 1 - 1e-12)
    half = z * np.asarray(se, dtype=float) / (p * (1 - p))
    centre = np.log(p / (1 - p))
    with np.errstate(over="ignore"):  # an infinite half width: the whole of 0-1
        return 1 / (1 + np.exp(-(centre - half))), 1 / (1 + np.exp(-(centre + half)))
