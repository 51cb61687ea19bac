r"""Reading a CSV file into cell texts: bytes, text, structure, cells.

:func:`effdim.data.load_csv` builds a :class:`effdim.data.Dataset` from
what this module returns: the header, one array of cell texts per column,
and the 1-based file line of every data row (blank lines counted, so
``line 7`` is what a text editor shows). The rules it enforces, each refused
with a :class:`effdim.data.DataError` that names the file, the line and the
fault: a file over ``max_bytes``, text that is not UTF-8 (UTF-16 and binary
files are named as such), an empty file, a quoted field never closed, and a
ragged row (a different number of fields than the header).

Examples
--------
>>> header, values, lines, source = read_cells(b"a,b\n1,x\n\n2,y\n", name="demo.csv")
>>> header, [list(v) for v in values], lines.tolist(), source
(['a', 'b'], [['1', '2'], ['x', 'y']], [2, 4], 'demo.csv')
>>> read_cells(b"a,b\n1,x,9\n")
Traceback (most recent call last):
...
effdim.data.DataError: data: line 2 has 3 fields, expected 2 like the header
"""

from __future__ import annotations

import csv
import io
import os
from typing import Any

import numpy as np
import pandas as pd

from .data import DataError

__all__ = ["read_cells"]


def read_cells(
    path_or_buffer: Any, *, sep: str = ",", max_bytes: int = 50_000_000, name: str | None = None
) -> tuple[list[str], list[np.ndarray], np.ndarray, str]:
    """``(header, columns, lines, source)`` of a CSV file, path, open file or bytes.

    ``columns[j]`` holds the cell texts of column ``j`` (unstripped), ``lines[i]``
    the file line of data row ``i``; ``source`` is ``name`` or the file name.
    """
    if len(sep) != 1 or sep in "\r\n\"":
        raise DataError(f"separator must be one character other than a quote or newline, got {sep!r}")
    raw, source = _read_bytes(path_or_buffer, max_bytes)
    source = name or source
    header, values, lines = _parse(_decode(raw, source), sep, source)
    return header, values, lines, source


def _read_bytes(obj: Any, max_bytes: int) -> tuple[bytes, str]:
    """The raw bytes of a path, open file or bytes object, refusing more than ``max_bytes``."""
    too_big = lambda size, src: DataError(  # noqa: E731
        f"{src}: file is larger than max_bytes={max_bytes:,} bytes"
        + (f" ({size:,} bytes)" if size is not None else "")
        + "; raise max_bytes if you mean it"
    )
    if isinstance(obj, (bytes, bytearray, memoryview)):
        raw = bytes(obj)
        if len(raw) > max_bytes:
            raise too_big(len(raw), "data")
        return raw, "data"
    if isinstance(obj, (str, os.PathLike)):
        path = os.fspath(obj)
        source = os.path.basename(path) or path
        try:
            size = os.path.getsize(path)
        except OSError as exc:
            raise DataError(f"{path}: cannot read the file ({exc.strerror or exc})") from None
        if size > max_bytes:
            raise too_big(size, source)
        try:
            with open(path, "rb") as fh:
                return fh.read(), source
        except OSError as exc:
            raise DataError(f"{path}: cannot read the file ({exc.strerror or exc})") from None
    if hasattr(obj, "read"):
        source = os.path.basename(str(getattr(obj, "name", ""))) or "data"
        chunk = obj.read(max_bytes + 1)
        if isinstance(chunk, str):
            chunk = chunk.encode("utf-8")
        if len(chunk) > max_bytes:
            raise too_big(None, source)
        return bytes(chunk), source
    raise DataError(f"cannot read data from a {type(obj).__name__}; pass a path, an open file or bytes")


def _decode(raw: bytes, source: str) -> str:
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise DataError(f"{source}: the file is UTF-16 text; save it as UTF-8")
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    nul = raw.find(b"\x00")
    if nul >= 0:
        line = raw.count(b"\n", 0, nul) + 1
        raise DataError(f"{source}: not a text file (NUL byte at offset {nul}, line {line})")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        start = exc.start
        line = raw.count(b"\n", 0, start) + 1
        col = start - (raw.rfind(b"\n", 0, start) + 1) + 1
        raise DataError(
            f"{source}: not UTF-8 text: byte 0x{raw[start]:02x} at offset {start} (line {line}, "
            f"column {col}); save the file as UTF-8"
        ) from None
    if not text.strip():
        raise DataError(f"{source}: the file is empty")
    return text


