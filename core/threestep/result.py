"""What a three-step analysis of one distal outcome returns: :class:`DistalOutcome`, as a table and as JSON."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .classification import Classification
from .wald import Wald

__all__ = ["METHODS", "DistalOutcome", "has_step1", "se_words"]

#: The step-3 methods and what each is, in the words shown to the user.
METHODS = {
    "bch": "BCH correction (Vermunt 2010; Bakk, Tekle and Vermunt 2013)",
    "ml": "ML correction (Vermunt 2010; Bakk, Tekle and Vermunt 2013)",
    "modal": "modal assignment, uncorrected",
    "proportional": "proportional assignment, uncorrected",
}


def has_step1(se_method: str) -> bool:
    """Whether standard errors of this ``se_method`` carry step 1's uncertainty (:func:`effdim.threestep.step1.with_step1`
    names it so)."""
    return "step 1" in se_method


def se_words(se_method: str) -> str:
    """How the standard errors were made, in words: ``"robust, the classification error taken as known"``, or
    with step 1's uncertainty added (:mod:`effdim.threestep.step1`)."""
    return se_method if has_step1(se_method) else f"{se_method}, the classification error taken as known"


def _plain(x: float) -> float | None:
    return float(x) if math.isfinite(x) else None


@dataclass(frozen=True)
class DistalOutcome:
    """One distal outcome's class-specific means (continuous) or category probabilities (categorical).

    Attributes
    ----------
    column, kind, method, node:
        The outcome's column; ``"continuous"`` or ``"categorical"``; the step-3
        method (:data:`METHODS`); the hidden node whose classes are compared.
    classes, categories:
        The labels of the node's states and of the outcome's categories.
    estimates, covariance:
        ``(K, J)`` means (``J = 1``) or probabilities, and their class-major
        covariance ``(K*J, K*J)``.
    shares:
        The class shares step 3 works with (its estimate for the ML method;
        the classes' weighted sizes among the units with a value otherwise).
    sd:
        Class standard deviations of a continuous outcome (NaN where the BCH
        weights give a negative variance); ``None`` for a categorical one.
    wald:
        The test that every class has the same mean or probabilities (:mod:`effdim.threestep.wald`).
    n, n_missing:
        Weighted count of the units with a value, and without one (left out of the class estimates).
    se_method:
        ``"robust"`` (sandwich) or ``"observed"`` (observed information).
    boundary:
        ``(class, category)`` cells with a probability of 0 (no standard error), or for a
        continuous outcome the classes whose variance reached its floor.
    notes:
        Sentences on anything that weakens the estimates.
    classification:
        Step 2's :class:`effdim.threestep.classification.Classification`.
    """

    column: str
    kind: str
    method: str
    node: str
    classes: tuple
    categories: tuple
    estimates: np.ndarray = field(repr=False)
    covariance: np.ndarray = field(repr=False)
    shares: np.ndarray = field(repr=False)
    sd: np.ndarray | None = field(repr=False)
    wald: Wald
    n: float
    n_missing: float
    se_method: str
    boundary: tuple = ()
    notes: tuple = ()
    classification: Classification | None = field(default=None, repr=False)

    @property
    def se(self) -> np.ndarray:
        """Standard errors shaped as :attr:`estimates`; NaN on the boundary."""
        se = np.sqrt(np.clip(np.diag(self.covariance), 0.0, None)).reshape(self.estimates.shape)
        for c, j in self.boundary:
            if self.kind == "categorical":
                se[c, j] = np.nan
        return se

    def intervals(self, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
        """Lower and upper bounds of the ``level`` confidence intervals: estimate +- z SE for means;
        for probabilities the same on the log-odds scale, taken back (so they stay within 0 and 1)."""
        from ..standard_errors import interval_z, logit_interval

        z = interval_z(level)
        est, se = self.estimates, self.se
        if self.kind == "continuous":
            return est - z * se, est + z * se
        with np.errstate(over="ignore", invalid="ignore"):
            lower, upper = logit_interval(est, se, z)
        inside = (est > 0) & (est < 1) & np.isfinite(se)
        return np.where(inside, lower, np.nan), np.where(inside, upper, np.nan)

    def table(self, level: float = 0.95) -> pd.DataFrame:
        """One row per class (and category): ``class``, [``category``], ``estimate``, ``se``, ``lower``, ``upper``."""
        lower, upper = self.intervals(level)
        rows = []
        for c, label in enumerate(self.classes):
            for j in range(self.estimates.shape[1]):
                row: dict[str, Any] = {"class": label}
                if self.kind == "categorical":
                    row["category"] = self.categories[j]
                row.update(estimate=self.estimates[c, j], se=self.se[c, j], lower=lower[c, j], upper=upper[c, j])
                rows.append(row)
        return pd.DataFrame(rows)

    def to_json(self, level: float = 0.95) -> dict:
        """``column``, ``method``, ``type``, ``node``, ``se_method``, ``n``, ``n_missing``, ``by_state`` (each
        state's ``share`` and ``mean``/``se``/``ci``/``sd``, or ``probabilities``/``se``/``ci`` keyed by
        category), ``wald``, ``classification`` and ``notes``."""
        lower, upper = self.intervals(level)
        se = self.se
        by_state = []
        for c, label in enumerate(self.classes):
            entry: dict[str, Any] = {"state": _label(label), "share": float(self.shares[c])}
            if self.kind == "continuous":
                entry.update(
                    mean=float(self.estimates[c, 0]),
                    se=_plain(se[c, 0]),
                    ci=[_plain(lower[c, 0]), _plain(upper[c, 0])],
                    sd=_plain(self.sd[c]),
                )
            else:
                keys = [str(k) for k in self.categories]
                entry["probabilities"] = {k: float(self.estimates[c, j]) for j, k in enumerate(keys)}
                entry["se"] = {k: _plain(se[c, j]) for j, k in enumerate(keys)}
                entry["ci"] = {k: [_plain(lower[c, j]), _plain(upper[c, j])] for j, k in enumerate(keys)}
            by_state.append(entry)
        return {
            "column": self.column,
            "method": self.method,
            "type": self.kind,
            "node": self.node,
            "se_method": self.se_method,
            "level": level,
            "n": _count(self.n),
            "n_missing": _count(self.n_missing),
            "by_state": by_state,
            "wald": self.wald.to_json(),
            "classification": None if self.classification is None else self.classification.to_json(),
            "notes": list(self.notes),
        }


def _label(label: Any) -> Any:
    return label.item() if isinstance(label, np.generic) else label


def _count(x: float) -> int | float:
    return int(x) if float(x).is_integer() else float(x)
