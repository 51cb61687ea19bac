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

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..errors import InvalidArgument, shown
from .outcome import Outcome, outcome_kind

__all__ = ["FitRows", "Units", "fit_rows"]


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
            raise InvalidArgument(f"{post.shape[0]} units but {mass.size} masses")
        squares = None if self.squares is None else np.array(self.squares, dtype=float).reshape(-1)
        if squares is not None and squares.shape != mass.shape:
            raise InvalidArgument(f"{mass.size} units but {squares.size} sums of squared weights")
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


@dataclass(frozen=True)
class FitRows:
    """Step 1 on the data: per row of the data the posteriors of the fit's classes, and how much it counts.

    A row is a pattern of ``data`` with its count, or for a fit with sampling
    weights (:mod:`effdim.casedata`) an input row that the fit used, its mass
    its rescaled sampling weight.
    ``group[r]`` is the fit's pattern of row ``r`` (rows of a group share
    their posteriors and weight); ``posteriors[g]`` is group ``g``'s;
    ``left_out`` the rows the fit left out (a missing or zero weight).
    """

    data: Any = field(repr=False)
    leaves: tuple[str, ...]
    where: np.ndarray = field(repr=False)  # each row's pattern of ``data``
    group: np.ndarray = field(repr=False)
    posteriors: np.ndarray = field(repr=False)
    mass: np.ndarray = field(repr=False)
    squares: np.ndarray | None = field(repr=False)
    left_out: float = 0.0
    fit_data: Any = field(default=None, repr=False)  # the data arranged for the fit, which the posteriors are of
    node: str = ""
    order: np.ndarray | None = field(default=None, repr=False)  # each group's row of the posteriors' patterns

    def at(self, params: Any) -> FitRows:
        """The same rows with the posteriors of another estimate ``params`` of the measurement model."""
        from ..em import posterior

        _, post = posterior(params, self.fit_data, self.node)
        return replace(self, posteriors=post if self.order is None else post[self.order])

    def with_outcome(self, column: str, kind: str) -> tuple[Units, Outcome]:
        """The units of the analysis of ``column``: the rows merged on their group and outcome value."""
        units, codes = self.merged([column])
        states = self.data.states[self.data.index(column)]
        kind = outcome_kind(column, states, kind)
        codes = codes[:, 0]
        if kind == "continuous":
            outcome = Outcome(column, kind, np.append(np.array(states, dtype=float), np.nan)[codes])
        else:
            outcome = Outcome(column, kind, codes.copy(), tuple(states))
        return units, outcome

    def merged(self, columns: list[str]) -> tuple[Units, np.ndarray]:
        """The rows merged on their group and their codes in ``columns`` (none of them an item): the
        units, and each unit's codes ``(units, len(columns))`` (``-1`` missing)."""
        from ..data import DataError

        for column in columns:
            if column in self.leaves:
                raise DataError(
                    f"column {shown(column)} is an item of the model; the three-step method relates the "
                    "classes to a column left out of it"
                )
        index = [self.data.index(c) for c in columns]  # names a column the data do not have
        codes = self.data.patterns[np.ix_(self.where, index)]
        keys = np.column_stack([self.group, codes])
        _, first, inverse = np.unique(keys, axis=0, return_index=True, return_inverse=True)
        inverse = inverse.reshape(-1)
        mass = np.bincount(inverse, weights=self.mass, minlength=first.size)
        squares = None if self.squares is None else np.bincount(inverse, weights=self.squares, minlength=first.size)
        return Units(self.posteriors[self.group[first]], mass, squares), codes[first]


