"""Reading SPSS, Stata, Excel and Parquet files within limits on what they unpack to.

A compressed file of a few kilobytes can unpack to gigabytes: a 34 KB ``.xlsx`` whose rows each hold one
cell at the last column (XFD, 16,384), a 2.4 MB Parquet file of 300 million rows, a ``.zsav`` of 20
million rows, one cell of 200 million characters. The file's size says nothing of these, so each format
is checked from its own metadata, or while it is streamed, before any frame of its cells is built
(:class:`effdim.read_limits.ReadLimits`, derived from the file-size limit of :func:`effdim.reading.read_data`):

* **cells**: rows x columns at most half the file-size limit, as many as a CSV file of that size can
  hold (one character and a separator each): 25,000,000 for the command line's 50 MB;
* **unpacked size**: the file's parts as stored uncompressed (a Parquet file's row groups, an Excel
  file's XML parts, an SPSS or Stata file's records: rows x record width) at most
  :data:`effdim.read_limits.UNPACK_FACTOR` times the file-size limit; the part of an Excel file its reader holds at once
  (the shared strings) at most the file-size limit itself;
* **columns**: the ``max_columns`` of the reader, on the header or the metadata (an Excel row reaching
  past it is refused at that row);
* **a category label**: :data:`effdim.limits.MAX_LABEL_CHARS` characters, checked for every format
  where the column's values are encoded (:mod:`effdim.data.building`), and while an Excel sheet is read.

Where each format's numbers come from: a Parquet file's footer (``pyarrow``'s metadata: rows, and each
row group's uncompressed size); an SPSS or Stata file's header (``pyreadstat`` with
``metadataonly=True``: rows, columns, each column's storage width); an Excel file's zip directory (each
part's uncompressed size, which the zip reader holds the part to) and then its sheet, streamed row by
row (``openpyxl``'s read-only mode). Each refusal is a :class:`effdim.data.DataError` naming the file,
the count and the limit.
"""

from __future__ import annotations

import io
import os
import tempfile
import zipfile
from typing import Any

import numpy as np
import pandas as pd

from .data import DataError, label_too_long
from .limits import MAX_LABEL_CHARS
from .read_limits import ReadLimits

__all__ = ["read_binary"]

#: The key of a read frame's ``attrs`` holding its variable labels (column -> what it asks), where the file has them.
VARIABLE_LABELS = "variable_labels"


def read_binary(raw: bytes, kind: str, name: str, limits: ReadLimits) -> tuple[pd.DataFrame, dict[str, dict]]:
    """An SPSS (``"sav"``), Stata (``"dta"``), Excel (``"xlsx"``) or Parquet (``"parquet"``) file as a frame
    and its value labels (column -> {code: label}), within ``limits``; an SPSS or Stata file's variable labels
    in the frame's ``attrs`` (:data:`VARIABLE_LABELS`). The libraries' own errors pass through
    (:func:`effdim.reading.read_data` words them)."""
    if kind == "parquet":
        return _read_parquet(raw, name, limits), {}
    if kind == "xlsx":
        return _read_xlsx(raw, name, limits), {}
    with tempfile.TemporaryDirectory() as folder:  # pyreadstat reads from a path only
        path = os.path.join(folder, f"data.{kind}")
        with open(path, "wb") as fh:
            fh.write(raw)
        if kind == "sav":
            return _read_sav(path, name, limits)
        return _read_dta(path), {}


