"""SQUAREM extrapolation for EM, kept inside the probability simplex.

Varadhan & Roland (2008), "Simple and globally convergent methods for
accelerating the convergence of any EM algorithm", Scand. J. Statist. 35,
scheme S3. From a point ``x0`` and two EM steps ``x1 = F(x0)``,
``x2 = F(x1)`` (``F`` the EM map), with ``r = x1 - x0`` and
``v = x2 - 2 x1 + x0``, the next point is

    x(a) = x0 + 2 a r + a^2 v,    a = |r| / |v|,   clipped to [1, step_max].

``a = 1`` gives ``x2``, plain EM; larger ``a`` extrapolates along the path
EM is crawling on, which is where EM is slow: along the flat directions of a
model whose effective dimension is below its standard dimension
(``docs/theory.md``, section "8. EM restarts and nested models").

Staying a probability: every CPT row of ``r`` and ``v`` sums to 0, so the
rows of ``x(a)`` sum to 1 for any ``a``. Positivity is not automatic:
``a`` is halved towards 1 until every entry is at least :data:`MIN_RATIO`
times the corresponding entry of ``x2``, so one extrapolation can shrink a
probability at most that much beyond what EM itself did, and a probability
EM keeps positive stays positive (EM cannot revive an entry that reached 0).

Monotonicity is the caller's part (:mod:`effdim.em`): a point whose objective
is below that of ``x1`` is replaced by ``x2``, and ``step_max`` shrinks; an
accepted step at ``step_max`` lets it grow (the adaptive maximum of the
SQUAREM R package, factor :data:`STEP_FACTOR`).

All functions work on *batches*: lists of arrays whose first axis indexes
independent starts, each with its own step length.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["MIN_RATIO", "STEP_FACTOR", "step_length", "extrapolate", "adapt_step_max"]

#: An extrapolated entry may not fall below this fraction of the EM point's entry.
MIN_RATIO = 0.1
#: ``step_max`` grows by this factor after an accepted step at the maximum, shrinks by it after a rejection.
STEP_FACTOR = 4.0
#: Halvings of the step towards 1 before giving up and taking the EM point.
HALVINGS = 30


def _sumsq(arrays: Sequence[np.ndarray]) -> np.ndarray:
    return sum(np.square(a).reshape(a.shape[0], -1).sum(axis=1) for a in arrays)


def step_length(
    x0: Sequence[np.ndarray], x1: Sequence[np.ndarray], x2: Sequence[np.ndarray], step_max: np.ndarray
) -> np.ndarray:
    """Per start ``a = |r| / |v|`` (scheme S3), clipped to ``[1, step_max]``; 1 where ``v = 0``."""
    r = [b - a for a, b in zip(x0, x1)]
    v = [c - 2 * b + a for a, b, c in zip(x0, x1, x2)]
    sr2, sv2 = _sumsq(r), _sumsq(v)
    with np.errstate(divide="ignore", invalid="ignore"):
        alpha = np.sqrt(sr2 / sv2)
    alpha = np.where(np.isfinite(alpha), alpha, 1.0)
    return np.clip(alpha, 1.0, step_max)


def extrapolate(
    x0: Sequence[np.ndarray], x1: Sequence[np.ndarray], x2: Sequence[np.ndarray], step_max: np.ndarray
) -> tuple[list[np.ndarray], np.ndarray]:
    """``(x(a), a)``: the SQUAREM point of every start and the step length used.

    ``a`` starts at :func:`step_length` and is halved towards 1 while any entry
    of ``x(a)`` is below ``MIN_RATIO`` times the entry of ``x2``; after
    :data:`HALVINGS` halvings the start takes ``x2`` itself (``a = 1``).
    """
    alpha = step_length(x0, x1, x2, step_max)
    # every array of a start side by side: the halvings below then cost a few operations, not a few per array
    n_starts = alpha.shape[0]
    f0, f1, f2 = (np.concatenate([a.reshape(n_starts, -1) for a in xs], axis=1) for xs in (x0, x1, x2))
    r = f1 - f0
    v = f2 - 2 * f1 + f0

    def point(al):
        al_b = al[:, None]
        return f0 + 2 * al_b * r + al_b**2 * v

    def bad(x):
        return (x < MIN_RATIO * f2).any(axis=1)

    x = point(alpha)
    wrong = bad(x) & (alpha > 1)
    for _ in range(HALVINGS):
        if not wrong.any():
            break
        alpha = np.where(wrong, 0.5 * (1.0 + alpha), alpha)
        x = point(alpha)
        wrong = bad(x) & (alpha > 1)
    if wrong.any():
        alpha = np.where(wrong, 1.0, alpha)
    # a = 1 is exactly x2 (no rounding from the formula)
    exact = alpha == 1.0
    x = point(alpha)
    x[exact] = f2[exact]
    ends = np.cumsum([a[0].size for a in x0])[:-1]
    return [part.reshape(a.shape) for part, a in zip(np.split(x, ends, axis=1), x0)], alpha


def adapt_step_max(step_max: np.ndarray, alpha: np.ndarray, accepted: np.ndarray) -> np.ndarray:
    """The next ``step_max``: grown after an accepted step at the maximum, shrunk (not below 1) after a rejection."""
    at_max = alpha >= step_max
    grown = np.where(accepted & at_max, step_max * STEP_FACTOR, step_max)
    return np.where(~accepted, np.maximum(1.0, step_max / STEP_FACTOR), grown)
