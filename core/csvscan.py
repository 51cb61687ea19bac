r"""Reading a CSV file into factorized columns: bytes, encoding, separator, structure, codes.

:func:`effdim.reading.read_data` (and :func:`effdim.reading.load_csv`) build a
:class:`effdim.data.Dataset` from what this module returns: the header, one
:class:`Column` per column (an integer code per data row and the distinct
cell texts, stripped of surrounding white space), and the 1-based file line
of every data row (blank lines counted, so ``line 7`` is what a text editor
shows).

Memory: the cells are never all held as text. The structure is scanned in
blocks of a few MB, and the cells are parsed by pandas in chunks of about a
million cells, each chunk's texts turned into the column's codes at once
(the pattern table is all the model fitting needs; :mod:`effdim.data`).
Peak memory is a few times the file's size (``benchmarks/engine/bench_data_memory.py``,
``docs/robustness.md``).

Detection (both can be given instead):

* the encoding: a UTF-16 or UTF-8 byte-order mark names it; otherwise text
  that decodes as UTF-8 is UTF-8, and any other text is read as Latin-1
  (every byte is a Latin-1 character). A NUL byte outside UTF-16 marks a
  binary file.
* the separator: whichever of comma, semicolon and tab the header line holds
  most often outside quotes (a comma when it holds none).

The rules it enforces, each refused with a :class:`effdim.data.DataError`
that names the file, the line and the fault: a file over ``max_bytes``, more
than ``max_columns`` columns (checked on the header, before any cell is
parsed), a column with more than ``max_states`` distinct values (checked
while parsing, so an identifier column stops the read early), binary
content, an empty file, a quoted field never closed, and a ragged row (a
different number of fields than the header).

Examples
--------
>>> cells = read_cells(b"a;b\n1;x\n\n2;y\n", name="demo.csv")
>>> cells.header, cells.separator, cells.encoding, cells.lines.tolist()
(['a', 'b'], ';', 'utf-8', [2, 4])
>>> [(c.codes.tolist(), c.uniques) for c in cells.columns]
[([0, 1], ['1', '2']), ([0, 1], ['x', 'y'])]
>>> read_cells(b"a,b\n1,x,9\n")
Traceback (most recent call last):
...
effdim.data.DataError: data: line 2 has 3 fields, expected 2 like the header
"""

from __future__ import annotations

import codecs
import csv
import io
import os
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .data import Column, DataError, too_many_values
from .errors import os_error_words, shown
from .text_formats import ENCODINGS, SEPARATORS, encoding_name

__all__ = ["CsvCells", "read_bytes", "read_cells"]

#: Bytes of the file scanned at once for its structure.
_BLOCK = 1 << 22
#: Cells parsed by pandas at once.
_CHUNK_CELLS = 250_000


@dataclass
class CsvCells:
    """What :func:`read_cells` found: header, columns (``None`` where dropped), file lines, how it was read."""

    header: list[str]
    columns: list[Column | None]
    lines: np.ndarray
    source: str
    encoding: str
    separator: str
    dropped: dict[str, int] = field(default_factory=dict)