# ------------------------------------------------------------------ SPSS and Stata
def _read_sav(path: str, name: str, limits: ReadLimits) -> tuple[pd.DataFrame, dict[str, dict]]:
    """An SPSS file (``.zsav`` compresses its rows): rows, columns and records (rows x the columns' storage
    widths) checked from its header first; one that does not state its rows is read one row past what the
    limit allows, then refused."""
    import pyreadstat

    _, meta = pyreadstat.read_sav(path, metadataonly=True)
    columns = max(1, int(meta.number_columns or 0))
    limits.check_columns(name, columns)
    rows = meta.number_rows if meta.number_rows is not None and meta.number_rows >= 0 else None
    if rows is not None:
        limits.check_cells(name, rows, columns)
        width = sum(int(w or 8) for w in (meta.variable_storage_width or {}).values())
        limits.check_unpacked(name, rows * width)
    limit = 0 if rows is not None else limits.cells // columns + 1
    frame, meta = pyreadstat.read_sav(path, apply_value_formats=False, user_missing=False, row_limit=limit)
    limits.check_cells(name, len(frame), columns)
    labels = {column: dict(meta.variable_value_labels.get(column, {})) for column in frame.columns}
    frame.attrs[VARIABLE_LABELS] = {c: t for c, t in (meta.column_names_to_labels or {}).items() if t}
    return frame, {c: v for c, v in labels.items() if v}


def _read_dta(path: str) -> pd.DataFrame:
    """A Stata file (stored uncompressed: the file-size limit bounds what it holds); labelled columns come
    back as categoricals whose categories are the labels, ordered by the values they label (pandas'
    ``convert_categoricals``)."""
    with pd.read_stata(path, convert_categoricals=True, order_categoricals=True, iterator=True) as reader:
        described = reader.variable_labels()
        frame = reader.read()
    frame.attrs[VARIABLE_LABELS] = {c: t for c, t in described.items() if t}
    return frame


