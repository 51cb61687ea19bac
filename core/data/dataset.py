"""The :class:`Dataset`: categorical data compressed into unique response patterns, and the errors of data.

Learning an LC or HLC model (Kocka & Zhang 2002, Sections 2.3 and 6) needs the
data only through the counts of its distinct *response patterns*: the
log-likelihood is ``sum_p N(p) log P(p)`` over unique patterns ``p`` with
counts ``N(p)``, and every E-step of EM works pattern by pattern. A
:class:`Dataset` therefore stores

* ``patterns`` -- an ``(m, n)`` int64 array of state codes of the ``m`` unique
  patterns over ``n`` columns, ``-1`` for a missing cell;
* ``counts`` -- an ``(m,)`` float64 array of how often each pattern occurs
  (weights need not be integers, but are positive);

so ``n_rows = counts.sum()`` is the sample size ``|D|`` of the BIC/CS
penalty ``d/2 log |D|``. Four binary items give at most ``3**4 = 81`` patterns
(16 without missing cells) however many respondents there are.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..errors import EffdimError, shown


class DataError(EffdimError, ValueError):
    """Data that cannot be used; the message names the culprit (column, line, value)."""


class NeedsMapping(DataError):
    """Data columns and model leaves that a leaf -> column mapping would match.

    ``str(err)`` says how in Python (:attr:`PYTHON_REMEDY`, ``mapping={leaf: column}``); each other
    face adds its own remedy to :attr:`problem` in its own words (the CLI its ``--map`` option, the
    dashboard its Model tab), never another face's option names.
    """

    PYTHON_REMEDY = "pass mapping={leaf: column}"

    def __init__(self, problem: str):
        self.problem = problem
        super().__init__(f"{problem}; {self.PYTHON_REMEDY}")

    def __reduce__(self):  # pickles as it was raised (a worker process sends it back)
        return type(self), (self.problem,)


class LeavesWithoutColumns(NeedsMapping):
    """Leaves of a model that name no data column and no mapping given (:func:`resolve_mapping`)."""

    PYTHON_REMEDY = "name the leaves after the columns, or pass mapping={leaf: column}"


class ColumnsWithoutLeafNames(NeedsMapping):
    """Columns whose names cannot name a learned tree's leaves (``effdim.structure.learn_structure``)."""

    PYTHON_REMEDY = "name their leaves with mapping={leaf: column}"


class TooManyValues(DataError):
    """A column with more distinct values than a category may have: a number, or an identifier.

    ``str(err)`` gives the remedy in Python's words (``drop=[column]``, ``ids=[column]`` of
    :func:`effdim.reading.read_data`); each other face adds its own to :attr:`problem` (the CLI its
    ``--drop`` and ``--id``)."""

    def __init__(self, problem: str, column: str):
        self.problem, self.column = problem, column
        super().__init__(
            f"{problem}: probably continuous or an identifier; discretize it, or leave it out "
            f"(drop=[{column!r}], or ids=[{column!r}] to keep it beside the posteriors)"
        )

    def __reduce__(self):  # pickles as it was raised (a worker process sends it back)
        return type(self), (self.problem, self.column)