def read_cells(
    path_or_buffer: Any,
    *,
    sep: str | None = None,
    encoding: str | None = None,
    max_bytes: int = 50_000_000,
    max_columns: int | None = None,
    max_states: int | None = None,
    unlimited: Collection[str] = (),
    ignore: Collection[str] = (),
    drop_wide: bool = False,
    name: str | None = None,
) -> CsvCells:
    """The columns of a CSV file, path, open file or bytes, as codes.

    ``sep``/``encoding``: ``None`` detects them (module docstring).
    ``max_states``: a column (except those named in ``unlimited``, in any case) with more
    distinct texts, not counting the ones in ``ignore`` (the missing tokens),
    is refused, or with ``drop_wide`` left out and listed in
    :attr:`CsvCells.dropped` (name -> distinct values seen).
    """
    raw, source = read_bytes(path_or_buffer, max_bytes)
    source = name or source
    encoding = _encoding(raw, encoding, source)
    if encoding == "utf-16":  # the scan works on bytes in which , ; \t " \n are single bytes
        raw = raw.decode("utf-16").encode("utf-8")
        pandas_encoding = "utf-8"
    else:
        pandas_encoding = encoding
    if b"\r" in raw:  # one line-break convention for the scan and the parsers
        raw = raw.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    if sep is None:
        sep = _detect_separator(raw)
    elif len(sep) != 1 or sep in '\r\n"':
        raise DataError(f"the separator must be one character other than a quote or a line break, got {sep!r}")
    sep_bytes = sep.encode("utf-8" if pandas_encoding.startswith("utf-8") else pandas_encoding, "replace")
    if len(sep_bytes) != 1:
        raise DataError(f"the separator {sep!r} is not a single byte in {ENCODINGS[encoding]}")
    limits = _Limits(max_columns, max_states, {u.lower() for u in unlimited}, set(ignore), drop_wide)
    scan = _scan(raw, sep_bytes[0], source, limits)
    if scan is None:  # quotes inside unquoted fields: Python's csv module reads those
        header, columns, lines = _parse_with_csv(raw.decode(pandas_encoding), sep, source, limits)
    else:
        _, lines, has_quotes = scan
        header, columns = _parse(raw, sep, pandas_encoding, has_quotes, len(lines) - 1, source, limits)
        lines = lines[1:]
    return CsvCells(header, columns, lines, source, encoding, sep, limits.dropped)


# ------------------------------------------------------------------ bytes and text
def read_bytes(obj: Any, max_bytes: int) -> tuple[bytes, str]:
    """The raw bytes of a path, open file or bytes object, refusing more than ``max_bytes``; and the
    file's name as messages show it (:func:`effdim.errors.shown`)."""

    def too_big(size, src):
        return DataError(
            f"{src}: the file is larger than the limit of {max_bytes:,} bytes"
            + (f" ({size:,} bytes)" if size is not None else "")
        )

    if isinstance(obj, (bytes, bytearray, memoryview)):
        raw = bytes(obj)
        if len(raw) > max_bytes:
            raise too_big(len(raw), "data")
        return raw, "data"
    if isinstance(obj, (str, os.PathLike)):
        path = os.fspath(obj)
        source = shown(os.path.basename(path) or path)
        try:
            size = os.path.getsize(path)
        except OSError as exc:
            raise DataError(f"{shown(path)}: cannot read the file ({os_error_words(exc)})") from None
        if size > max_bytes:
            raise too_big(size, source)
        try:
            with open(path, "rb") as fh:
                return fh.read(), source
        except OSError as exc:
            raise DataError(f"{shown(path)}: cannot read the file ({os_error_words(exc)})") from None
    if hasattr(obj, "read"):
        source = shown(os.path.basename(str(getattr(obj, "name", ""))) or "data")
        chunk = obj.read(max_bytes + 1)
        if isinstance(chunk, str):
            chunk = chunk.encode("utf-8")
        if len(chunk) > max_bytes:
            raise too_big(None, source)
        return bytes(chunk), source
    raise DataError(f"cannot read data from a {type(obj).__name__}; pass a path, an open file or bytes")


