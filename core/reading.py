"""Reading a data file of any format into a :class:`effdim.data.Dataset`: the one function every face calls.

:func:`read_data` takes a path (the CLI) or bytes with a file name (the
dashboard's upload) and returns a :class:`Loaded`: the data and how they
were read (format, encoding, separator, columns left out), which each face
shows in one line (:meth:`Loaded.description`). It is pure: no global state,
every limit an argument, so a server can call it in a worker thread or
process.

Formats, told by the file's first bytes, else by its name's extension:

* CSV (also ``.tsv``, ``.txt``): :mod:`effdim.csvscan` detects the encoding
  and the separator;
* SPSS ``.sav``/``.zsav`` (pyreadstat), Stata ``.dta`` (pandas): the value
  labels stored in the file become the category labels, in the order of
  their codes, and its variable labels the columns' descriptions
  (:attr:`effdim.data.Dataset.variable_labels`);
* Excel ``.xlsx`` (openpyxl): the first sheet, its first row the header;
* Parquet (pyarrow).

A binary file is checked against what it unpacks to (rows x columns, unpacked size, a label's length)
from its metadata or while it streams, before any frame of its cells is built (:mod:`effdim.binary_formats`).

Every rule of :mod:`effdim.data` applies to all of them, with the same
one-line :class:`effdim.data.DataError` messages; a file the format's
library cannot read is refused with a message naming the file and the
format, never the library's traceback.

Examples
--------
>>> loaded = read_data(b"a;b\\n1;x\\n2;y\\n", name="demo.csv")
>>> loaded.dataset.columns, loaded.description()
(('a', 'b'), 'CSV, UTF-8, fields separated by semicolons')
"""

from __future__ import annotations

import io
import os
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from .binary_formats import VARIABLE_LABELS, read_binary
from .data import (
    COUNT_COLUMN_NAMES,
    MISSING_TOKENS,
    Column,
    DataError,
    Dataset,
    column_of,
    from_columns,
)
from .data.choice import ColumnChoice
from .errors import shown as shown_text
from .read_limits import DEFAULT_MAX_COLUMNS, ReadLimits

__all__ = ["DEFAULT_MAX_COLUMNS", "EXTENSIONS", "FORMATS", "Loaded", "ReadLimits", "load_csv", "read_data"]

#: Format name -> the words shown.
FORMATS = {"csv": "CSV", "sav": "SPSS", "dta": "Stata", "xlsx": "Excel", "parquet": "Parquet"}
#: File name endings and the format each means (an upload box accepts these).
EXTENSIONS = {
    ".csv": "csv",
    ".tsv": "csv",
    ".txt": "csv",
    ".sav": "sav",
    ".zsav": "sav",
    ".dta": "dta",
    ".xlsx": "xlsx",
    ".xlsm": "xlsx",
    ".parquet": "parquet",
    ".pq": "parquet",
}


@dataclass(frozen=True)
class Loaded:
    """A data file as read: the data, and how (for the one line each face shows)."""

    dataset: Dataset
    format: str
    encoding: str | None = None
    separator: str | None = None
    #: Columns left out for having more than ``max_states`` distinct values (``ReadLimits(too_many_states="drop")``),
    #: name -> the distinct values seen before it was left out.
    dropped: tuple[tuple[str, int], ...] = ()
    #: The identifier columns (``ids``), one row per input row in the file's order; ``None`` without them.
    ids: pd.DataFrame | None = field(default=None, compare=False)

    def description(self) -> str:
        """``'CSV, Latin-1, fields separated by semicolons'``: what was detected or given."""
        from .text_formats import ENCODINGS, SEPARATORS

        parts = [FORMATS[self.format]]
        if self.encoding is not None:
            parts.append(ENCODINGS[self.encoding])
        if self.separator is not None:
            parts.append(f"fields separated by {SEPARATORS.get(self.separator, repr(self.separator))}")
        return ", ".join(parts)


