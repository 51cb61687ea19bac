"""A latent class regression read as a paper reports it: coefficients, odds ratios, class probabilities.

A fit with covariates (:func:`effdim.fit` with ``covariates=``) gives the root's classes a multinomial
logit on the covariates (:mod:`effdim.mlogit`; one-step, as poLCA's ``cbind(...) ~ x`` and Latent
GOLD's active covariates): ``log P(class k | x) / P(class 1 | x) = x beta_k``, class 1 (the largest by
mean share) the reference. This module turns the estimate and its standard errors
(:mod:`effdim.standard_errors`) into

* :func:`coefficient_table`: per design column (term) and class, the coefficient, its standard error,
  ``z``, the two-sided ``p`` of the Wald test, the odds ratio ``exp(beta)`` and its interval;
* :func:`coefficients_json`: the same as ``fit --json``'s ``covariates`` (terms as rows, the classes
  but the reference as columns, as poLCA's ``coeff``);
* :func:`probability_curve`: the class probabilities along one covariate, the others held at their
  mean (numbers) or reference (categories): the plot of poLCA's manual (Linzer & Lewis 2011, Fig. 3);
* :func:`pattern_posteriors`: each pattern's posterior class membership under its own prior.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .formula import Design, design_rows
from .mlogit import class_probabilities

__all__ = [
    "Curve",
    "coefficient_table",
    "coefficients_json",
    "curves",
    "held_values",
    "pattern_posteriors",
    "probability_curve",
]

#: The normal quantile of a two-sided 95 % interval.
Z95 = 1.959963984540054


def _normal_p(z: np.ndarray) -> np.ndarray:
    """Two-sided p-value of a standard normal ``z``."""
    return np.array([math.erfc(abs(v) / math.sqrt(2)) if np.isfinite(v) else np.nan for v in np.ravel(z)]).reshape(
        np.shape(z)
    )


def coefficient_table(design: Design, coefficients: np.ndarray, se: Any = None, *, level: float = 0.95):
    """A row per design column and non-reference class: ``term``, ``class`` (2 .. k), ``coefficient``,
    ``se``, ``z``, ``p``, ``odds_ratio``, ``or_low``, ``or_high`` (the interval at ``level``), ``flag``
    (why a standard error is missing). ``se``: :class:`effdim.standard_errors.StandardErrors` or ``None``."""
    from .standard_errors import interval_z

    z_level = interval_z(level)
    errors = np.full(coefficients.shape, np.nan) if se is None else se.coefficients
    flags = np.full(coefficients.shape, "", dtype=object) if se is None else se.coefficient_flags
    rows = []
    for i, term in enumerate(design.names):
        for k in range(coefficients.shape[1]):
            b, s = float(coefficients[i, k]), float(errors[i, k])
            z = b / s if s > 0 else np.nan
            rows.append(
                {
                    "term": term,
                    "class": k + 2,
                    "coefficient": b,
                    "se": s,
                    "z": z,
                    "p": float(_normal_p(np.array(z))),
                    "odds_ratio": math.exp(b) if b < 700 else math.inf,
                    "or_low": math.exp(b - z_level * s) if np.isfinite(s) else np.nan,
                    "or_high": math.exp(b + z_level * s) if np.isfinite(s) and b + z_level * s < 700 else np.nan,
                    "flag": flags[i, k],
                }
            )
    return pd.DataFrame(rows)


def coefficients_json(design: Design, coefficients: np.ndarray, se: Any, *, node: str, states: list) -> dict:
    """``fit --json``'s ``covariates``: ``node``, ``formula``, ``terms`` (design columns, the intercept
    first), ``reference`` (the reference class and each categorical covariate's reference category),
    ``classes`` (the other classes), and ``coefficients``, ``se``, ``z``, ``p``, ``odds_ratios`` as
    term rows by class columns (``null`` where a standard error is missing)."""
    table = coefficient_table(design, coefficients, se)

    def grid(column: str) -> list:
        values = table[column].to_numpy(dtype=float).reshape(coefficients.shape)
        return [[None if not np.isfinite(v) else float(v) for v in row] for row in values]

    return {
        "node": node,
        "formula": str(design.formula),
        "terms": list(design.names),
        "reference": {"class": states[0], "categories": {c: _plain(v) for c, v in design.references.items()}},
        "classes": list(states[1:]),
        "coefficients": grid("coefficient"),
        "se": grid("se"),
        "z": grid("z"),
        "p": grid("p"),
        "odds_ratios": grid("odds_ratio"),
    }


def _plain(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    return value


def probability_curve(design: Design, coefficients: np.ndarray, column: str, values: Any, held: dict) -> np.ndarray:
    """The class probabilities ``(len(values), k)`` at each of ``values`` of covariate ``column``, the
    other covariates at ``held`` (column -> value)."""
    values = list(values)
    table = {c: [held[c]] * len(values) for c in design.formula.columns if c != column}
    table[column] = values
    rows = design_rows(design, table)
    return class_probabilities(rows, coefficients[None])[0].T


def held_values(design: Design, values: dict, counts: np.ndarray) -> dict:
    """Each covariate's value when another is varied: a number's mean over the rows used (``values`` per
    pattern, ``counts`` the patterns' counts), a category's reference."""
    held = {}
    for column in design.formula.columns:
        if column in design.references:
            held[column] = design.references[column]
        else:
            held[column] = float(np.average(np.asarray(values[column], dtype=float), weights=counts))
    return held


@dataclass(frozen=True)
class Curve:
    """The class probabilities along one covariate: at each of ``values`` (a number's range, or a
    category column's categories: ``categorical``) a row of ``probabilities``, one per class, the other
    covariates at ``held`` (:func:`held_values`)."""

    column: str
    categorical: bool
    values: list
    probabilities: np.ndarray
    held: dict

    def held_text(self) -> str:
        """Where the other covariates are held, in words (empty where there are none)."""
        others = [f"{c} = {_shown(v)}" for c, v in self.held.items() if c != self.column]
        return ("others at " + ", ".join(others)) if others else ""


def _shown(value: Any) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def curves(design: Design, coefficients: np.ndarray, values: dict, counts: np.ndarray, points: int = 25) -> list:
    """A :class:`Curve` per covariate of the formula: a number over ``points`` values from its smallest to its
    largest in the rows used, a categorical one at each category (``values`` per pattern, ``counts`` the
    patterns' counts)."""
    held = held_values(design, values, counts)
    out = []
    for column in design.formula.columns:
        if column in design.levels:
            grid = list(design.levels[column])
        else:
            numbers = np.asarray(values[column], dtype=float)
            grid = np.linspace(numbers.min(), numbers.max(), points).tolist()
        probs = probability_curve(design, coefficients, column, grid, held)
        out.append(Curve(column, column in design.levels, grid, probs, held))
    return out


def pattern_posteriors(em: Any, md: Any) -> dict:
    """Each hidden node's posterior per pattern of ``md`` (:class:`effdim.em.ModelData` with the
    regression's design): node -> ``(m, k)``, each pattern under its own class probabilities."""
    from .em.estep import estep
    from .em.state import BatchState, state_from_params

    st = state_from_params(md, em.params)
    beta = em.coefficients[None]
    st = BatchState(md.design.probabilities(beta), st.theta, st.leaf, beta, md.design)
    stats = estep(md, st, 0.0, keep_post=True)
    return {h: np.ascontiguousarray(stats.post[i][0].T) for i, h in enumerate(md.hidden)}