@dataclass(frozen=True, eq=False)
class Dataset:
    """Categorical data compressed into unique response patterns.

    Attributes
    ----------
    columns:
        Column (variable) names, unique.
    states:
        Per column, the values its codes stand for: code ``j`` of column ``i``
        means ``states[i][j]``. A column may list states that do not occur
        (sampled data keep the model's full range ``0..k-1``).
    patterns:
        ``(m, n)`` int64 codes of the unique patterns, ``-1`` = missing cell.
        Read-only.
    counts:
        ``(m,)`` float64 positive count (weight) of each pattern. Read-only.
    n_rows:
        ``counts.sum()``: the sample size ``|D|``.
    n_missing:
        Number of missing cells, weighted by the counts (an ``int`` when all
        counts are whole numbers).
    source:
        Where the data came from: a file name, a bundled data set name, ...
    count_column:
        The column of the input that held the counts, if any (informational).
    rows:
        For data read one case per row (no count column): the index into
        ``patterns`` of every input row, in input order, so results per
        pattern (posteriors) can be given back per row. ``None`` for data
        given as pattern counts. Read-only.
    variable_labels:
        Column -> what it asks, where the file says (SPSS and Stata store a
        variable label beside each short variable name): the faces show it as
        the item's title. Empty for CSV files, whose header is the text.

    Instances are immutable; :meth:`subset` and :func:`check_matches_model`
    return new ones.

    Examples
    --------
    Six rows, two distinct patterns:

    >>> from effdim.reading import load_csv
    >>> data = load_csv(b"a,b,count\\n1,x,3\\n2,y,1\\n1,x,2\\n", name="demo.csv")
    >>> data
    Dataset(demo.csv: 2 columns [2,2], 6 rows, 2 unique patterns, 0 missing cells)
    >>> data.states, data.patterns.tolist(), data.counts.tolist()
    (((1, 2), ('x', 'y')), [[0, 0], [1, 1]], [5.0, 1.0])
    """

    columns: tuple[str, ...]
    states: tuple[tuple, ...]
    patterns: np.ndarray = field(repr=False)
    counts: np.ndarray = field(repr=False)
    n_rows: float
    n_missing: int | float
    source: str = ""
    count_column: str | None = None
    rows: np.ndarray | None = field(default=None, repr=False)
    variable_labels: dict = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        columns = tuple(str(c) for c in self.columns)
        states = tuple(tuple(s) for s in self.states)
        if len(set(columns)) != len(columns):
            dup = next(c for c in columns if columns.count(c) > 1)
            raise DataError(f"duplicate column name {dup!r}")
        if len(states) != len(columns):
            raise DataError(f"{len(columns)} columns but {len(states)} state lists")
        patterns = np.array(self.patterns, dtype=np.int64, copy=True, ndmin=2)
        if patterns.size == 0:
            patterns = patterns.reshape(-1, len(columns))
        counts = np.array(self.counts, dtype=np.float64, copy=True).reshape(-1)
        if patterns.ndim != 2 or patterns.shape[1] != len(columns):
            raise DataError(f"patterns must have shape (m, {len(columns)}), got {patterns.shape}")
        if counts.shape != (patterns.shape[0],):
            raise DataError(f"need one count per pattern: {patterns.shape[0]} patterns, {counts.size} counts")
        if not np.all(np.isfinite(counts)) or np.any(counts <= 0):
            raise DataError("pattern counts must be finite and positive")
        cards = np.array([len(s) for s in states], dtype=np.int64)
        if patterns.size:
            bad = (patterns < -1) | (patterns >= cards)
            if bad.any():
                i, j = np.argwhere(bad)[0]
                raise DataError(f"column {columns[j]!r}: code {patterns[i, j]} out of range for {cards[j]} states")
        total = float(counts.sum())
        if not math.isclose(float(self.n_rows), total, rel_tol=1e-9, abs_tol=1e-9):
            raise DataError(f"n_rows={self.n_rows} but the counts sum to {total}")
        if self.rows is not None:
            rows = np.array(self.rows, dtype=np.int64, copy=True).reshape(-1)
            if rows.size and (rows.min() < 0 or rows.max() >= patterns.shape[0]):
                raise DataError(f"row index out of range for {patterns.shape[0]} patterns")
            rows.setflags(write=False)
            object.__setattr__(self, "rows", rows)
        patterns.setflags(write=False)
        counts.setflags(write=False)
        object.__setattr__(self, "columns", columns)
        object.__setattr__(self, "states", states)
        object.__setattr__(self, "patterns", patterns)
        object.__setattr__(self, "counts", counts)
        object.__setattr__(self, "n_rows", total)
        labels = {str(c): str(t) for c, t in dict(self.variable_labels).items() if str(c) in columns and str(t).strip()}
        object.__setattr__(self, "variable_labels", labels)

    # ----------------------------------------------------------- queries
    @property
    def cardinalities(self) -> tuple[int, ...]:
        """Number of states of each column."""
        return tuple(len(s) for s in self.states)

    @property
    def n_patterns(self) -> int:
        """Number of unique patterns ``m``."""
        return int(self.patterns.shape[0])

    def index(self, column: str | int) -> int:
        """Position of ``column`` (a name or an index)."""
        if isinstance(column, (int, np.integer)) and not isinstance(column, bool):
            if not -len(self.columns) <= column < len(self.columns):
                raise DataError(f"column index {column} out of range for {len(self.columns)} columns")
            return int(column) % len(self.columns)
        try:
            return self.columns.index(column)
        except ValueError:
            raise DataError(f"no column named {column!r}; columns are {', '.join(map(shown, self.columns))}") from None

    def decode(self, column: str | int, code: int) -> Any:
        """The value that ``code`` stands for in ``column``; ``None`` for ``-1`` (missing)."""
        states = self.states[self.index(column)]
        code = int(code)
        if code == -1:
            return None
        if not 0 <= code < len(states):
            raise DataError(f"column {column!r}: code {code} out of range for {len(states)} states")
        return states[code]

    def subset(self, columns: Iterable[str | int]) -> Dataset:
        """The data restricted to ``columns`` (in that order), patterns re-compressed."""
        idx = [self.index(c) for c in columns]
        if len(set(idx)) != len(idx):
            raise DataError("subset names a column twice")
        patterns, counts, inverse = compress_rows(self.patterns[:, idx], self.counts, return_inverse=True)
        return Dataset(
            columns=tuple(self.columns[i] for i in idx),
            states=tuple(self.states[i] for i in idx),
            patterns=patterns,
            counts=counts,
            n_rows=self.n_rows,
            n_missing=weighted_missing(patterns, counts),
            source=self.source,
            count_column=self.count_column,
            rows=None if self.rows is None else inverse[self.rows],
            variable_labels=self.variable_labels,
        )

    def with_state_order(self, column: str | int, order: Sequence) -> Dataset:
        """The same data with the states of ``column`` listed in ``order``, its codes renumbered.

        ``order`` names each state of the column once, as its value or its
        text (``"2"`` for the state ``2``). The counts and every other column
        are unchanged; only which code stands for which value moves (models fit
        to the data are the same up to relabelling the column's states).

        >>> from effdim.reading import load_csv
        >>> data = load_csv(b"freq,item\\nsometimes,1\\nnever,2\\noften,1\\n", name="s.csv")
        >>> data.states[0]
        ('never', 'sometimes', 'often')
        >>> again = data.with_state_order("freq", ["often", "sometimes", "never"])
        >>> again.states[0], again.decode("freq", 0), again.n_rows
        (('often', 'sometimes', 'never'), 'often', 3.0)
        """
        j = self.index(column)
        states = self.states[j]
        position = {s: i for i, s in enumerate(states)}
        by_text = {str(s): i for i, s in enumerate(states)}
        codes = [position.get(s, by_text.get(str(s))) for s in order]
        if None in codes or sorted(codes) != list(range(len(states))):
            listed = ", ".join(repr(s) for s in states)
            raise DataError(
                f"column {self.columns[j]!r}: a new order must list each of its states once "
                f"({listed}), got {', '.join(repr(s) for s in order) or 'nothing'}"
            )
        new_code = np.empty(len(states) + 1, dtype=np.int64)
        new_code[codes] = np.arange(len(states))
        new_code[-1] = -1  # missing stays missing
        patterns = self.patterns.copy()
        patterns[:, j] = new_code[patterns[:, j]]
        patterns, counts, inverse = compress_rows(patterns, self.counts, return_inverse=True)
        return Dataset(
            columns=self.columns,
            states=tuple(tuple(states[c] for c in codes) if i == j else s for i, s in enumerate(self.states)),
            patterns=patterns,
            counts=counts,
            n_rows=self.n_rows,
            n_missing=self.n_missing,
            source=self.source,
            count_column=self.count_column,
            rows=None if self.rows is None else inverse[self.rows],
            variable_labels=self.variable_labels,
        )

    def to_frame(self, *, decoded: bool = True, count_name: str = "count") -> pd.DataFrame:
        """One row per unique pattern plus a count column.

        With ``decoded=True`` cells hold the original values (``None`` where
        missing); otherwise the integer codes. The count column is called
        ``count_name``, suffixed with ``_`` while that clashes with a column.
        """
        while count_name in self.columns:
            count_name += "_"
        data: dict[str, Any] = {}
        for j, name in enumerate(self.columns):
            codes = self.patterns[:, j]
            if decoded:
                lookup = np.empty(len(self.states[j]) + 1, dtype=object)
                lookup[:-1] = self.states[j]
                lookup[-1] = None  # code -1 indexes the last slot
                column = pd.Series(lookup[codes], dtype=object)
                # infer a dtype only without missing cells (None would turn ints into floats)
                data[name] = column if (codes < 0).any() else column.infer_objects()
            else:
                data[name] = codes.copy()
        counts = self.counts
        whole = np.all(counts == np.round(counts))
        data[count_name] = counts.astype(np.int64) if whole else counts.copy()
        return pd.DataFrame(data)

    def __repr__(self) -> str:
        cards = ",".join(map(str, self.cardinalities))
        return (
            f"Dataset({self.source or 'unnamed'}: {len(self.columns)} columns [{cards}], "
            f"{_fmt_number(self.n_rows)} rows, {self.n_patterns} unique patterns, "
            f"{_fmt_number(self.n_missing)} missing cells)"
        )