def read_data(
    source: str | os.PathLike | io.IOBase | bytes,
    *,
    name: str | None = None,
    sep: str | None = None,
    encoding: str | None = None,
    count_column: str | None = "auto",
    missing: Sequence[str] = MISSING_TOKENS,
    limits: ReadLimits | None = None,
    columns: Sequence[str] | None = None,
    drop: Sequence[str] = (),
    ids: Sequence[str] = (),
) -> Loaded:
    """Read a data file (path, open file or bytes) into a :class:`Loaded`.

    The format is told by the file's first bytes, else by the extension of ``name`` or of the path (module
    docstring): ``name="answers.sav"`` reads bytes, or a path without a telling extension, as SPSS.

    Parameters
    ----------
    name:
        The file's name (for bytes: its extension may tell the format, and it
        names the data in messages); default: the path's file name.
    sep, encoding:
        CSV only; ``None`` detects them (:mod:`effdim.csvscan`).
    count_column, missing:
        As in :func:`effdim.reading.load_csv`.
    limits:
        The file's size, its columns, each column's distinct values and what
        happens at that limit, the columns exempt from it
        (:class:`effdim.read_limits.ReadLimits`; default: ``ReadLimits()``).
    columns, drop, ids:
        The columns to keep (default: every one, in the file's order), to
        leave out, and that identify the rows: read whatever their number of
        values, left out of the data and given back per input row in
        :attr:`Loaded.ids` (:class:`effdim.data.choice.ColumnChoice`).
    """
    return _read(source, None, name, sep, encoding, count_column, missing, limits or ReadLimits(), columns, drop, ids)


def _read(
    source: str | os.PathLike | io.IOBase | bytes,
    format: str | None,
    name: str | None,
    sep: str | None,
    encoding: str | None,
    count_column: str | None,
    missing: Sequence[str],
    limits: ReadLimits,
    columns: Sequence[str] | None,
    drop: Sequence[str],
    ids: Sequence[str],
) -> Loaded:
    """:func:`read_data` in the given ``format`` (``None``: detected)."""
    from .csvscan import read_bytes, read_cells

    choice = ColumnChoice.of(columns, drop, ids)
    # a column not kept may have any number of values: read past it instead of refusing the file for it
    drop_wide = limits.too_many_states == "drop" or choice.keep is not None
    limits = replace(
        limits, unlimited={*limits.unlimited, *choice.whole}, too_many_states="drop" if drop_wide else "refuse"
    )
    raw, file_name = read_bytes(source, limits.max_bytes)
    shown = shown_text(name) if name else file_name
    kind = format or _format(raw, name or (os.fspath(source) if isinstance(source, (str, os.PathLike)) else ""))
    if kind != "csv" and (sep is not None or encoding is not None):
        which = "a separator" if sep is not None else "an encoding"
        raise DataError(f"{shown}: {which} applies to CSV files only, not to a {FORMATS[kind]} file")
    if kind == "csv":
        cells = read_cells(
            raw,
            sep=sep,
            encoding=encoding,
            max_bytes=limits.max_bytes,
            max_columns=limits.max_columns,
            max_states=limits.max_states,
            unlimited=_count_candidates(count_column) | set(limits.unlimited),
            ignore=set(missing),
            drop_wide=drop_wide,
            name=shown,
        )
        header, kept = _kept(cells.header, cells.columns)
        lines = cells.lines
        header, kept, identifiers, wide = _chosen(choice, header, kept, len(lines), shown, dict(cells.dropped), missing)
        dataset = from_columns(
            header,
            kept,
            len(lines),
            lambda i: f"line {lines[i]}",
            count_column=count_column,
            max_states=limits.max_states,
            missing=missing,
            source=shown,
            sep=cells.separator,
            unlimited=limits.unlimited,
        )
        return Loaded(dataset, "csv", cells.encoding, cells.separator, wide, ids=identifiers)
    frame, labels = _read_frame(raw, kind, shown, limits)
    return _from_frame(
        frame, labels, kind, shown, count_column=count_column, missing=missing, limits=limits, choice=choice
    )


