"""Distal outcomes of a fitted model's classes by the three-step method: the entry point.

:func:`distal_outcomes` takes a fit (step 1), the data it was fitted to
with the outcome columns beside the items, and for each outcome assigns the
units to classes (step 2, :mod:`effdim.threestep.classification`) and
estimates the class-specific means or category probabilities (step 3) by

* ``"bch"``: the BCH correction (:mod:`effdim.threestep.weighted`), the default;
* ``"ml"``: the ML correction (:mod:`effdim.threestep.ml`);
* ``"modal"``, ``"proportional"``: the uncorrected methods, biased towards
  equal classes whenever classification is not perfect (for comparison).

Each outcome is analysed on its own, with the units that have a value
(a unit without one is counted in ``n_missing``; under the ML method it still
informs the class shares), with a Wald test that every class has the same
mean or probabilities (:mod:`effdim.threestep.wald`).

Examples
--------
Three rows like the first for each like the second, and an outcome ``z``
high in the first kind:

>>> from effdim import fit
>>> from effdim.threestep import distal_outcomes
>>> from effdim.reading import load_csv
>>> first = [(1, 1, 1, 1, 8), (1, 1, 1, 2, 7), (1, 2, 1, 1, 6)] * 60
>>> second = [(2, 2, 2, 2, 1), (2, 2, 1, 2, 2), (2, 2, 2, 1, 3)] * 20
>>> text = "a,b,c,d,z\\n" + "\\n".join(",".join(map(str, row)) for row in first + second)
>>> data = load_csv(text.encode(), name="demo.csv")
>>> fitted = fit(data, "X:2:a:2,b:2,c:2,d:2", seed=1, warn=False)
>>> [out] = distal_outcomes(fitted, data, {"z": "continuous"})
>>> out.method, out.kind, out.estimates.round(1).ravel().tolist()
('bch', 'continuous', [7.0, 2.0])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

from ..data import DataError, Dataset
from ..errors import InvalidArgument, shown
from .classification import Classification, classify
from .ml import SHARES, ml_step3
from .outcome import Outcome
from .request import checked_node
from .result import DistalOutcome
from .step1 import with_step1
from .units import FitRows, Units, fit_rows
from .wald import equality_test
from .weighted import class_means

__all__ = ["distal_outcomes"]


def distal_outcomes(
    fit: Any,
    data: Dataset,
    outcomes: str | Sequence[str] | Mapping[str, str],
    *,
    method: str = "bch",
    assignment: str = "modal",
    node: str | None = None,
    shares: str = "estimated",
    step1: bool = False,
) -> list[DistalOutcome]:
    """The three-step estimates of each outcome (module docstring).

    Parameters
    ----------
    fit:
        A :class:`effdim.FitResult` that keeps its data (step 1).
    data:
        The data the model was fitted to, with the outcome columns.
    outcomes:
        A column, a list of columns (each of kind ``"auto"``), or a mapping
        column -> ``"auto"``, ``"categorical"`` or ``"continuous"``
        (:func:`effdim.threestep.outcome.outcome_kind`).
    method:
        One of :data:`effdim.threestep.result.METHODS`.
    assignment:
        Step 2's assignment for the BCH and ML corrections (``"modal"`` or
        ``"proportional"``; :data:`effdim.threestep.classification.ASSIGNMENTS`).
    node:
        The hidden node whose classes are compared; default the root.
    shares:
        The ML method's class shares: ``"estimated"`` in step 3, or held at the
        ``"measurement"`` model's (:mod:`effdim.threestep.ml`).
    step1:
        Add the measurement model's uncertainty to the standard errors (Bakk,
        Oberski and Vermunt 2014; :mod:`effdim.threestep.step1`); by default
        the classification error is taken as known.
    """
    node = checked_node(fit, node, method, assignment)
    if shares not in SHARES:
        raise InvalidArgument(f"the class shares must be one of {', '.join(SHARES)}, got {shares!r}")
    kinds = _kinds(outcomes)
    rows = fit_rows(fit, data, node)
    options = {"node": node, "method": method, "assignment": assignment, "shares": shares, "step1": bool(step1)}
    return [_analyse(fit, rows, column, kind, options) for column, kind in kinds.items()]


def _kinds(outcomes: str | Sequence[str] | Mapping[str, str]) -> dict[str, str]:
    if isinstance(outcomes, str):
        kinds = {outcomes: "auto"}
    elif isinstance(outcomes, Mapping):
        kinds = {str(k): v for k, v in outcomes.items()}
    else:
        kinds = {}
        for column in outcomes:
            if column in kinds:
                raise InvalidArgument(f"the outcome {shown(str(column))} is named twice")
            kinds[str(column)] = "auto"
    if not kinds:
        raise InvalidArgument("name at least one distal outcome")
    return kinds


class _Step3(NamedTuple):
    estimates: np.ndarray
    covariance: np.ndarray
    shares: np.ndarray
    sd: np.ndarray | None
    boundary: tuple
    se_method: str
    notes: list
    ml: Any = None  # the ML correction's fit, the start of its refits (effdim.threestep.step1)


def _step3(
    units: Units, outcome: Outcome, classification: Classification, method: str, shares: str, classes, start=None
) -> _Step3:
    """Step 3 of one outcome by ``method`` on the classification of step 2 (an ML fit from ``start``)."""
    if method == "ml":
        found = ml_step3(classification, units, outcome, shares=shares, start=start)
        notes = _ml_notes(found, outcome, classes)
        return _Step3(found.means, found.covariance, found.shares, found.sd, found.boundary, found.se, notes, found)
    seen = outcome.observed
    weights = _class_weights(classification, method)
    used, present = units.take(seen), outcome.take(seen)
    y = present.design()
    if outcome.kind == "continuous":
        y = np.hstack([y, y**2])
    found = class_means(weights[seen], y, used.mass, used.meat, probabilities=outcome.kind == "categorical")
    estimates, covariance, sd = found.means, found.covariance, None
    if outcome.kind == "continuous":
        variance = estimates[:, 1] - estimates[:, 0] ** 2
        sd = np.sqrt(np.where(variance >= 0, variance, np.nan))
        estimates, covariance = estimates[:, :1], covariance[::2, ::2]
    notes = [
        f"class {classes[c]}: the BCH weights give category {present.categories[j]!r} a negative count; "
        "its probability is set to 0"
        for c, j in found.clipped
    ]
    return _Step3(estimates, covariance, found.sizes / found.sizes.sum(), sd, found.clipped, "robust", notes)


def _analyse(fit: Any, rows: FitRows, column: str, kind: str, options: dict) -> DistalOutcome:
    node, method = options["node"], options["method"]
    units, outcome = rows.with_outcome(column, kind)
    classes = tuple(fit.labels.state(node, c) for c in range(units.n_classes))
    assignment = "proportional" if method == "proportional" else options["assignment"]
    classification = classify(units, assignment)
    seen = outcome.observed
    n, n_missing = float(units.mass[seen].sum()), float(units.mass[~seen].sum())
    if n <= 0:
        raise DataError(f"the outcome {shown(outcome.name)} has no values")
    found = _step3(units, outcome, classification, method, options["shares"], classes)
    notes = list(found.notes)
    if rows.left_out:
        notes.append(f"{rows.left_out:g} rows left out of the fit (a missing or zero weight) are left out here too")
    covariance, se_method = found.covariance, found.se_method
    if options["step1"]:

        def again(at: FitRows) -> np.ndarray:
            moved, _ = at.with_outcome(column, kind)
            error = classify(moved, assignment, assigned=classification.assigned)
            return _step3(moved, outcome, error, method, options["shares"], classes, found.ml).estimates.ravel()

        covariance, se_method, note = with_step1(fit, rows, again, covariance, se_method)
        notes += [note] if note else []
    return DistalOutcome(
        column=outcome.name,
        kind=outcome.kind,
        method=method,
        node=node,
        classes=classes,
        categories=outcome.categories,
        estimates=found.estimates,
        covariance=covariance,
        shares=found.shares,
        sd=found.sd,
        wald=equality_test(found.estimates, covariance),
        n=n,
        n_missing=n_missing,
        se_method=se_method,
        boundary=found.boundary,
        notes=tuple(notes),
        classification=classification,
    )


def _class_weights(classification: Classification, method: str) -> np.ndarray:
    return classification.bch_weights() if method == "bch" else classification.assigned


def _ml_notes(found: Any, outcome: Outcome, classes: tuple) -> list[str]:
    notes = []
    if not found.converged:
        notes.append("the ML correction's maximisation stopped before it converged")
    if found.singular:
        notes.append("the ML correction's information matrix is singular: no standard errors")
    for c, j in found.boundary:
        if outcome.kind == "categorical":
            notes.append(
                f"class {classes[c]}: category {outcome.categories[j]!r} has probability 0 (no standard error)"
            )
        else:
            notes.append(f"class {classes[c]}: the variance of {outcome.name!r} reached its lower bound")
    return notes
