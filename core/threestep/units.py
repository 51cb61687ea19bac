"""The units of a three-step analysis: what step 1 says of each, and how much each counts.

A unit is one distinct row of the data: a response pattern over the model's
items together with the outcome's value (and the sampling weight, when
there is one). Rows that agree on all of these are one unit, as
:class:`effdim.data.Dataset` compresses them.

Every estimate of step 3 is a sum over units of ``a_u`` times a term: the
unit's frequency, or the sum of its rows' sampling weights (the
pseudo-likelihood of weighted data). The sandwich estimator's middle term
sums each row's squared score: ``b_u``, the sum of the rows' squared weights
(the frequency again without weights).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["Units"]


@dataclass(frozen=True)
class Units:
    """Step 1's posteriors ``P(X = c | y_u)`` (``(m, K)``), each unit's ``mass`` ``a_u`` and, with sampling
    weights, its ``meat`` ``b_u`` (module docstring; ``None``: unweighted, ``b_u = a_u``)."""

    posteriors: np.ndarray = field(repr=False)
    mass: np.ndarray = field(repr=False)
    squares: np.ndarray | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        post = np.array(self.posteriors, dtype=float, ndmin=2)
        mass = np.array(self.mass, dtype=float).reshape(-1)
        if mass.shape != (post.shape[0],):
            raise ValueError(f"{post.shape[0]} units but {mass.size} masses")
        squares = None if self.squares is None else np.array(self.squares, dtype=float).reshape(-1)
        if squares is not None and squares.shape != mass.shape:
            raise ValueError(f"{mass.size} units but {squares.size} sums of squared weights")
        object.__setattr__(self, "posteriors", post)
        object.__setattr__(self, "mass", mass)
        object.__setattr__(self, "squares", squares)

    @property
    def n_units(self) -> int:
        return int(self.mass.size)

    @property
    def n_classes(self) -> int:
        return int(self.posteriors.shape[1])

    @property
    def meat(self) -> np.ndarray:
        """``b_u``: what each unit's squared score adds to the sandwich's middle term."""
        return self.mass if self.squares is None else self.squares

    @property
    def weighted(self) -> bool:
        return self.squares is not None

    def take(self, keep: np.ndarray) -> Units:
        """The units where ``keep`` (a boolean mask) holds."""
        return Units(self.posteriors[keep], self.mass[keep], None if self.squares is None else self.squares[keep])