def _chosen(
    choice: ColumnChoice,
    header: list[str],
    columns: list[Column],
    n: int,
    name: str,
    wide: dict[str, int],
    missing: Sequence[str],
) -> tuple[list[str], list[Column], pd.DataFrame | None, tuple[tuple[str, int], ...]]:
    """The columns ``choice`` keeps, the identifiers' values, and the columns left out for too many values that
    the choice did not leave out itself (what :attr:`Loaded.dropped` reports)."""
    if not choice.chosen:
        return header, columns, None, tuple(wide.items())
    header, columns, ids = choice.apply(header, columns, n, name, wide=wide, missing=missing)
    left = {c: k for c, k in wide.items() if c not in choice.drop and choice.keep is None}
    return header, columns, ids, tuple(left.items())


def _format(raw: bytes, name: str) -> str:
    """The format told by the first bytes (magic numbers), else by the name's extension, else CSV."""
    if raw.startswith((b"$FL2", b"$FL3")):
        return "sav"
    if raw.startswith(b"PAR1"):
        return "parquet"
    if raw.startswith(b"PK\x03\x04") and name.lower().endswith((".xlsx", ".xlsm")):
        return "xlsx"
    if (
        raw.startswith(b"<stata_dta>")
        or raw[:1] in (b"\x72", b"\x73", b"\x71", b"\x6f")
        and name.lower().endswith(".dta")
    ):
        return "dta"
    extension = os.path.splitext(name.lower())[1]
    if extension in EXTENSIONS:
        return EXTENSIONS[extension]
    if raw.startswith(b"PK\x03\x04"):
        return "xlsx"
    return "csv"


def _count_candidates(count_column: str | None) -> set[str]:
    """Columns exempt from the distinct-values limit, lower-cased: the ones that may hold counts."""
    if count_column is None:
        return set()
    if count_column == "auto":
        return set(COUNT_COLUMN_NAMES)
    return {count_column.lower()}


def _kept(header: list[str], columns: list[Column | None]) -> tuple[list[str], list[Column]]:
    keep = [j for j, c in enumerate(columns) if c is not None]
    return [header[j] for j in keep], [columns[j] for j in keep]


# ------------------------------------------------------------------ other formats
def _read_frame(raw: bytes, kind: str, name: str, limits: ReadLimits) -> tuple[pd.DataFrame, dict[str, dict]]:
    """The file as a DataFrame and its value labels (column -> {code: label}), within ``limits`` on what it
    unpacks to (:mod:`effdim.binary_formats`); one-line errors."""
    try:
        return read_binary(raw, kind, name, limits)
    except DataError:
        raise
    except ImportError as err:
        raise DataError(
            f"{name}: reading {FORMATS[kind]} files needs the package {err.name or err}; install it with pip"
        ) from None
    except MemoryError:  # a file the limits let through that still did not fit: said as a refusal of the file
        raise DataError(f"{name}: the file needs more memory than this computer has to read it") from None
    except Exception as err:  # noqa: BLE001 - each library has its own errors for a damaged file
        # the library's own words (a struct's byte count, a zip's directory) mean nothing to the user: say what
        # is wrong with the file in hers; the library's error stays chained for a log or a debugger
        raise DataError(
            f"{name}: not a readable {FORMATS[kind]} file (damaged, cut short, or another format under this name)"
        ) from err


