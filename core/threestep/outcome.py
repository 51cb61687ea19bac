"""A distal outcome: a column left out of the measurement model, whose relation to the classes step 3 estimates.

An outcome is *categorical* (class-specific category probabilities) or
*continuous* (class-specific means, and in the ML method class-specific
variances of a normal distribution). :func:`outcome_kind` decides ``"auto"``:
a column whose values are not all numbers is categorical; a numeric column is
continuous when it has more than :data:`MOST_CATEGORIES` distinct values (an
age, a score), else categorical (a vote coded 1-3, a yes/no coded 0/1). Say
which you mean where the rule does not fit (an ordinal scale of 12 points
analysed as categories, a count of 0-5 analysed as a mean).
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field

import numpy as np

from ..errors import InvalidArgument, shown

__all__ = ["KINDS", "MOST_CATEGORIES", "Outcome", "outcome_kind"]

#: The kinds of outcome, and what step 3 estimates of each per class.
KINDS = {"categorical": "probabilities", "continuous": "mean"}
#: A numeric column with at most this many distinct values is categorical under ``"auto"``.
MOST_CATEGORIES = 10


def _is_number(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and np.isfinite(value)


def outcome_kind(column: str, states: tuple, kind: str = "auto") -> str:
    """The kind of the outcome in ``column`` with distinct values ``states`` (module docstring).

    >>> outcome_kind("VOTE3", (1, 2, 3)), outcome_kind("AGE", tuple(range(18, 90)))
    ('categorical', 'continuous')
    >>> outcome_kind("party", ("left", "right"), "continuous")
    Traceback (most recent call last):
    ...
    effdim.errors.InvalidArgument: the outcome party cannot be continuous: its value 'left' is not a number
    """
    if kind not in ("auto", *KINDS):
        raise InvalidArgument(f"the kind of an outcome is auto, {' or '.join(KINDS)}; got {kind!r}")
    numeric = all(_is_number(s) for s in states)
    if kind == "continuous" and not numeric:
        value = next(s for s in states if not _is_number(s))
        raise InvalidArgument(f"the outcome {shown(column)} cannot be continuous: its value {value!r} is not a number")
    if kind != "auto":
        return kind
    return "continuous" if numeric and len(states) > MOST_CATEGORIES else "categorical"


@dataclass(frozen=True)
class Outcome:
    """The outcome's values per unit: category codes (``-1`` missing) or numbers (``NaN`` missing).

    ``categories`` are the labels of the codes (categorical outcomes only).
    """

    name: str
    kind: str
    values: np.ndarray = field(repr=False)
    categories: tuple = ()

    @property
    def observed(self) -> np.ndarray:
        """Which units have a value."""
        if self.kind == "continuous":
            return ~np.isnan(self.values)
        return self.values >= 0

    @property
    def n_categories(self) -> int:
        return len(self.categories)

    def design(self) -> np.ndarray:
        """``y`` of the class means: ``(m, 1)`` values, or ``(m, J)`` category indicators (zero where missing)."""
        if self.kind == "continuous":
            return np.nan_to_num(self.values, nan=0.0)[:, None]
        y = np.zeros((self.values.size, self.n_categories))
        seen = self.observed
        y[np.flatnonzero(seen), self.values[seen]] = 1.0
        return y

    def take(self, keep: np.ndarray) -> Outcome:
        return Outcome(self.name, self.kind, self.values[keep], self.categories)
