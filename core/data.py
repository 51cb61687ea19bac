"""Categorical data: loading, validation and compression into unique patterns.

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

Loading rules (:func:`effdim.reading.read_data`, :func:`effdim.reading.load_csv`, :func:`from_frame`)
----------------------------------------------------
* The first non-blank line is the header; blank lines are skipped.
* Cells are compared after stripping surrounding white space; a cell equal to
  one of the ``missing`` tokens is missing (code ``-1``), kept and counted,
  never dropped. Every reader hands columns over as codes (:class:`Column`),
  never one text per cell, and the pattern table is built column by column.
* The states of a column are its distinct values, in their natural order: if
  every value reads as an integer the values become ``int`` and sort
  numerically; else if every value reads as a finite decimal they become
  ``float``; else they stay strings in the order of their first appearance in
  the file (a survey's "never, sometimes, often"), except labels that all
  start with a number ("1 Extremely well", ..., "10 Not at all"), sorted by
  that number. Distinct spellings are never merged (``"1"`` and ``"01"`` keep
  the column as strings). :meth:`Dataset.with_state_order` puts them in
  another order.
* A column of counts (``count_column``) turns each row into ``count`` copies
  of its pattern; rows with count 0 contribute nothing and leave no pattern.
* Rejected, with a :class:`DataError` naming the culprit: an empty file, a
  file without data rows, fewer than two data columns, binary content,
  ragged rows, duplicate or empty column names, a column with a single
  state (it carries no information) or with more than ``max_states`` states
  (probably continuous or an identifier), a file over ``max_bytes``, a
  header over ``max_columns`` columns, negative, missing or non-numeric
  counts, and counts that sum to more than :data:`MAX_TOTAL_COUNT`.

Error messages give the 1-based line of the file (blank lines included), so
``line 7`` is what a text editor shows. Reading a CSV file and checking its
structure (encoding, separator, quotes, ragged rows) is :mod:`effdim.csvscan`;
choosing the reader of a file's format is :mod:`effdim.reading`.

New data in a known coding (:func:`encode_rows`)
------------------------------------------------
A fitted model reads new rows in the coding of its training data: a value
is matched to a training state as it is, else by its text (``"2"`` matches
the state ``2``); missing cells (``None``, NaN, ``pd.NA``) get ``-1``; a
value never seen in training is refused, naming the column and the states.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .errors import EffdimError, shown

__all__ = [
    "DataError",
    "LeavesWithoutColumns",
    "Dataset",
    "from_frame",
    "from_patterns",
    "check_matches_model",
    "resolve_mapping",
    "encode_rows",
    "Column",
    "column_of",
    "from_columns",
    "too_many_values",
    "COUNT_COLUMN_NAMES",
    "MISSING_TOKENS",
    "MAX_TOTAL_COUNT",
]

#: Column names (case-insensitive) that ``count_column="auto"`` takes for counts.
COUNT_COLUMN_NAMES = ("count", "counts", "n", "freq", "frequency", "weight")
#: Cell texts read as missing by default.
MISSING_TOKENS = ("", "NA", "NaN", "nan", "?")


class DataError(EffdimError, ValueError):
    """Data that cannot be used; the message names the culprit (column, line, value)."""


class LeavesWithoutColumns(DataError):
    """Leaves of a model that name no data column and no mapping given (:func:`resolve_mapping`).

    ``str(err)`` says how to match them in Python (``mapping={leaf: column}``); each other face
    adds its own remedy to :attr:`problem` in its own words (the CLI its ``--map`` option, the
    dashboard its Model tab), never another face's option names.
    """

    def __init__(self, problem: str):
        self.problem = problem
        super().__init__(f"{problem}; name the leaves after the columns, or pass mapping={{leaf: column}}")

    def __reduce__(self):  # pickles as it was raised (a worker process sends it back)
        return type(self), (self.problem,)


# --------------------------------------------------------------------------- Dataset
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
        patterns, counts, inverse = _compress(self.patterns[:, idx], self.counts, return_inverse=True)
        return Dataset(
            columns=tuple(self.columns[i] for i in idx),
            states=tuple(self.states[i] for i in idx),
            patterns=patterns,
            counts=counts,
            n_rows=self.n_rows,
            n_missing=_weighted_missing(patterns, counts),
            source=self.source,
            count_column=self.count_column,
            rows=None if self.rows is None else inverse[self.rows],
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
        ('sometimes', 'never', 'often')
        >>> again = data.with_state_order("freq", ["never", "sometimes", "often"])
        >>> again.states[0], again.decode("freq", 0), again.n_rows
        (('never', 'sometimes', 'often'), 'never', 3.0)
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
        patterns, counts, inverse = _compress(patterns, self.counts, return_inverse=True)
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


# --------------------------------------------------------------------- loading
def from_frame(
    df: pd.DataFrame,
    *,
    count_column: str | None = None,
    max_states: int = 50,
    missing: Sequence[str] = (),
    name: str = "data frame",
) -> Dataset:
    """Build a :class:`Dataset` from a pandas DataFrame (one row per case).

    NaN/None/pd.NA cells are missing, as are string cells equal (after
    stripping) to one of ``missing``. ``count_column`` works as in
    :func:`effdim.reading.load_csv` (``None`` by default here). An ordered categorical column
    keeps its category order; other columns sort naturally. Rows are named by
    their index label in messages.

    Examples
    --------
    >>> data = from_frame(pd.DataFrame({"A": ["+", "-", "+"], "B": [1, 2, None]}))
    >>> data.states, data.patterns.tolist(), data.n_missing
    ((('+', '-'), (1, 2)), [[0, -1], [0, 0], [1, 1]], 1)
    """
    if not isinstance(df, pd.DataFrame):
        raise DataError(f"expected a pandas DataFrame, got {type(df).__name__}")
    header = [str(c).strip() for c in df.columns]
    _check_header(header, name, None)
    index = df.index

    def label(i: int) -> str:
        return f"row {i + 1} (index {index[i]!r})"

    columns = [column_of(df.iloc[:, j]) for j in range(df.shape[1])]
    return from_columns(
        header, columns, len(df), label, count_column=count_column, max_states=max_states, missing=missing, source=name
    )


@dataclass
class Column:
    """One column as codes: ``uniques[codes[i]]`` is row ``i``'s value, code ``-1`` a missing one.

    ``ordered`` is the category order of an ordered categorical column. This
    is how every reader hands a column over (:mod:`effdim.csvscan`,
    :mod:`effdim.reading`): one small integer per cell, never a text per cell.
    """

    codes: np.ndarray
    uniques: list
    ordered: list | None = None


def column_of(series: pd.Series) -> Column:
    """A pandas column as a :class:`Column` (NaN, None and pd.NA get code ``-1``)."""
    ordered = None
    if isinstance(series.dtype, pd.CategoricalDtype) and series.dtype.ordered:
        ordered = list(series.dtype.categories)
    codes, uniques = pd.factorize(series, use_na_sentinel=True)
    return Column(codes, list(uniques.tolist() if hasattr(uniques, "tolist") else uniques), ordered)


def from_columns(
    header: Sequence[str],
    columns: Sequence[Column],
    n: int,
    label: Callable[[int], str],
    *,
    count_column: str | None,
    max_states: int,
    missing: Sequence[str],
    source: str,
    sep: str | None = None,
) -> Dataset:
    """A :class:`Dataset` from ``n`` rows of coded columns (what every reader produces).

    ``label(i)`` names data row ``i`` in messages (``"line 7"``); ``sep``,
    the separator of a CSV file, for a hint when the header has one column.
    The rules on counts, states and missing cells are the module docstring's.
    """
    header = [str(h).strip() for h in header]
    _check_header(header, source, sep)
    return _build(header, list(columns), n, label, count_column, max_states, set(missing), source)


def from_patterns(
    patterns_codes: Any,
    counts: Any = None,
    columns: Sequence[str] | None = None,
    *,
    cardinalities: Sequence[int] | None = None,
    states: Sequence[Sequence] | None = None,
    source: str = "patterns",
) -> Dataset:
    """A :class:`Dataset` from integer codes (one row per case or per pattern).

    Parameters
    ----------
    patterns_codes:
        ``(N, n)`` integer codes ``0..k-1``, ``-1`` for missing.
    counts:
        ``(N,)`` non-negative weights of the rows; default 1 each. Rows with
        weight 0 leave no pattern. Duplicate rows are merged.
    columns:
        Names; default ``O1..On`` (the default leaf names of parsed models).
    cardinalities, states:
        The states of each column: ``states`` explicitly, or ``range(k)``
        for ``cardinalities``; default ``range(max code + 1)``.

    Examples
    --------
    >>> data = from_patterns([[0, 1], [0, 1], [1, 0]])
    >>> data.columns, data.patterns.tolist(), data.counts.tolist()
    (('O1', 'O2'), [[0, 1], [1, 0]], [2.0, 1.0])
    """
    codes = np.asarray(patterns_codes)
    if codes.ndim != 2:
        raise DataError(f"patterns must be a 2-d array (rows x columns), got shape {codes.shape}")
    if codes.size and not np.issubdtype(codes.dtype, np.integer):
        if not np.all(codes == np.round(codes)):
            raise DataError("pattern codes must be integers")
    codes = codes.astype(np.int64, copy=False)
    n = codes.shape[1]
    columns = tuple(columns) if columns is not None else tuple(f"O{i + 1}" for i in range(n))
    if len(columns) != n:
        raise DataError(f"{n} columns of codes but {len(columns)} names")
    if counts is None:
        weights = np.ones(codes.shape[0])
    else:
        weights = np.asarray(counts, dtype=np.float64).reshape(-1)
        if weights.shape != (codes.shape[0],):
            raise DataError(f"need one count per row: {codes.shape[0]} rows, {weights.size} counts")
        bad = ~np.isfinite(weights) | (weights < 0)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise DataError(f"row {i + 1}: count {_plain(weights[i])!r} is not a non-negative number")
    if states is not None:
        states = tuple(tuple(s) for s in states)
    else:
        if cardinalities is None:
            cardinalities = (codes.max(axis=0) + 1).tolist() if codes.size else [0] * n
        states = tuple(tuple(range(int(k))) for k in cardinalities)
    if len(states) != n:
        raise DataError(f"{n} columns of codes but {len(states)} state lists")
    keep = weights > 0
    if not keep.all():
        codes, weights = codes[keep], weights[keep]
    patterns, pattern_counts, inverse = _compress(codes, weights, return_inverse=True)
    return Dataset(
        columns=columns,
        states=states,
        patterns=patterns,
        counts=pattern_counts,
        n_rows=float(pattern_counts.sum()),
        n_missing=_weighted_missing(patterns, pattern_counts),
        source=source,
        rows=inverse if counts is None else None,
    )


# ------------------------------------------------------------------ model match
def resolve_mapping(dataset: Dataset, model: Any, mapping: Mapping[str, str] | None = None) -> dict[str, str]:
    """Which data column feeds each observed leaf of ``model`` (leaf -> column).

    Without ``mapping``: by name when every leaf names a column; otherwise
    positionally when the leaves carry the default names ``O1..On`` (as in
    ``"3:2,2,2,2"``) and the data have exactly ``n`` columns.

    Examples
    --------
    >>> from effdim import parse_model
    >>> data = from_patterns([[0, 1], [1, 0]], columns=["a", "b"])
    >>> resolve_mapping(data, parse_model("2:2,2"))                 # by position
    {'O1': 'a', 'O2': 'b'}
    >>> resolve_mapping(data, parse_model("X:2:b:2,a:2"))           # by name
    {'b': 'b', 'a': 'a'}
    """
    leaves = list(model.observed)
    columns = dataset.columns
    if mapping is None:
        if all(leaf in columns for leaf in leaves):
            return {leaf: leaf for leaf in leaves}
        default = [f"O{i + 1}" for i in range(len(leaves))]
        if sorted(leaves, key=lambda s: (len(s), s)) == default and len(columns) == len(leaves):
            return {f"O{i + 1}": columns[i] for i in range(len(leaves))}
        absent = [leaf for leaf in leaves if leaf not in columns]
        hint = (
            f"; the model has {len(leaves)} leaves and the data {len(columns)} columns"
            if len(columns) != len(leaves)
            else ""
        )
        raise LeavesWithoutColumns(
            f"leaves {', '.join(map(repr, absent))} name no data column (columns: {', '.join(map(shown, columns))}){hint}"
        )
    mapping = dict(mapping)
    for leaf in mapping:
        if leaf not in leaves:
            raise DataError(f"mapping names {leaf!r}, which is not an observed leaf of the model")
    missing_leaves = [leaf for leaf in leaves if leaf not in mapping]
    if missing_leaves:
        raise DataError(f"mapping gives no column for leaves {', '.join(map(repr, missing_leaves))}")
    seen: dict[str, str] = {}
    for leaf in leaves:
        column = mapping[leaf]
        dataset.index(column)  # raises naming the column
        if column in seen:
            raise DataError(f"column {column!r} is mapped to two leaves, {seen[column]!r} and {leaf!r}")
        seen[column] = leaf
    return {leaf: mapping[leaf] for leaf in leaves}


def check_matches_model(dataset: Dataset, model: Any, mapping: Mapping[str, str] | None = None) -> Dataset:
    """The data arranged for ``model``: column ``j`` feeds leaf ``model.observed[j]``.

    Columns are chosen by :func:`resolve_mapping`, reordered to
    ``model.observed`` and *renamed to the leaf names*, so afterwards
    ``dataset.columns == tuple(model.observed)``; columns the model does not
    use are dropped (patterns re-compressed). The original column of each
    leaf is ``resolve_mapping(dataset, model, mapping)[leaf]``.

    Cardinalities: a column with more states than its leaf is rejected. A
    column with *fewer* states is accepted: its codes ``0..k-1`` are valid
    states of the leaf, and the remaining leaf states are values that simply
    did not occur in the sample (sampled data, or a domain known to be larger
    than what was observed); their maximum-likelihood probability is zero and
    the model's dimension is that of the model as written. The returned
    dataset keeps its own states, so take CPT shapes from ``model.card``.

    Examples
    --------
    >>> from effdim import parse_model
    >>> data = from_patterns([[0, 1, 0], [1, 0, 1]], columns=["a", "b", "c"])
    >>> check_matches_model(data, parse_model("X:2:c:2,a:2")).columns
    ('c', 'a')
    """
    resolved = resolve_mapping(dataset, model, mapping)
    for leaf, column in resolved.items():
        k = len(dataset.states[dataset.index(column)])
        if k > model.card(leaf):
            raise DataError(
                f"column {column!r} has {k} states but leaf {leaf!r} has cardinality {model.card(leaf)}; "
                f"set the leaf to {k} states or recode the column"
            )
    sub = dataset.subset([resolved[leaf] for leaf in model.observed])
    return Dataset(
        columns=tuple(model.observed),
        states=sub.states,
        patterns=sub.patterns,
        counts=sub.counts,
        n_rows=sub.n_rows,
        n_missing=sub.n_missing,
        source=sub.source,
        count_column=sub.count_column,
        rows=sub.rows,
    )


# ------------------------------------------------------------ new data, known coding
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


# ===================================================================== internals
def _plain(value: Any) -> Any:
    """A numpy scalar as the Python value it holds (for readable messages)."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _fmt_number(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def _check_header(header: list[str], source: str, sep: str | None) -> None:
    for j, h in enumerate(header):
        if not h:
            raise DataError(
                f"{source}: column {j + 1} has no name"
                + (" (a row-number column written by R's write.csv?)" if j == 0 else "")
                + "; give every column a name"
            )
    seen: dict[str, int] = {}
    for j, h in enumerate(header):
        if h in seen:
            raise DataError(
                f"{source}: duplicate column name {h!r} (columns {seen[h] + 1} and {j + 1})"
                + ("; does the file lack a header line?" if all(_is_number(x) for x in header) else "")
            )
        seen[h] = j
    if len(header) < 2 and sep is not None:
        hint = next((f"; is the separator {s!r}?" for s in (";", "\t", "|", ",") if s != sep and s in header[0]), "")
        raise DataError(f"{source}: only {len(header)} column ({header[0]!r}); need at least two{hint}")


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _build(
    header: list[str],
    columns: list[Column],
    n: int,
    label: Callable[[int], str],
    count_column: str | None,
    max_states: int,
    missing: set[str],
    source: str,
) -> Dataset:
    """Shared core of every reader: counts, states, then the pattern table (no rows x columns matrix)."""
    if n == 0:
        raise DataError(f"{source}: no data rows (only a header: {', '.join(map(shown, header))})")
    weights, used = _counts(header, columns, count_column, label, source)
    data_idx = [j for j in range(len(header)) if j != used]
    if len(data_idx) < 2:
        names = ", ".join(repr(header[j]) for j in data_idx)
        raise DataError(
            f"{source}: fewer than two data columns ({names or 'none'}"
            + (f", plus counts in {header[used]!r}" if used is not None else "")
            + ")"
        )
    codes: list[np.ndarray] = []
    states: list[tuple] = []
    for j in data_idx:
        col_codes, col_states = _encode_column(columns[j], header[j], missing, max_states, source)
        codes.append(col_codes)
        states.append(col_states)
    if weights is not None:
        keep = weights > 0
        if not keep.any():
            raise DataError(f"{source}: no data rows (every count in {header[used]!r} is 0)")
        if not keep.all():
            codes, weights = [c[keep] for c in codes], weights[keep]
    patterns, counts, inverse = _compress_columns(codes, weights)
    return Dataset(
        columns=tuple(header[j] for j in data_idx),
        states=tuple(states),
        patterns=patterns,
        counts=counts,
        n_rows=float(counts.sum()),
        n_missing=_weighted_missing(patterns, counts),
        source=source,
        count_column=header[used] if used is not None else None,
        rows=inverse if used is None else None,
    )


