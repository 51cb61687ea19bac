"""Building a :class:`~effdim.data.Dataset` from what a reader hands over: columns of codes, a frame, or pattern codes.

Loading rules (:func:`effdim.reading.read_data`, :func:`effdim.reading.load_csv`, :func:`from_frame`)
----------------------------------------------------------------------------------------------------
* The first non-blank line is the header; blank lines are skipped.
* Cells are compared after stripping surrounding white space; a cell equal to
  one of the ``missing`` tokens is missing (code ``-1``), kept and counted,
  never dropped. Every reader hands columns over as codes (:class:`Column`),
  never one text per cell, and the pattern table is built column by column.
* The states of a column are its distinct values, in their natural order: if
  every value reads as an integer the values become ``int`` and sort
  numerically; else if every value reads as a finite decimal they become
  ``float``; else they stay strings, along their scale where
  :func:`effdim.data.ordinal.answer_order` recognises one (numbered labels
  such as "1 Extremely well"; agreement, frequency, quality, yes/no and
  other common answer scales, low end first), else in the order of their
  first appearance in the file. Every text column with the same set of
  answers then gets the same order (:func:`effdim.data.ordinal.shared_orders`),
  so the items of a questionnaire compare answer by answer. Distinct
  spellings are never merged (``"1"`` and ``"01"`` keep the column as
  strings). :meth:`Dataset.with_state_order` puts them in another order.
* A column of counts (``count_column``) turns each row into ``count`` copies
  of its pattern; rows with count 0 contribute nothing and leave no pattern.
* Rejected, with a :class:`DataError` naming the culprit: an empty file, a
  file without data rows, fewer than two data columns, binary content,
  ragged rows, duplicate or empty column names, a column with a single
  state (it carries no information) or with more than ``max_states`` states
  (probably continuous or an identifier; the columns named in ``unlimited``
  are exempt: a distal outcome, a covariate or a weight may be a number with
  many values), a file over ``max_bytes``, a
  header over ``max_columns`` columns, negative, missing or non-numeric
  counts, and counts that sum to more than :data:`MAX_TOTAL_COUNT`.

Error messages give the 1-based line of the file (blank lines included), so
``line 7`` is what a text editor shows. Reading a CSV file and checking its
structure (encoding, separator, quotes, ragged rows) is :mod:`effdim.csvscan`;
choosing the reader of a file's format is :mod:`effdim.reading`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..errors import shown
from ..limits import MAX_LABEL_CHARS
from .dataset import DataError, Dataset, TooManyValues, compress_columns, compress_rows, weighted_missing
from .ordinal import answer_order, shared_orders

#: Column names (case-insensitive) that ``count_column="auto"`` takes for counts.
COUNT_COLUMN_NAMES = ("count", "counts", "n", "freq", "frequency", "weight")
#: Cell texts read as missing by default.
MISSING_TOKENS = ("", "NA", "NaN", "nan", "?")


def from_frame(
    df: pd.DataFrame,
    *,
    count_column: str | None = None,
    max_states: int = 50,
    missing: Sequence[str] = (),
    name: str = "data frame",
    unlimited: Collection[str] = (),
) -> Dataset:
    """Build a :class:`Dataset` from a pandas DataFrame (one row per case).

    NaN/None/pd.NA cells are missing, as are string cells equal (after
    stripping) to one of ``missing``. ``count_column`` works as in
    :func:`effdim.reading.load_csv` (``None`` by default here). An ordered categorical column
    keeps its category order; other columns sort naturally. Rows are named by
    their index label in messages. The columns named in ``unlimited`` may have
    more than ``max_states`` values (numbers read for a three-step analysis).

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
        header,
        columns,
        len(df),
        label,
        count_column=count_column,
        max_states=max_states,
        missing=missing,
        source=name,
        unlimited=unlimited,
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
    unlimited: Collection[str] = (),
) -> Dataset:
    """A :class:`Dataset` from ``n`` rows of coded columns (what every reader produces).

    ``label(i)`` names data row ``i`` in messages (``"line 7"``); ``sep``,
    the separator of a CSV file, for a hint when the header has one column;
    ``unlimited``, the columns exempt from ``max_states``.
    The rules on counts, states and missing cells are the module docstring's.
    """
    header = [str(h).strip() for h in header]
    _check_header(header, source, sep)
    limits = [math.inf if h in unlimited else max_states for h in header]
    return _build(header, list(columns), n, label, count_column, limits, set(missing), source)


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
    patterns, pattern_counts, inverse = compress_rows(codes, weights, return_inverse=True)
    return Dataset(
        columns=columns,
        states=states,
        patterns=patterns,
        counts=pattern_counts,
        n_rows=float(pattern_counts.sum()),
        n_missing=weighted_missing(patterns, pattern_counts),
        source=source,
        rows=inverse if counts is None else None,
    )


