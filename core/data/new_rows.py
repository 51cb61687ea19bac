"""New data in a known coding: the rows a fitted model reads, coded as its training data (:func:`encode_rows`).

A fitted model reads new rows in the coding of its training data: a value
is matched to a training state as it is, else by its text (``"2"`` matches
the state ``2``); missing cells (``None``, NaN, ``pd.NA``) get ``-1``; a
value never seen in training is refused, naming the column and the states.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..errors import shown
from .dataset import DataError, Dataset


def encode_rows(
    X: Dataset | pd.DataFrame, columns: Mapping[str, str], states: Mapping[str, tuple]
) -> tuple[np.ndarray, np.ndarray]:
    """Codes of the rows of ``X`` in a known coding, and the row weights.

    ``columns`` maps each leaf to the column that fed it in training and
    ``states`` each leaf to its training states; the leaves' order is that of
    ``columns``. A leaf's column is looked up in ``X`` by that name, else by
    the leaf's own name. For a :class:`Dataset` the rows are its unique
    patterns, weighted by their counts; for a DataFrame, one row each,
    weight 1. Values are matched as described in the module docstring.

    Examples
    --------
    >>> frame = pd.DataFrame({"a": ["x", "y", None], "b": [1, "2", 1]})
    >>> codes, weights = encode_rows(frame, {"A": "a", "B": "b"}, {"A": ("x", "y"), "B": (1, 2)})
    >>> codes.tolist(), weights.tolist()
    ([[0, 0], [1, 1], [-1, 0]], [1.0, 1.0, 1.0])
    """
    leaves = list(columns)
    if isinstance(X, Dataset):
        codes = np.empty((X.n_patterns, len(leaves)), dtype=np.int64)
        for j, leaf in enumerate(leaves):
            column = _column_for(X.columns, leaf, columns[leaf])
            lookup = _lookup(states[leaf])
            table = [_code(lookup, v, column, states[leaf]) for v in X.states[X.index(column)]]
            codes[:, j] = np.array(table + [-1], dtype=np.int64)[X.patterns[:, X.index(column)]]
        return codes, np.asarray(X.counts, dtype=np.float64)
    if not isinstance(X, pd.DataFrame):
        raise DataError(f"expected a Dataset or a pandas DataFrame, got {type(X).__name__}")
    names = [str(c) for c in X.columns]
    codes = np.empty((len(X), len(leaves)), dtype=np.int64)
    for j, leaf in enumerate(leaves):
        column = _column_for(names, leaf, columns[leaf])
        lookup = _lookup(states[leaf])
        codes[:, j] = [_code(lookup, v, column, states[leaf]) for v in X.iloc[:, names.index(column)].tolist()]
    return codes, np.ones(len(X))


def _column_for(names: Sequence[str], leaf: str, trained: str) -> str:
    """The column of new data that feeds ``leaf``: its training column, else one named after the leaf."""
    if trained in names:
        return trained
    if leaf in names:
        return leaf
    raise DataError(f"the data have no column {trained!r} (for leaf {leaf!r}); columns: {', '.join(map(shown, names))}")


def _lookup(states: tuple) -> dict:
    """Training state -> code, keyed by the value and by its text."""
    table: dict = {}
    for code, value in enumerate(states):
        table.setdefault(value, code)
        table.setdefault(str(value), code)
    return table


def _code(lookup: dict, value: Any, column: str, states: tuple) -> int:
    """The training code of one cell (``-1`` when missing); refuses unseen values."""
    if value is None or value is pd.NA or value is pd.NaT:
        return -1
    if isinstance(value, float) and np.isnan(value):
        return -1
    if isinstance(value, np.generic):
        value = value.item()
    code = lookup.get(value)
    if code is None:
        code = lookup.get(str(value).strip())
    if code is None:
        known = ", ".join(repr(k) for k in states[:10]) + (", ..." if len(states) > 10 else "")
        raise DataError(f"column {column!r}: value {value!r} was not seen in the training data (states: {known})")
    return code