#: The counts of a data set may sum to at most this: beyond it a log-likelihood
#: (a sum of count x log-probability) loses every digit a comparison of models needs.
MAX_TOTAL_COUNT = 1e15


def _counts(
    header: list[str],
    columns: list[Column],
    count_column: str | None,
    label: Callable[[int], str],
    source: str,
) -> tuple[np.ndarray | None, int | None]:
    """The count column's weights and position, or ``(None, None)``."""
    if count_column is None:
        return None, None
    if count_column == "auto":
        found = []
        for j, h in enumerate(header):
            if h.lower() not in COUNT_COLUMN_NAMES:
                continue
            numbers = _numbers(columns[j])
            ok = np.isfinite(numbers) & (numbers >= 0)
            if ok.all():
                found.append((j, numbers))
            elif h.lower() != "n" and np.isfinite(numbers).mean() >= 0.5:
                # clearly meant as counts (mostly numbers) but broken somewhere
                _bad_count(header[j], columns[j], numbers, label, source)
        if len(found) > 1:
            raise DataError(
                f"{source}: several columns could hold the counts ({', '.join(repr(header[j]) for j, _ in found)}); "
                "pass count_column=<name> or count_column=None"
            )
        if not found:
            return None, None
        j, numbers = found[0]
    else:
        if count_column not in header:
            raise DataError(
                f"{source}: count column {count_column!r} not found; columns are {', '.join(map(shown, header))}"
            )
        j = header.index(count_column)
        numbers = _numbers(columns[j])
        if not (np.isfinite(numbers) & (numbers >= 0)).all():
            _bad_count(count_column, columns[j], numbers, label, source)
    with np.errstate(over="ignore"):
        total = float(np.sum(numbers, dtype=np.float64))
    if not total <= MAX_TOTAL_COUNT:
        raise DataError(
            f"{source}: the counts in column {header[j]!r} sum to {total:.3g}, more than "
            f"{MAX_TOTAL_COUNT:.0e}; no survey is that large: is it a count column?"
        )
    return numbers, j