def _encoding(raw: bytes, encoding: str | None, source: str) -> str:
    """The encoding given (checked against the bytes) or detected (module docstring)."""
    if encoding is not None:
        wanted = encoding_name(encoding)
        if wanted not in ENCODINGS:
            raise DataError(f"unknown encoding {encoding!r}; use one of {', '.join(ENCODINGS)}")
    else:
        wanted = None
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")) or _looks_utf16(raw):
        if wanted not in (None, "utf-16"):
            raise DataError(f"{source}: the file is UTF-16 text, not {ENCODINGS[wanted]}; read it as utf-16")
        try:
            raw.decode("utf-16")
        except UnicodeDecodeError as exc:
            raise DataError(f"{source}: not UTF-16 text (bad bytes at offset {exc.start})") from None
        return "utf-16"
    nul = raw.find(b"\x00")
    if nul >= 0:
        line = raw.count(b"\n", 0, nul) + 1
        raise DataError(f"{source}: not a text file (NUL byte at offset {nul}, line {line})")
    if wanted in ("latin-1", "cp1252"):
        if wanted == "cp1252":
            try:
                raw.decode("cp1252")
            except UnicodeDecodeError as exc:
                raise DataError(
                    f"{source}: not Windows-1252 text: byte 0x{raw[exc.start]:02x} at offset {exc.start}"
                ) from None
        return wanted
    if wanted == "utf-16":
        raise DataError(f"{source}: the file is not UTF-16 text (no byte-order mark, no NUL bytes)")
    bad = _first_non_utf8(raw)
    if bad is None:
        return "utf-8-sig" if raw.startswith(codecs.BOM_UTF8) else "utf-8"
    if wanted is None:
        return "latin-1"
    line = raw.count(b"\n", 0, bad) + 1
    col = bad - (raw.rfind(b"\n", 0, bad) + 1) + 1
    raise DataError(
        f"{source}: not UTF-8 text: byte 0x{raw[bad]:02x} at offset {bad} (line {line}, column {col}); "
        "read it as latin-1 or save the file as UTF-8"
    )


