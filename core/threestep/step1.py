"""The measurement model's uncertainty carried into step 3 (Bakk, Oberski and Vermunt 2014, Political
Analysis 22(4)).

Step 3's standard errors take the classification error ``D`` as known, but ``D``
is estimated from step 1's posteriors: its sampling error makes them somewhat
too small where the classes are poorly separated. The correction adds::

    J V1 J'

to step 3's covariance, ``V1`` the covariance of the measurement model's
log-ratio parameters (:mod:`effdim.standard_errors`: the observed information,
or the sandwich for a fit with sampling weights) and ``J`` the derivative of
step 3's estimates with respect to them. ``J`` is taken by central differences:
each parameter is moved, the posteriors and ``D`` follow (the assignment ``W``
held, as observed data), and step 3 is solved again. Where the measurement
model is not identified (``de < ds``: its information is singular, the
posteriors are not unique) the correction is not defined and is left out with a
note.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["STEP", "STEP1_NOT_IDENTIFIED", "step1_covariance", "with_step1"]

#: The central differences' step in the log-ratio parameters.
STEP = 1e-5
#: The note of an estimate whose step-1 uncertainty could not be added.
STEP1_NOT_IDENTIFIED = (
    "the measurement model is not identified (de < ds): its uncertainty is not added to the standard errors"
)


def step1_covariance(fit: Any, rows: Any, estimate: Callable[[Any], np.ndarray]) -> np.ndarray | None:
    """``J V1 J'`` (module docstring) for ``estimate(rows.at(params))``, step 3's estimates as a vector; ``None``
    where the measurement model's information is singular."""
    from ..distribution import Parameters
    from ..standard_errors.information import covariance
    from ..standard_errors.parameters import Parametrisation

    case = getattr(fit, "case", None)
    weighted = case is not None and case.weights is not None
    par = Parametrisation(fit.params)
    cov, _ = covariance(par, fit.model_data(), "robust" if weighted else "observed", case.squares if weighted else None)
    if cov.nullity:
        return None
    eta = par.eta()
    moved = np.concatenate([eta + STEP * np.eye(eta.size), eta - STEP * np.eye(eta.size)])
    cpts, _ = par.points(moved)
    values = []
    for s in range(moved.shape[0]):
        params = Parameters(fit.model, {node: table[s] for node, table in cpts.items()})
        values.append(estimate(rows.at(params)))
    values = np.array(values)
    jacobian = ((values[: eta.size] - values[eta.size :]) / (2 * STEP)).T
    return jacobian @ cov.matrix @ jacobian.T


def with_step1(
    fit: Any, rows: Any, estimate: Callable[[Any], np.ndarray], covariance: np.ndarray, se_method: str
) -> tuple[np.ndarray, str, str | None]:
    """Step 3's ``covariance`` and ``se_method`` with :func:`step1_covariance` added, and the note of its
    absence (``None`` when it was added)."""
    added = step1_covariance(fit, rows, estimate)
    if added is None:
        return covariance, se_method, STEP1_NOT_IDENTIFIED
    return covariance + added, f"{se_method}, with step 1's uncertainty", None