def _plain(value: Any) -> Any:
    """A numpy scalar as the Python value it holds (for readable messages)."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


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
                + ("; does the file lack a header line?" if all(reads_as_number(x) for x in header) else "")
            )
        seen[h] = j
    if len(header) < 2 and sep is not None:
        hint = next((f"; is the separator {s!r}?" for s in (";", "\t", "|", ",") if s != sep and s in header[0]), "")
        raise DataError(f"{source}: only {len(header)} column ({header[0]!r}); need at least two{hint}")


def reads_as_number(text: str) -> bool:
    """Whether ``text`` is a number as written (what ``float`` accepts: ``"3"``, ``"-1.5e3"``, ``"nan"``).

    >>> reads_as_number("2.5"), reads_as_number("A")
    (True, False)
    """
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
    max_states: list[float],
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
        col_codes, col_states = _encode_column(columns[j], header[j], missing, max_states[j], source)
        codes.append(col_codes)
        states.append(col_states)
    codes, states = _in_shared_orders(codes, states, [columns[j].ordered is not None for j in data_idx])
    if weights is not None:
        keep = weights > 0
        if not keep.any():
            raise DataError(f"{source}: no data rows (every count in {header[used]!r} is 0)")
        if not keep.all():
            codes, weights = [c[keep] for c in codes], weights[keep]
    patterns, counts, inverse = compress_columns(codes, weights)
    return Dataset(
        columns=tuple(header[j] for j in data_idx),
        states=tuple(states),
        patterns=patterns,
        counts=counts,
        n_rows=float(counts.sum()),
        n_missing=weighted_missing(patterns, counts),
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
    shown = ", ".join(_short(value, 20) for value in examples[:5])
    return TooManyValues(
        f"{source}: column {column!r} has more than {limit} distinct values (e.g. {shown}, ...)", column
    )


def label_too_long(source: str, column: str, text: str, where: str = "") -> DataError:
    """The one message for a category label longer than :data:`effdim.limits.MAX_LABEL_CHARS`."""
    return DataError(
        f"{source}: column {column!r}{f' ({where})' if where else ''} holds a text of {len(text):,} characters "
        f"(starting {_short(text[:30])}); a category label may have at most {MAX_LABEL_CHARS:,}"
    )


def cell_text(value: Any) -> str:
    r"""A cell as the text a CSV file would hold: bytes decoded (UTF-8, else with ``\x..`` escapes for
    the bytes that are not), whole numbers without a decimal point, other numbers as Python writes them.

    >>> cell_text(b"caf\xc3\xa9"), cell_text(b"\xff1"), cell_text(2.0), cell_text(2.5), cell_text(3)
    ('café', '\\xff1', '2', '2.5', '3')
    """
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", "backslashreplace")
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return str(int(value))
    if isinstance(value, np.generic):
        value = value.item()
    return str(value)


def _encode_column(
    column: Column, name: str, missing: set[str], max_states: float, source: str
) -> tuple[np.ndarray, tuple]:
    """Integer codes (``-1`` missing) and naturally sorted states of one column."""
    # clean each distinct value once: bytes as text, strip text, spot missing tokens
    cleaned: list[Any] = []
    for u in column.uniques:
        if isinstance(u, (bytes, bytearray)):
            u = cell_text(u)
        if isinstance(u, str):
            if len(u) > MAX_LABEL_CHARS:
                raise label_too_long(source, name, u)
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
        raise too_many_values(source, name, max_states, states)
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


def _in_shared_orders(
    codes: list[np.ndarray], states: list[tuple], given: list[bool]
) -> tuple[list[np.ndarray], list[tuple]]:
    """The columns with every set of answers in one order (:func:`effdim.data.ordinal.shared_orders`),
    their codes renumbered to match."""
    ordered = shared_orders(states, given)
    for j, (old, new) in enumerate(zip(states, ordered)):
        if new != old:
            position = {s: i for i, s in enumerate(new)}
            lookup = np.array([position[s] for s in old] + [-1], dtype=codes[j].dtype)
            codes[j] = lookup[codes[j]]  # code -1 (missing) picks the trailing -1
            states[j] = new
    return codes, states


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
    if any(isinstance(v, str) for v in distinct) and not all(isinstance(v, str) for v in distinct):
        # numbers and texts in one column (an Excel column holding 1 and "1"): every cell as the text a CSV file
        # would hold, so the number 1 and the text "1" are one state, as they are in a CSV file
        texts = {v: cell_text(v) for v in distinct}
        states, by_text = _natural_states(list(dict.fromkeys(texts.values())))
        return states, {v: by_text[t] for v, t in texts.items()}
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
        distinct = answer_order(distinct) or distinct
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