def _looks_utf16(raw: bytes) -> bool:
    """UTF-16 without a byte-order mark: most of the first bytes at even (or odd) offsets are NUL."""
    head = raw[:4096]
    if len(head) < 4 or b"\x00" not in head:
        return False
    return max(head[0::2].count(0), head[1::2].count(0)) >= 0.9 * (len(head) // 2)


def _first_non_utf8(raw: bytes) -> int | None:
    """The offset of the first byte that is not UTF-8, or ``None``; decodes in blocks (no copy of the file)."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    view = memoryview(raw)
    for start in range(0, len(raw), _BLOCK):
        held = len(decoder.getstate()[0])  # bytes of a character begun in the previous block
        try:
            decoder.decode(view[start : start + _BLOCK], final=start + _BLOCK >= len(raw))
        except UnicodeDecodeError as exc:
            return start - held + exc.start
    return None


def _detect_separator(raw: bytes) -> str:
    """The separator the header line holds most often outside quotes; a comma when it holds none."""
    first = raw.lstrip(b" \t\n").split(b"\n", 1)[0]
    outside = b"".join(first.split(b'"')[0::2])
    counts = {sep: outside.count(sep.encode()) for sep in SEPARATORS}
    best = max(counts, key=counts.get)
    return best if counts[best] > 0 else ","


# ------------------------------------------------------------------ structure
@dataclass
class _Limits:
    max_columns: int | None
    max_states: int | None
    unlimited: set[str]
    ignore: set[str]
    drop_wide: bool
    dropped: dict[str, int] = field(default_factory=dict)

    def check_header(self, n_fields: int, source: str) -> None:
        if self.max_columns is not None and n_fields > self.max_columns:
            raise DataError(
                f"{source}: the header has {n_fields:,} columns, more than the limit of {self.max_columns:,}"
            )


def _scan(raw: bytes, code: int, source: str, limits: _Limits) -> tuple[np.ndarray, np.ndarray, bool] | None:
    """Fields per record and the file line where each record starts; ``None`` for irregular quoting.

    Vectorized with numpy, block by block: a byte is inside a quoted field
    when an odd number of quote characters precede it in its record (an
    escaped quote ``""`` adds two), so the record breaks are the newlines
    outside quotes and the fields of a record are its separators outside
    quotes plus one. A block ends at its last record break, so each block
    starts outside quotes. Blank records (white space only) are skipped, as
    pandas skips them. The header's width is checked against ``max_columns``
    on the first block. pandas pads short rows silently, hence this check.
    """
    size = len(raw)
    fields_parts, line_parts = [], []
    has_quotes = False
    pos, newlines_before, block = 0, 0, _BLOCK
    header_checked = False
    blank_bytes = [b for b in (32, 9, 10) if b != code]
    while pos < size:
        end = min(pos + block, size)
        arr = np.frombuffer(raw, dtype=np.uint8, count=end - pos, offset=pos)
        quote = arr == 34
        if quote.any():
            has_quotes = True
            at = np.flatnonzero(quote)
            before = np.where(at > 0, arr[np.maximum(at - 1, 0)], 10)
            nxt = raw[end] if end < size else 10
            after = np.where(at < arr.size - 1, arr[np.minimum(at + 1, arr.size - 1)], nxt)

            def edge(b):
                return (b == code) | (b == 10) | (b == 34)

            opening = np.arange(at.size) % 2 == 0  # the block starts outside quotes
            if not np.all(np.where(opening, edge(before), edge(after))):
                return None  # a quote opens after, or closes before, something other than a field's edge
            outside = (np.cumsum(quote, dtype=np.int32) & 1) == 0
            newline = (arr == 10) & outside
        else:
            outside = None
            newline = arr == 10
        ends = np.flatnonzero(newline)
        if end < size:
            if ends.size == 0:  # one record longer than the block: take a bigger block
                block *= 2
                continue
            cut = int(ends[-1]) + 1
        else:
            cut = arr.size
            if outside is not None and at.size % 2:
                last_opening = at[opening][-1]
                line = newlines_before + int(np.count_nonzero(arr[:last_opening] == 10)) + 1
                raise DataError(f"{source}: line {line}: a quoted field is never closed (unbalanced '\"')")
            if ends.size == 0 or ends[-1] != arr.size - 1:
                ends = np.append(ends, arr.size - 1)
        arr, newline = arr[:cut], newline[:cut]
        ends = ends[ends < cut]
        is_sep = arr == code
        if outside is not None:
            is_sep &= outside[:cut]
        blank = np.zeros(arr.size, dtype=bool)
        for byte in blank_bytes:
            blank |= arr == byte

        fields = _per_record(is_sep, ends) + 1
        records = np.flatnonzero(_per_record(~blank, ends) > 0)
        starts = np.concatenate(([0], ends[:-1] + 1))[records]
        all_newlines = np.cumsum(arr == 10, dtype=np.int32)
        lines = 1 + newlines_before + np.where(starts > 0, all_newlines[np.maximum(starts - 1, 0)], 0)
        fields_parts.append(fields[records])
        line_parts.append(lines.astype(np.int64))
        if not header_checked and records.size:
            limits.check_header(int(fields[records[0]]), source)
            header_checked = True
        newlines_before += int(all_newlines[-1]) if arr.size else 0
        pos += cut
        block = _BLOCK
    fields = np.concatenate(fields_parts) if fields_parts else np.zeros(0, dtype=np.int32)
    lines = np.concatenate(line_parts) if line_parts else np.zeros(0, dtype=np.int64)
    if fields.size == 0:
        raise DataError(f"{source}: the file is empty")
    expected = int(fields[0])
    bad = np.flatnonzero(fields != expected)
    if bad.size:
        _ragged(source, int(lines[bad[0]]), expected, int(fields[bad[0]]), bad.size)
    return fields, lines, has_quotes


def _per_record(flags: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """How many of ``flags`` each record holds, the records ending at the offsets ``ends``."""
    return np.diff(np.cumsum(flags, dtype=np.int32)[ends], prepend=0)


# ------------------------------------------------------------------ cells into codes
class _Coder:
    """Turns the cell texts of one column, chunk by chunk, into codes of its distinct stripped texts."""

    def __init__(self, name: str, limit: int | None):
        self.name = name
        self.limit = limit
        self.table: dict[str, int] = {}
        self.chunks: list[np.ndarray] = []
        self.counted = 0  # distinct texts that count against the limit

    def add(self, texts: np.ndarray, limits: _Limits, source: str) -> bool:
        """Code one chunk; ``False`` once the column is over the limit and dropped."""
        raw_codes, uniques = pd.factorize(texts)
        lookup = np.empty(len(uniques) + 1, dtype=np.int32)
        lookup[-1] = -1
        for i, text in enumerate(uniques.tolist() if hasattr(uniques, "tolist") else uniques):
            text = text.strip() if isinstance(text, str) else ""
            code = self.table.get(text)
            if code is None:
                code = self.table[text] = len(self.table)
                self.counted += text not in limits.ignore
            lookup[i] = code
        if self.limit is not None and self.counted > self.limit:
            if not limits.drop_wide:
                raise too_many_values(source, self.name, self.limit, [t for t in self.table if t not in limits.ignore])
            limits.dropped[self.name] = self.counted
            self.chunks = []
            return False
        self.chunks.append(lookup[raw_codes])
        return True

    def column(self) -> Column:
        codes = np.concatenate(self.chunks) if self.chunks else np.zeros(0, dtype=np.int32)
        return Column(codes, list(self.table))


def _coders(header: list[str], limits: _Limits) -> list[_Coder]:
    return [_Coder(h, None if h.strip().lower() in limits.unlimited else limits.max_states) for h in header]


def _parse(
    raw: bytes, sep: str, encoding: str, has_quotes: bool, n_rows: int, source: str, limits: _Limits
) -> tuple[list[str], list[Column | None]]:
    """The header and the coded columns, parsed by pandas' C parser in chunks of about a million cells."""
    rows = 0
    try:
        reader = pd.read_csv(
            io.BytesIO(raw),
            sep=sep,
            header=None,
            dtype=object,
            na_filter=False,
            quoting=csv.QUOTE_MINIMAL if has_quotes else csv.QUOTE_NONE,
            skip_blank_lines=True,
            engine="c",
            encoding=encoding,
            iterator=True,
        )
    except pd.errors.EmptyDataError:  # a byte-order mark and nothing else: the scan saw a record, pandas none
        raise DataError(f"{source}: the file is empty") from None
    with reader:
        header = [str(v) for v in reader.get_chunk(1).iloc[0].tolist()]
        coders: list[_Coder | None] = list(_coders(header, limits))
        size = max(1000, _CHUNK_CELLS // max(len(header), 1))
        while True:
            try:
                chunk = reader.get_chunk(size)
            except StopIteration:
                break
            rows += len(chunk)
            for j, coder in enumerate(coders):
                if coder is not None and not coder.add(chunk.iloc[:, j].to_numpy(), limits, source):
                    coders[j] = None
    if rows != n_rows:  # pragma: no cover - the parsers disagree about the records
        raise DataError(f"{source}: the file's records could not be read consistently ({rows} rows, expected {n_rows})")
    return header, [None if c is None else c.column() for c in coders]


def _parse_with_csv(
    text: str, sep: str, source: str, limits: _Limits
) -> tuple[list[str], list[Column | None], np.ndarray]:
    """Header, coded columns and the line of each data row with Python's :mod:`csv` (for irregular quoting)."""
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=sep)
    header: list[str] | None = None
    cells: list[list[str]] = []
    starts: list[int] = []
    previous_end = 0
    try:
        for row in reader:
            start = previous_end + 1
            previous_end = reader.line_num
            if not row or (len(row) == 1 and not row[0].strip()):
                continue
            if header is None:
                limits.check_header(len(row), source)
                header = row
                cells = [[] for _ in row]
                continue
            if len(row) != len(header):
                _ragged(source, start, len(header), len(row), 1)
            for j, value in enumerate(row):
                cells[j].append(value)
            starts.append(start)
    except csv.Error as exc:
        raise DataError(f"{source}: line {reader.line_num}: {exc}") from None
    if header is None:
        raise DataError(f"{source}: the file is empty")
    coders: list[_Coder | None] = list(_coders(header, limits))
    for j, coder in enumerate(coders):
        if not coder.add(np.array(cells[j], dtype=object), limits, source):
            coders[j] = None
    return header, [None if c is None else c.column() for c in coders], np.array(starts, dtype=np.int64)


def _ragged(source: str, line: int, expected: int, found: int, count: int) -> None:
    more = f" ({count} such lines)" if count > 1 else ""
    raise DataError(
        f"{source}: line {line} has {found} field{'s' if found != 1 else ''}, expected {expected} like the header{more}"
    )
