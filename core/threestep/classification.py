"""Step 2 of the three-step method: assigning units to classes, and the classification error it makes.

After step 1 (the measurement model, fitted as usual) every unit ``u`` has
posteriors ``P(X = c | y_u)``. Step 2 assigns it to a class ``W``:

* ``"modal"``: to its most probable class (the first on ties), one class per unit;
* ``"proportional"``: to every class with its posterior as the share (soft assignment).

The assignment ``q[u, s]`` (one-hot, or the posteriors) misclassifies some
units. Vermunt (2010, Political Analysis 18(4), eq. 6) and Bakk, Tekle and
Vermunt (2013, Sociological Methodology 43, eq. 6) estimate how often::

    D[c, s] = P(W = s | X = c) = sum_u a_u P(X = c | y_u) q[u, s] / sum_u a_u P(X = c | y_u)

with ``a_u`` the unit's frequency, or its rows' summed sampling weights. Step 3 corrects
for it: the ML method uses ``D`` as the fixed error probabilities of ``W`` as
the one indicator of ``X``; the BCH method (Bolck, Croon and Hagenaars 2004)
weights unit ``u`` in class ``c`` by ``sum_s q[u, s] (D^-1)[s, c]``, since
``P(W = s, Z) = sum_c P(X = c, Z) D[c, s]``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import EffdimError, InvalidArgument
from .units import Units

__all__ = ["ASSIGNMENTS", "Classification", "SingularClassification", "classify"]

#: The assignments of step 2 and what each means, in the words shown to the user.
ASSIGNMENTS = {
    "modal": "each unit to its most probable class",
    "proportional": "each unit to every class with its posterior as the share",
}
#: Largest condition number of ``D`` the BCH weights accept: beyond it ``D^-1`` amplifies rounding
#: into the weights' leading digits.
MAX_CONDITION = 1e10


class SingularClassification(EffdimError, ValueError):
    """The classification error matrix cannot be inverted, so the BCH weights do not exist."""


@dataclass(frozen=True)
class Classification:
    """The assignment of step 2 and its classification error matrix.

    ``shares[c]`` is ``P(X = c)`` by the step-1 posteriors (weighted by
    ``a_u``); ``assigned[u, s]`` the assignment ``q``; ``error_matrix[c, s]``
    is ``D[c, s] = P(W = s | X = c)`` (rows: true class, columns: assigned
    class; each row sums to 1).
    """

    assignment: str
    shares: np.ndarray = field(repr=False)
    assigned: np.ndarray = field(repr=False)
    error_matrix: np.ndarray = field(repr=False)

    @property
    def n_classes(self) -> int:
        return int(self.shares.size)

    @property
    def assigned_shares(self) -> np.ndarray:
        """``P(W = s) = sum_c P(X = c) D[c, s]``: the share assigned to each class."""
        return self.shares @ self.error_matrix

    @property
    def error_rate(self) -> float:
        """The expected share of units assigned to another class than their own: ``1 - sum_c P(X=c) D[c, c]``."""
        return float(1.0 - self.shares @ np.diag(self.error_matrix))

    def bch_weights(self) -> np.ndarray:
        """``(m, K)`` weights of the BCH correction: ``q @ D^-1`` (each row sums to 1; some may be negative).

        Raises :class:`SingularClassification` when some class is nobody's
        assignment (a zero column of ``D``) or ``D`` is too close to singular.
        """
        empty = np.flatnonzero(self.assigned_shares <= 0)
        if empty.size:
            raise SingularClassification(
                f"class {empty[0] + 1} is no unit's most probable class, so the BCH correction cannot "
                "undo the classification error; use the ML correction or proportional assignment"
            )
        condition = np.linalg.cond(self.error_matrix)
        if not condition <= MAX_CONDITION:
            raise SingularClassification(
                f"the classes are too poorly separated for the BCH correction (its classification error matrix "
                f"has condition number {condition:.3g}); use the ML correction"
            )
        return self.assigned @ np.linalg.inv(self.error_matrix)

    def to_json(self) -> dict:
        """``assignment``, ``error_matrix`` (rows: true class, columns: assigned class), ``error_rate``."""
        return {
            "assignment": self.assignment,
            "error_matrix": self.error_matrix.tolist(),
            "error_rate": self.error_rate,
        }


def assignment_matrix(posteriors: np.ndarray, assignment: str) -> np.ndarray:
    """``q[u, s]``: the one-hot modal class (the first on ties), or the posteriors themselves."""
    if assignment == "proportional":
        return np.array(posteriors, dtype=float, copy=True)
    modal = np.zeros_like(posteriors, dtype=float)
    modal[np.arange(posteriors.shape[0]), np.argmax(posteriors, axis=1)] = 1.0
    return modal


def classify(units: Units, assignment: str = "modal", assigned: np.ndarray | None = None) -> Classification:
    """Step 2 on ``units``: the assignment and its classification error matrix (module docstring).

    ``assigned``: an assignment made before, held (the observed ``W`` of the
    ML correction) while ``D`` follows the posteriors (:mod:`effdim.threestep.step1`).
    """
    if assignment not in ASSIGNMENTS:
        raise InvalidArgument(f"the assignment must be one of {', '.join(ASSIGNMENTS)}, got {assignment!r}")
    post = units.posteriors
    q = assignment_matrix(post, assignment) if assigned is None else assigned
    mass = units.mass[:, None] * post  # a_u P(X = c | y_u)
    total = mass.sum(axis=0)
    if np.any(total <= 0):
        empty = int(np.flatnonzero(total <= 0)[0])
        raise InvalidArgument(f"class {empty + 1} has no units by the posteriors: it cannot be analysed")
    error = (mass.T @ q) / total[:, None]
    return Classification(assignment, total / total.sum(), q, error)