def _fmt_number(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def compress_rows(codes: np.ndarray, weights: np.ndarray | None, return_inverse: bool = False) -> tuple:
    """Unique rows of an ``(n, c)`` code matrix (sorted) and their total weights (:func:`compress_columns`)."""
    codes = np.asarray(codes, dtype=np.int64)
    patterns, counts, inverse = compress_columns(
        [codes[:, j] for j in range(codes.shape[1])], weights, n=codes.shape[0]
    )
    return (patterns, counts, inverse) if return_inverse else (patterns, counts)


def compress_columns(
    columns: Sequence[np.ndarray], weights: np.ndarray | None, n: int | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Unique patterns (sorted), their total weights, and the pattern of each row, from one code array per column.

    The columns are folded into one int64 key per row (mixed radix over
    ``k + 1`` symbols, the extra one for missing) and a 1-d ``np.unique``
    does the work; when the next column would overflow the key, the key is
    first replaced by its rank among the distinct keys so far (order kept).
    No rows x columns matrix is built: memory is a few int64 per row.
    """
    n = len(columns[0]) if columns else (n or 0)
    c = len(columns)
    if n == 0:
        return np.zeros((0, c), dtype=np.int64), np.zeros(0), np.zeros(0, dtype=np.int64)
    key = np.zeros(n, dtype=np.int64)
    span = 1  # keys lie in 0..span-1
    for col in columns:
        radix = int(col.max()) + 2  # symbols -1..max -> 0..max+1
        if span * radix >= 2**62:
            _, key = np.unique(key, return_inverse=True)
            key = key.reshape(-1).astype(np.int64)
            span = int(key.max()) + 1
        key *= radix
        key += col
        key += 1
        span *= radix
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    patterns = np.empty((first.size, c), dtype=np.int64)
    for j, col in enumerate(columns):
        patterns[:, j] = col[first]
    counts = np.bincount(inverse, weights=weights, minlength=first.size).astype(np.float64)
    return patterns, counts, inverse


def weighted_missing(patterns: np.ndarray, counts: np.ndarray) -> int | float:
    total = float(((patterns < 0).sum(axis=1) * counts).sum())
    return int(total) if total.is_integer() else total
