"""The data of a fit with covariates or sampling weights: each pattern of answers with its covariates and weight.

A latent class regression (covariates on the root's membership, :mod:`effdim.mlogit`) gives each row
its own class probabilities, and sampling weights give each row its own weight, so the rows can no longer
be merged on their answers alone: :func:`arrange` merges them on answers, covariates and weight together,
and hands EM (:class:`effdim.em.ModelData` with a ``design``) one pattern per distinct combination.

Rows:

* a row with a missing covariate, a missing weight or a weight of 0 is left out, and counted
  (:attr:`CaseData.n_dropped_covariates`, :attr:`CaseData.n_dropped_weights`); a missing answer stays
  in, marginalised as everywhere in effdim;
* a sampling weight (not a frequency count: a count column is read as counts) must be a non-negative
  number; weights are rescaled to sum to the number of rows used, as Mplus and Latent GOLD do, so the
  weighted log-likelihood is a pseudo-log-likelihood over ``N`` = the rows used, the ``N`` of every
  score (:attr:`CaseData.n_rows`);
* :attr:`CaseData.squares` holds each pattern's sum of squared weights, which the robust (sandwich)
  standard errors need (:mod:`effdim.standard_errors`); without weights it is the pattern's count.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np

from .data import DataError, Dataset, check_matches_model, resolve_mapping
from .data.dataset import compress_rows, weighted_missing
from .errors import shown
from .formula import Design, Formula, design_matrix, parse_formula
from .model import HLCModel

__all__ = ["CaseData", "arrange"]


@dataclass(frozen=True)
class CaseData:
    """The data of one model arranged with its covariates and weights (module docstring).

    ``data`` is arranged for the model (columns = its leaves), one pattern
    per distinct combination of answers, covariates and weight, ``counts`` the
    rescaled weights' sums; ``design`` the covariates' design (rows = those
    patterns) or ``None``; ``columns`` maps each leaf to its data column;
    ``pattern_of_row`` gives each input row's pattern (``-1`` where the row was
    left out), for data read one row per case.
    """

    data: Dataset
    squares: np.ndarray
    design: Design | None
    columns: dict
    weights: str | None
    n_input: float
    n_dropped_covariates: float
    n_dropped_weights: float
    pattern_of_row: np.ndarray | None
    #: The rows used: the ``N`` of the scores (the weights are rescaled to sum to it, up to rounding).
    n_rows: float
    #: Each covariate's value per pattern of ``data`` (column -> list), for tables and figures.
    covariate_values: dict

    def model_data(self, model: HLCModel, max_bytes: int | None = None):
        """EM's :class:`effdim.em.ModelData` for ``model`` (the covariates' design per pattern)."""
        from .em import ModelData

        return ModelData(
            model, self.data, max_bytes=max_bytes, design=None if self.design is None else self.design.matrix
        )


def arrange(
    dataset: Dataset,
    model: HLCModel,
    *,
    covariates: Formula | str | None = None,
    weights: str | None = None,
    mapping: dict[str, str] | None = None,
) -> CaseData:
    """``dataset`` arranged for ``model`` with the ``covariates`` formula and the ``weights`` column.

    Refused with a :class:`effdim.data.DataError` or
    :class:`effdim.formula.FormulaError` naming the culprit: a covariate or
    weight column that is a leaf of the model or is not in the data, a weight
    that is negative or not a number, no row left.
    """
    check_matches_model(dataset, model, mapping)  # the leaves' columns and cardinalities, as everywhere
    columns = resolve_mapping(dataset, model, mapping)
    items = [columns[leaf] for leaf in model.observed]
    formula = None if covariates is None else parse_formula(covariates) if isinstance(covariates, str) else covariates
    extra = list(formula.columns) if formula is not None else []
    if weights is not None:
        if weights in items:
            raise DataError(f"the weight column {shown(weights)!r} is an item of the model; weights must be left out")
        dataset.index(weights)  # names the column if it is not there
        if weights in extra:
            raise DataError(f"column {shown(weights)!r} cannot be both a covariate and the weights")
    if formula is not None:
        formula.check_columns([c for c in dataset.columns if c not in items], items)
    used = items + extra + ([weights] if weights is not None else [])
    sub = dataset.subset(used)
    patterns, counts = sub.patterns, sub.counts
    keep = np.ones(len(counts), dtype=bool)
    w = np.ones(len(counts))
    dropped_weights = 0.0
    if weights is not None:
        w = _weight_values(sub, len(used) - 1)
        keep &= ~np.isnan(w) & (w > 0)
        dropped_weights = float(counts[~keep].sum())
    design = None
    dropped_covariates = 0.0
    if formula is not None:
        values = {c: _decoded(sub, items_count=len(items), column=c, used=used) for c in extra}
        levels = {c: sub.states[used.index(c)] for c in extra}
        design = design_matrix(formula, values, levels=levels, items=items, weights=np.where(keep, counts, 0.0))
        dropped_covariates = float(counts[~design.kept & keep].sum())
        keep_design = keep[design.kept]
        keep &= design.kept
        design = _rows(design, keep_design)
    if not keep.any():
        raise DataError("no row is left: every row has a missing covariate or weight, or a weight of 0")
    effective = counts[keep] * w[keep]
    scale = counts[keep].sum() / effective.sum()
    answers, weighted, squares = (
        patterns[keep][:, : len(items)],
        effective * scale,
        counts[keep] * (w[keep] * scale) ** 2,
    )
    new_index = np.full(len(counts), -1)
    new_index[keep] = np.arange(int(keep.sum()))
    if design is None:  # without covariates the rows merge on their answers (the weights summed, and their squares)
        answers, weighted, inverse = compress_rows(answers, weighted, return_inverse=True)
        squares = np.bincount(inverse, weights=squares, minlength=len(weighted))
        new_index[keep] = inverse
    arranged = Dataset(
        columns=tuple(model.observed),
        states=sub.states[: len(items)],
        patterns=answers,
        counts=weighted,
        n_rows=float(weighted.sum()),
        n_missing=weighted_missing(answers, weighted),
        source=dataset.source,
        count_column=dataset.count_column,
    )
    return CaseData(
        data=arranged,
        squares=squares,
        design=design,
        columns=columns,
        weights=weights,
        n_input=float(dataset.n_rows),
        n_dropped_covariates=dropped_covariates,
        n_dropped_weights=dropped_weights,
        pattern_of_row=None if sub.rows is None else new_index[sub.rows],
        n_rows=float(counts[keep].sum()),
        covariate_values={c: [v for v, k in zip(values[c], keep) if k] for c in extra} if formula is not None else {},
    )


def _decoded(sub: Dataset, *, items_count: int, column: str, used: list[str]) -> list:
    j = used.index(column)
    states = sub.states[j]
    return [None if code < 0 else states[code] for code in sub.patterns[:, j]]


def _weight_values(sub: Dataset, j: int) -> np.ndarray:
    """Each pattern's weight (NaN where missing); refused naming the column: a value not a number or negative."""
    name, states = sub.columns[j], sub.states[j]
    numbers_ = np.full(len(states), np.nan)
    for i, v in enumerate(states):
        if isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(float(v)):
            raise DataError(f"weight column {shown(name)!r}: {shown(str(v))!r} is not a number")
        if v < 0:
            raise DataError(f"weight column {shown(name)!r}: the weight {v} is negative")
        numbers_[i] = float(v)
    codes = sub.patterns[:, j]
    return np.where(codes < 0, np.nan, numbers_[np.maximum(codes, 0)])


def _rows(design: Design, keep: np.ndarray) -> Design:
    """The design restricted to the kept rows among its own (``keep`` indexes its matrix's rows)."""
    from dataclasses import replace

    kept = design.kept.copy()
    kept[np.flatnonzero(kept)[~keep]] = False
    return replace(design, matrix=design.matrix[keep], kept=kept)