def _numbers(column: Column) -> np.ndarray:
    """A column's cells as float64, NaN where a cell is missing or not a number."""
    values = _numeric(column.uniques)
    return np.append(values, np.nan)[column.codes]  # code -1 picks the trailing NaN


def _numeric(values: list) -> np.ndarray:
    """Values as float64, NaN where a value is not a number (booleans are not numbers)."""
    out = np.full(len(values), np.nan)
    for i, v in enumerate(values):
        if isinstance(v, (bool, np.bool_)) or v is None:
            continue
        if isinstance(v, str):
            v = v.strip()
            if len(v) > 400:  # longer than any float's text: not a count
                continue
        try:
            out[i] = float(v)
        except (TypeError, ValueError, OverflowError):
            pass
    return out


def _bad_count(column: str, raw: Column, numbers: np.ndarray, label: Callable[[int], str], source: str) -> None:
    bad = np.flatnonzero(~(np.isfinite(numbers) & (numbers >= 0)))
    i = int(bad[0])
    code = int(raw.codes[i])
    value = _plain(raw.uniques[code]) if code >= 0 else None
    what = "negative" if np.isfinite(numbers[i]) else "not a number"
    more = f" ({bad.size} bad counts in all)" if bad.size > 1 else ""
    raise DataError(f"{source}: {label(i)}: count {_short(value)} in column {column!r} is {what}{more}")