def _from_frame(
    frame: pd.DataFrame,
    labels: dict[str, dict],
    kind: str,
    name: str,
    *,
    count_column: str | None,
    missing: Sequence[str],
    limits: ReadLimits,
    choice: ColumnChoice,
) -> Loaded:
    """A read frame as a :class:`Loaded`: labelled codes become their labels, in the order of their codes;
    the columns ``choice`` keeps."""
    limits.check_columns(name, frame.shape[1])
    header = [str(c) for c in frame.columns]
    exempt = _count_candidates(count_column) | {u.lower() for u in limits.unlimited}
    columns: list[Column | None] = []
    dropped = []
    ignore = set(missing)
    for j, h in enumerate(header):
        try:
            column = _labelled(frame.iloc[:, j], labels.get(frame.columns[j], {}))
        except TypeError:  # cells that are lists or records (Parquet's nested types) cannot be told apart
            raise DataError(f"{name}: column {h!r} holds lists or records, not one category per cell") from None
        distinct = sum(1 for u in column.uniques if not (isinstance(u, str) and u.strip() in ignore))
        if limits.too_many_states == "drop" and h.strip().lower() not in exempt and distinct > limits.max_states:
            dropped.append((h, distinct))
            columns.append(None)
        else:
            columns.append(column)
    header, kept = _kept(header, columns)
    header, kept, identifiers, wide = _chosen(choice, header, kept, len(frame), name, dict(dropped), missing)
    dataset = from_columns(
        header,
        kept,
        len(frame),
        lambda i: f"row {i + 1}",
        count_column=count_column,
        max_states=limits.max_states,
        missing=missing,
        source=name,
        unlimited=limits.unlimited,
    )
    described = frame.attrs.get(VARIABLE_LABELS, {})
    if described:  # the variable labels of the columns kept
        dataset = replace(dataset, variable_labels={c: described[c] for c in dataset.columns if c in described})
    return Loaded(dataset, kind, dropped=wide, ids=identifiers)


def _labelled(series: pd.Series, value_labels: dict) -> Column:
    """A column whose values have labels: each labelled value becomes its label, ordered by value."""
    column = column_of(series)
    if not value_labels:
        return column

    def as_key(v: Any) -> Any:
        return int(v) if isinstance(v, (float, np.floating)) and float(v).is_integer() else v

    labels = {as_key(k): str(v) for k, v in value_labels.items()}
    present = sorted(
        {as_key(u) for u in column.uniques},
        key=lambda v: (not isinstance(v, (int, float)), v if isinstance(v, (int, float)) else str(v)),
    )
    ordered = list(dict.fromkeys(labels.get(v, str(v)) for v in present))
    uniques = [labels.get(as_key(u), str(as_key(u))) for u in column.uniques]
    return Column(column.codes, uniques, ordered)


def load_csv(
    path_or_buffer: str | os.PathLike | io.IOBase | bytes,
    *,
    name: str | None = None,
    sep: str | None = None,
    encoding: str | None = None,
    count_column: str | None = "auto",
    missing: Sequence[str] = MISSING_TOKENS,
    limits: ReadLimits | None = None,
) -> Dataset:
    """Load a CSV file of categorical data (:func:`read_data` for every format), as a :class:`Dataset`.

    Parameters
    ----------
    path_or_buffer:
        A file path, an open file (text or binary), or the raw bytes.
    count_column:
        ``"auto"`` (default): a column named one of :data:`COUNT_COLUMN_NAMES`
        (case-insensitive) whose values are all non-negative numbers holds the
        counts; ``None``: every row counts once; a name: that column holds the
        counts (an error if a count is missing, negative or not a number).
    missing:
        Cell texts (after stripping white space) that mean "missing".
    name:
        The :attr:`Dataset.source`; default: the file name.
    sep, encoding:
        The one-character field separator and the text encoding; ``None``
        (default) detects them (:mod:`effdim.csvscan`).
    limits:
        The file's size and each column's distinct values
        (:class:`effdim.read_limits.ReadLimits`); default: ``ReadLimits(max_columns=None)``,
        a header as wide as the file allows.

    Raises
    ------
    DataError
        For every rule in :mod:`effdim.data`'s docstring; the message names the
        column, the 1-based file line and the value at fault.

    Examples
    --------
    >>> load_csv(b"a,b\\n1,x\\n1,y\\n")
    Traceback (most recent call last):
    ...
    effdim.data.DataError: data: column 'a' has a single value 1: it carries no information; drop it
    """
    limits = limits or ReadLimits(max_columns=None)
    return _read(path_or_buffer, "csv", name, sep, encoding, count_column, missing, limits, None, (), ()).dataset