def fit_rows(fit: Any, data: Any, node: str) -> FitRows:
    """:class:`FitRows` of ``fit`` (an :class:`effdim.FitResult` that keeps its data) on ``data``, the data it
    was fitted to with the outcome columns beside; a :class:`effdim.data.DataError` when they are not."""
    if fit.data is None:
        raise InvalidArgument("this fit does not keep its data; fit it with effdim.fit")
    leaves = tuple(fit.columns[leaf] for leaf in fit.model.observed)
    if getattr(fit, "case", None) is None:
        return _pattern_rows(fit, data, node, leaves)
    return _case_rows(fit, data, node, leaves)


def _not_the_data(data: Any) -> Exception:
    from ..data import DataError

    return DataError(
        f"the data {shown(data.source or 'given')} are not the data the model was fitted to (their items' "
        "answers, covariates, weights or counts differ): give the data of the fit, with the outcome columns"
    )


def _pattern_rows(fit: Any, data: Any, node: str, leaves: tuple[str, ...]) -> FitRows:
    """A fit without covariates or weights: the rows are ``data``'s patterns, grouped by their answers."""
    from ..data import check_matches_model
    from ..em import posterior

    arranged = check_matches_model(data, fit.model, fit.columns)
    same = (
        arranged.states == fit.data.states
        and arranged.patterns.shape == fit.data.patterns.shape
        and np.array_equal(arranged.patterns, fit.data.patterns)
        and np.allclose(arranged.counts, fit.data.counts, rtol=1e-12, atol=0)
    )
    if not same:
        raise _not_the_data(data)
    md, post = posterior(fit.params, fit.data, node)
    index = {tuple(row): i for i, row in enumerate(md.patterns.tolist())}
    items = data.patterns[:, [data.index(c) for c in leaves]]
    group = np.array([index[tuple(row)] for row in items.tolist()], dtype=np.int64)
    return FitRows(data, leaves, np.arange(data.n_patterns), group, post, data.counts, None, 0.0, fit.data, node)


def _case_rows(fit: Any, data: Any, node: str, leaves: tuple[str, ...]) -> FitRows:
    """A fit with sampling weights: the rows are the input rows it used, each with its pattern's posteriors
    and its rescaled weight. A fit with covariates is refused (its classification depends on them)."""
    from ..casedata import arrange
    from ..data import DataError
    from ..em import posterior

    case = fit.case
    if case.design is not None:
        raise InvalidArgument(
            "the three-step method takes the classes of a model without covariates: with them its "
            "classification error would depend on the covariates, which step 3 leaves out; fit the "
            "measurement model without covariates (or with them as three-step covariates)"
        )
    if data.rows is None or case.pattern_of_row is None:
        raise DataError(
            "distal outcomes of a fit with covariates or weights need the data one row per case, not pattern counts"
        )
    again = arrange(data, fit.model, weights=case.weights, mapping=fit.columns)
    same = (
        again.pattern_of_row.shape == case.pattern_of_row.shape
        and np.array_equal(again.pattern_of_row, case.pattern_of_row)
        and np.array_equal(again.data.patterns, fit.data.patterns)
        and np.allclose(again.data.counts, fit.data.counts, rtol=1e-12, atol=0)
    )
    if not same:
        raise _not_the_data(data)
    md, by_md = posterior(fit.params, fit.data, node)
    index = {tuple(row): i for i, row in enumerate(md.patterns.tolist())}
    order = np.array([index[tuple(row)] for row in fit.data.patterns.tolist()], dtype=np.intp)
    post = by_md[order]
    kept = case.pattern_of_row >= 0
    rows = np.flatnonzero(kept)
    mass = np.ones(rows.size)
    squares = None
    if case.weights is not None:
        j = data.index(case.weights)
        weights = np.array(data.states[j], dtype=float)[data.patterns[data.rows[rows], j]]
        mass = weights * (case.n_rows / weights.sum())
        squares = mass**2
    return FitRows(
        data,
        leaves,
        data.rows[rows],
        case.pattern_of_row[rows],
        post,
        mass,
        squares,
        left_out=float(np.count_nonzero(~kept)),
        fit_data=fit.data,
        node=node,
        order=order,
    )