def _short(value: Any, width: int = 40) -> str:
    """``repr(value)``, cut to ``width`` characters (a 4,000-digit cell in a message)."""
    text = (
        repr(value)
        if not isinstance(value, int) or abs(value) < 10**width
        else f"a {len(str(abs(value)))}-digit number"
    )
    return text if len(text) <= width else text[: width - 1] + "…"


def too_many_values(source: str, column: str, limit: int, examples: list) -> DataError:
    """The one message for a column with more than ``limit`` distinct values (every reader uses it)."""
    shown = ", ".join(map(repr, examples[:5]))
    return DataError(
        f"{source}: column {column!r} has more than {limit} distinct values (e.g. {shown}, ...): "
        "probably continuous or an identifier; discretize or drop it"
    )


def _encode_column(
    column: Column, name: str, missing: set[str], max_states: int, source: str
) -> tuple[np.ndarray, tuple]:
    """Integer codes (``-1`` missing) and naturally sorted states of one column."""
    # clean each distinct value once: strip text, spot missing tokens
    cleaned: list[Any] = []
    for u in column.uniques:
        if isinstance(u, str):
            u = u.strip()
            if u in missing:
                u = None
        elif u is None or (isinstance(u, float) and math.isnan(u)) or u is pd.NA or u is pd.NaT:
            u = None
        cleaned.append(u)
    present = [u for u in cleaned if u is not None]
    if column.ordered is not None:
        distinct = list(dict.fromkeys(present))
        rank = {c: i for i, c in enumerate(column.ordered)}
        states = sorted(distinct, key=lambda c: rank.get(c, len(rank)))
        as_state = {v: v for v in distinct}
    else:
        states, as_state = _natural_states(present)
    if len(states) > max_states:
        raise too_many_values(source, name, max_states, [_short(s, 20) for s in states])
    if len(states) == 0:
        raise DataError(f"{source}: column {name!r} has no values (every cell is missing)")
    if len(states) == 1:
        raise DataError(
            f"{source}: column {name!r} has a single value {_short(states[0])}: it carries no information; drop it"
        )
    position = {s: i for i, s in enumerate(states)}
    dtype = np.int16 if len(states) < 2**15 else np.int32
    lookup = np.array([-1 if u is None else position[as_state[u]] for u in cleaned] + [-1], dtype=dtype)
    return lookup[column.codes], tuple(states)  # code -1 (missing) picks the trailing -1