def _parse(text: str, sep: str, source: str) -> tuple[list[str], list[np.ndarray], np.ndarray]:
    """Header, one array of cell texts per column, and the file line of each data row.

    The structure is checked first, vectorized with numpy, because pandas pads
    short rows silently: a byte is inside a quoted field when an odd number of
    quote characters precede it (an escaped quote ``""`` adds two), so the
    record breaks are the newlines outside quotes and the fields of a record
    are its separators outside quotes plus one. Then pandas' C parser reads
    the cells. Files whose quotes do not sit at field boundaries (a literal
    ``"`` inside an unquoted field) go through :mod:`csv` instead.
    """
    if "\r" in text:  # one line-break convention for the line scan and both parsers
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    arr = np.frombuffer(text.encode("utf-8"), dtype=np.uint8)
    code = ord(sep)
    count_type = np.int32 if arr.size < 2**31 - 1 else np.int64
    quote = arr == 34
    has_quotes = bool(quote.any())
    if has_quotes:
        at = np.flatnonzero(quote)
        before = np.where(at > 0, arr[np.maximum(at - 1, 0)], 10)
        after = np.where(at < arr.size - 1, arr[np.minimum(at + 1, arr.size - 1)], 10)
        edge = lambda b: (b == code) | (b == 10) | (b == 34)  # noqa: E731
        if not np.all(edge(before) | edge(after)):
            return _parse_with_csv(text, sep, source)
        if at.size % 2:
            n_before = np.arange(at.size)  # quotes before each quote
            opening = at[n_before % 2 == 0][-1]
            line = int(np.count_nonzero(arr[:opening] == 10)) + 1
            raise DataError(f"{source}: line {line}: a quoted field is never closed (unbalanced '\"')")
        # for a byte that is not a quote, an odd number of quotes up to it means "inside quotes"
        outside = (np.cumsum(quote, dtype=count_type) & 1) == 0
        newline = (arr == 10) & outside
        is_sep = (arr == code) & outside
    else:
        newline = arr == 10
        is_sep = arr == code
    # last byte of every record: its newline, or the final byte of an unterminated last line
    ends = np.flatnonzero(newline)
    if arr.size and not newline[-1]:
        ends = np.append(ends, arr.size - 1)
    # white space that makes a line blank (pandas skips such lines); a separator is never blank
    blank = np.zeros(arr.size, dtype=bool)
    for byte in (32, 9, 10):
        if byte != code:
            blank |= arr == byte

    def per_record(flags: np.ndarray) -> np.ndarray:
        return np.diff(np.cumsum(flags, dtype=count_type)[ends], prepend=0)

    fields = per_record(is_sep) + 1
    ink = per_record(~blank)
    records = np.flatnonzero(ink > 0)
    if records.size == 0:
        raise DataError(f"{source}: the file is empty")
    if has_quotes:  # a record may span lines: its line is where it starts
        starts = np.concatenate(([0], ends[:-1] + 1))[records]
        all_newlines = np.cumsum(arr == 10, dtype=count_type)
        lines = 1 + np.where(starts > 0, all_newlines[np.maximum(starts - 1, 0)], 0).astype(np.int64)
    else:
        lines = records + 1
    found = fields[records]
    expected = int(found[0])
    bad = np.flatnonzero(found != expected)
    if bad.size:
        _ragged(source, int(lines[bad[0]]), expected, int(found[bad[0]]), bad.size)
    frame = pd.read_csv(
        io.StringIO(text),
        sep=sep,
        header=None,
        dtype=object,
        na_filter=False,
        quoting=csv.QUOTE_MINIMAL if has_quotes else csv.QUOTE_NONE,
        skip_blank_lines=True,
        engine="c",
    )
    if frame.shape != (records.size, expected):  # pragma: no cover - the parsers disagree
        return _parse_with_csv(text, sep, source)
    header = [str(v) for v in frame.iloc[0].tolist()]
    values = [frame.iloc[1:, j].to_numpy() for j in range(expected)]
    return header, values, lines[1:]


def _parse_with_csv(text: str, sep: str, source: str) -> tuple[list[str], list[np.ndarray], np.ndarray]:
    """:func:`_parse` with Python's :mod:`csv` (slow; for irregular quoting)."""
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=sep)
    rows: list[list[str]] = []
    starts: list[int] = []
    previous_end = 0
    try:
        for row in reader:
            start = previous_end + 1
            previous_end = reader.line_num
            if not row or (len(row) == 1 and not row[0].strip()):
                continue
            if rows and len(row) != len(rows[0]):
                _ragged(source, start, len(rows[0]), len(row), 1)
            rows.append(row)
            starts.append(start)
    except csv.Error as exc:
        raise DataError(f"{source}: line {reader.line_num}: {exc}") from None
    if not rows:
        raise DataError(f"{source}: the file is empty")
    width = len(rows[0])
    body = rows[1:]
    values = [np.array([r[j] for r in body], dtype=object) for j in range(width)]
    return rows[0], values, np.array(starts[1:], dtype=np.int64)


def _ragged(source: str, line: int, expected: int, found: int, count: int) -> None:
    more = f" ({count} such lines)" if count > 1 else ""
    raise DataError(
        f"{source}: line {line} has {found} field{'s' if found != 1 else ''}, expected {expected} like the header{more}"
    )
