"""Step 3 as class-weighted means: the BCH correction, and the uncorrected modal and proportional methods.

Each of these methods gives unit ``u`` a weight ``w[u, c]`` in class ``c``
and estimates the class's mean of ``y`` (the outcome, or the indicators of
its categories, whose means are the category probabilities) as::

    m[c] = sum_u a_u w[u, c] y_u / S_c,    S_c = sum_u a_u w[u, c]

* modal: ``w`` is the one-hot modal class (each unit counted in its most probable class);
* proportional: ``w`` is the posteriors;
* BCH (Vermunt 2010, Section 4; Bakk, Tekle and Vermunt 2013): ``w = q D^-1``
  (:meth:`effdim.threestep.classification.Classification.bch_weights`).

Standard errors are the sandwich (robust) ones of these M-estimators, as
Vermunt (2010) prescribes for the BCH method's weighted analysis: unit ``u``'s
influence on ``m[c]`` is ``w[u, c] (y_u - m[c]) / S_c`` and the covariance
sums their outer products with ``b_u``, the sum of the unit's squared weights
(:attr:`effdim.threestep.units.Units.meat`). They treat the weights as known:
the uncertainty of step 1 is not carried over (``docs/three-step.md``).

A BCH weight can be negative, and so can the weighted count of a category in
a class when the category is rare there. Its probability is then 0 (the
maximum of the weighted log-likelihood on the boundary) and the class's other
probabilities are the shares of the categories whose weighted counts are
positive; the cell is listed in :attr:`ClassMeans.clipped`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import EffdimError

__all__ = ["ClassMeans", "class_means"]


class EmptyClass(EffdimError, ValueError):
    """A class whose weighted size is not positive: no mean of it can be estimated."""


@dataclass(frozen=True)
class ClassMeans:
    """``means[c, j]`` of ``y`` per class, their covariance ``(K*J, K*J)`` (class-major),
    ``sizes[c] = S_c`` and the ``clipped`` ``(c, j)`` cells set to 0 (module docstring)."""

    means: np.ndarray = field(repr=False)
    covariance: np.ndarray = field(repr=False)
    sizes: np.ndarray = field(repr=False)
    clipped: tuple[tuple[int, int], ...] = ()


def class_means(
    weights: np.ndarray, y: np.ndarray, mass: np.ndarray, meat: np.ndarray, *, probabilities: bool = False
) -> ClassMeans:
    """The class means of ``y`` (``(m, J)``) under the class weights ``weights`` (``(m, K)``).

    ``mass`` and ``meat`` are the units' ``a_u`` and ``b_u``. ``probabilities``:
    ``y`` holds the indicators of a categorical outcome's categories, and a
    negative weighted count is clipped as the module docstring says.
    """
    w = np.array(weights, dtype=float, copy=True)
    means, sizes = _means(w, y, mass)
    clipped: list[tuple[int, int]] = []
    if probabilities:
        for c in range(w.shape[1]):
            negative = np.flatnonzero(means[c] < 0)
            if negative.size:
                clipped += [(c, int(j)) for j in negative]
                w[:, c] *= y[:, negative].sum(axis=1) == 0  # the class keeps the units of its positive categories
        if clipped:
            means, sizes = _means(w, y, mass)
    influence = w[:, :, None] * (y[:, None, :] - means[None, :, :]) / sizes[None, :, None]
    flat = influence.reshape(y.shape[0], -1)
    covariance = flat.T @ (meat[:, None] * flat)
    return ClassMeans(means, covariance, sizes, tuple(clipped))


def _means(w: np.ndarray, y: np.ndarray, mass: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    aw = mass[:, None] * w
    sizes = aw.sum(axis=0)
    bad = np.flatnonzero(~(sizes > 0))
    if bad.size:
        raise EmptyClass(
            f"class {bad[0] + 1} has a weighted size of {sizes[bad[0]]:.3g} among the units with an observed "
            "outcome: its mean cannot be estimated (a class this small is not separated from the others)"
        )
    return (aw.T @ y) / sizes[:, None], sizes