_LEADING_NUMBER = re.compile(r"\s*(\d+)")


def _natural_states(values: list[Any]) -> tuple[list, dict]:
    """Distinct values in their natural order, and a map from each value to its state.

    Strings that all read as integers become ``int`` (sorted numerically),
    else as finite decimals ``float``, unless two spellings would merge
    (``"1"`` and ``"01"``), in which case they stay strings. Other strings
    keep the order in which they first appear (a survey's "never, sometimes,
    often" is not alphabetical), except labels that all start with a number
    ("1 Extremely well", ..., "10 Not at all"), sorted by that number.
    Integral floats (a pandas int column with NaN) become ``int``.
    """
    distinct = list(dict.fromkeys(values))
    if all(isinstance(v, str) for v in distinct):
        for convert in (int, float):
            try:
                converted = [convert(v) for v in distinct]
            except (ValueError, OverflowError):
                continue
            if convert is float and not all(math.isfinite(c) for c in converted):
                continue
            if len(set(converted)) == len(converted):
                states = sorted(converted)
                return states, dict(zip(distinct, converted))
        numbered = [_LEADING_NUMBER.match(v) for v in distinct]
        if all(numbered):
            distinct = sorted(distinct, key=lambda v: (_number_key(_LEADING_NUMBER.match(v).group(1)), v))
        return distinct, {v: v for v in distinct}
    mapping: dict[Any, Any] = {}
    for v in distinct:
        if isinstance(v, (bool, np.bool_)):
            mapping[v] = bool(v)
        elif isinstance(v, (int, np.integer)):
            mapping[v] = int(v)
        elif isinstance(v, (float, np.floating)) and float(v).is_integer():
            mapping[v] = int(v)
        elif isinstance(v, (float, np.floating)):
            mapping[v] = float(v)
        else:
            mapping[v] = v
    states = list(dict.fromkeys(mapping.values()))

    def key(s: Any) -> tuple:
        if isinstance(s, (bool, int, float)):
            return (0, s, "")
        return (1, 0, str(s))

    return sorted(states, key=key), mapping


def _number_key(digits: str) -> tuple[int, str]:
    """Sort key of a run of digits as the number it writes, without converting it (any length)."""
    digits = digits.lstrip("0")
    return len(digits), digits


def _compress(codes: np.ndarray, weights: np.ndarray | None, return_inverse: bool = False) -> tuple:
    """Unique rows of an ``(n, c)`` code matrix (sorted) and their total weights (:func:`_compress_columns`)."""
    codes = np.asarray(codes, dtype=np.int64)
    patterns, counts, inverse = _compress_columns(
        [codes[:, j] for j in range(codes.shape[1])], weights, n=codes.shape[0]
    )
    return (patterns, counts, inverse) if return_inverse else (patterns, counts)


def _compress_columns(
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


def _weighted_missing(patterns: np.ndarray, counts: np.ndarray) -> int | float:
    total = float(((patterns < 0).sum(axis=1) * counts).sum())
    return int(total) if total.is_integer() else total