# ------------------------------------------------------------------ Parquet
def _read_parquet(raw: bytes, name: str, limits: ReadLimits) -> pd.DataFrame:
    """A Parquet file's columns as categoricals, one column read at a time, after its footer's checks."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    source = pq.ParquetFile(io.BytesIO(raw))
    meta = source.metadata
    index = {c for c in (source.schema_arrow.pandas_metadata or {}).get("index_columns", []) if isinstance(c, str)}
    fields = [f for f in source.schema_arrow if f.name not in index]
    limits.check_columns(name, len(fields))
    limits.check_cells(name, meta.num_rows, len(fields))
    limits.check_unpacked(name, sum(meta.row_group(g).total_byte_size for g in range(meta.num_row_groups)))
    columns = {}
    for field in fields:
        if pa.types.is_nested(field.type):
            raise DataError(f"{name}: column {field.name!r} holds lists or records, not one category per cell")
        columns[field.name] = _categorical(source.read(columns=[field.name], use_pandas_metadata=False).column(0))
    return pd.DataFrame(columns, index=pd.RangeIndex(meta.num_rows))


def _categorical(values) -> pd.Categorical:
    """An Arrow column as a pandas categorical of its distinct values (NaN and null missing): one small
    code per cell, never one Python object per cell."""
    import pyarrow as pa
    import pyarrow.compute as pc

    ordered = None
    if pa.types.is_dictionary(values.type):
        if values.type.ordered and values.num_chunks:
            ordered = values.chunk(0).dictionary.to_pylist()
        values = values.cast(values.type.value_type)
    if pa.types.is_floating(values.type):
        values = pc.if_else(pc.is_nan(values), pa.scalar(None, values.type), values)
    distinct = pc.drop_null(pc.unique(values))
    codes = pc.fill_null(pc.index_in(values, value_set=distinct), -1).to_numpy()
    categories = distinct.to_pylist()
    if ordered is not None:  # the file's own order of an ordered categorical
        rank = {c: i for i, c in enumerate(ordered)}
        order = sorted(range(len(categories)), key=lambda k: rank.get(categories[k], len(rank)))
        new_code = np.empty(len(order) + 1, dtype=np.int64)
        new_code[np.array(order, dtype=np.int64)] = np.arange(len(order))
        new_code[-1] = -1
        codes, categories = new_code[codes], [categories[k] for k in order]
    return pd.Categorical.from_codes(codes, categories=pd.Index(categories, dtype=object), ordered=ordered is not None)


# ------------------------------------------------------------------ Excel
def _read_xlsx(raw: bytes, name: str, limits: ReadLimits) -> pd.DataFrame:
    """An Excel file's first sheet, its first row the header: each part's unpacked size checked from the zip
    directory, then the rows streamed (read-only mode), each cell checked as it comes."""
    import openpyxl

    with zipfile.ZipFile(io.BytesIO(raw)) as archive:
        parts = archive.infolist()
    limits.check_unpacked(name, sum(p.file_size for p in parts))
    shared = sum(p.file_size for p in parts if p.filename.lower().endswith("sharedstrings.xml"))
    limits.check_unpacked(name, shared, "its shared texts, which are read at once, unpack", limit=limits.max_bytes)
    book = openpyxl.load_workbook(io.BytesIO(raw), read_only=True, data_only=True, keep_links=False)
    try:
        sheet = book.worksheets[0]
        if sheet.max_column is not None and sheet.max_row is not None:  # the sheet's stated size, if any
            limits.check_columns(name, sheet.max_column)
            limits.check_cells(name, sheet.max_row, sheet.max_column)
        sheet.reset_dimensions()  # a stated size may be wrong: every row is read
        return _SheetColumns(name, limits).read(sheet.iter_rows(values_only=True))
    finally:
        book.close()


class _SheetColumns:
    """A sheet's rows turned into coded columns as they stream: one code per cell, never a frame of objects."""

    def __init__(self, name: str, limits: ReadLimits):
        self.name = name
        self.limits = limits
        self.header: list[Any] = []
        self.codes: list[list[int]] = []
        self.values: list[dict[Any, int]] = []
        self.rows = 0  # data rows so far, trailing empty ones included
        self.last_filled = 0  # data rows up to the last one with a value

    def read(self, rows) -> pd.DataFrame:
        for r, row in enumerate(rows, start=1):
            if self.limits.max_columns is not None and len(row) > self.limits.max_columns:
                raise DataError(
                    f"{self.name}: row {r} reaches column {len(row):,}, more than the limit of "
                    f"{self.limits.max_columns:,} columns"
                )
            if r == 1:
                self.header = list(row)
                self._widen(len(row))
                continue
            self._add(r, row)
        width = len(self.codes)
        names = [self._name(j) for j in range(width)]
        frame = {}
        for j in range(width):
            uniques = list(self.values[j])
            codes = np.array(self.codes[j][: self.last_filled], dtype=np.int64)
            frame[names[j]] = pd.Categorical.from_codes(codes, categories=pd.Index(uniques, dtype=object))
        return pd.DataFrame(frame) if width else pd.DataFrame(index=pd.RangeIndex(self.last_filled))

    def _add(self, r: int, row: tuple) -> None:
        if len(row) > len(self.codes):
            self._widen(len(row))
        self.rows += 1
        self.limits.check_cells(self.name, self.rows, len(self.codes))
        filled = False
        for j, value in enumerate(row):
            if value is None or (isinstance(value, str) and value == ""):
                self.codes[j].append(-1)
                continue
            if isinstance(value, str) and len(value) > MAX_LABEL_CHARS:
                raise label_too_long(self.name, self._name(j), value, f"row {r}")
            filled = True
            self.codes[j].append(self.values[j].setdefault(value, len(self.values[j])))
        for j in range(len(row), len(self.codes)):
            self.codes[j].append(-1)
        if filled:
            self.last_filled = self.rows

    def _widen(self, width: int) -> None:
        """Columns up to ``width``, the new ones missing in the rows read so far."""
        while len(self.codes) < width:
            self.codes.append([-1] * self.rows)
            self.values.append({})

    def _name(self, j: int) -> str:
        """Column ``j``'s name: its header cell, or pandas' ``Unnamed: j`` for an empty one."""
        value = self.header[j] if j < len(self.header) else None
        if value is None or (isinstance(value, str) and not value.strip()):
            return f"Unnamed: {j}"
        if isinstance(value, str) and len(value) > MAX_LABEL_CHARS:
            raise label_too_long(self.name, f"column {j + 1}", value, "its header")
        return str(value)
