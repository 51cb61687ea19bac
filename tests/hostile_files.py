"""Data files that are small on disk and huge once unpacked (docs/robustness.md, "Files that unpack to
gigabytes"): built in a fraction of a second each, for the reading tests and the CLI's fuzz test.

Each builder returns the file's bytes. The Excel files are written as their XML parts directly (the
smallest workbook openpyxl reads: a content-types part, two relationship parts, the workbook and one
sheet), so a row can hold a single cell at column XFD or a cell can hold megabytes without any of it
existing as cells in this process.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterator

_CONTENT_TYPES = (
    '<?xml version="1.0" encoding="UTF-8"?>'
    '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
    '<Default Extension="xml" ContentType="application/xml"/>'
    '<Override PartName="/xl/workbook.xml" '
    'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>'
    '<Override PartName="/xl/worksheets/sheet1.xml" '
    'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>'
    "{shared_type}</Types>"
)
_SHARED_TYPE = (
    '<Override PartName="/xl/sharedStrings.xml" '
    'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/>'
)
_ROOT_RELS = (
    '<?xml version="1.0" encoding="UTF-8"?>'
    '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/'
    'officeDocument" Target="xl/workbook.xml"/></Relationships>'
)
_WORKBOOK = (
    '<?xml version="1.0" encoding="UTF-8"?>'
    '<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" '
    'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">'
    '<sheets><sheet name="Sheet1" sheetId="1" r:id="rId1"/></sheets></workbook>'
)
_WORKBOOK_RELS = (
    '<?xml version="1.0" encoding="UTF-8"?>'
    '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/'
    'worksheet" Target="worksheets/sheet1.xml"/>{shared}</Relationships>'
)
_SHARED_REL = (
    '<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/'
    'sharedStrings" Target="sharedStrings.xml"/>'
)
_SHEET_START = (
    '<?xml version="1.0" encoding="UTF-8"?>'
    '<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">{dimension}<sheetData>'
)
_SHEET_END = "</sheetData></worksheet>"


def _column_letters(index: int) -> str:
    """1 -> A, 16384 -> XFD."""
    letters = ""
    while index:
        index, rest = divmod(index - 1, 26)
        letters = chr(65 + rest) + letters
    return letters


def xlsx(rows: Iterator[str], shared: Iterator[str] | None = None, dimension: str | None = None) -> bytes:
    """A workbook whose first sheet's ``<sheetData>`` is the ``rows`` (XML text pieces, written as they
    come), its stated size ``dimension`` (``"A1:XFD1001"``; default: none stated, as a file may be) and
    its shared-strings part, if given, the ``shared`` pieces."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        zf.writestr("[Content_Types].xml", _CONTENT_TYPES.format(shared_type=_SHARED_TYPE if shared else ""))
        zf.writestr("_rels/.rels", _ROOT_RELS)
        zf.writestr("xl/workbook.xml", _WORKBOOK)
        zf.writestr("xl/_rels/workbook.xml.rels", _WORKBOOK_RELS.format(shared=_SHARED_REL if shared else ""))
        with zf.open("xl/worksheets/sheet1.xml", "w", force_zip64=True) as part:
            part.write(_SHEET_START.format(dimension=f'<dimension ref="{dimension}"/>' if dimension else "").encode())
            for piece in rows:
                part.write(piece.encode())
            part.write(_SHEET_END.encode())
        if shared:
            with zf.open("xl/sharedStrings.xml", "w", force_zip64=True) as part:
                for piece in shared:
                    part.write(piece.encode())
    return out.getvalue()


def _header(names: list[str], column: int = 1) -> str:
    cells = "".join(
        f'<c r="{_column_letters(column + j)}1" t="inlineStr"><is><t>{name}</t></is></c>'
        for j, name in enumerate(names)
    )
    return f'<row r="1">{cells}</row>'


def xlsx_far_column(rows: int, column: int = 16384, stated: bool = False) -> bytes:
    """A header ``a, b`` and ``rows`` rows each holding one number at column ``column`` (XFD: the last);
    ``stated``: the sheet states its size, as Excel writes it."""

    def pieces() -> Iterator[str]:
        yield _header(["a", "b"])
        letters = _column_letters(column)
        for r in range(2, rows + 2):
            yield f'<row r="{r}"><c r="{letters}{r}"><v>1</v></c></row>'

    return xlsx(pieces(), dimension=f"A1:{_column_letters(column)}{rows + 1}" if stated else None)


def xlsx_rows(rows: int, columns: int = 10) -> bytes:
    """A header ``c1, c2, ...`` and ``rows`` rows of ``columns`` cells, 1, 2, 1, ...: ``rows * columns`` cells
    in a few bytes per thousand rows (the rows and cells do not number themselves, which the format allows,
    so each row's XML is the same) and about 16 bytes of XML per cell."""
    row = "<row>" + "".join(f"<c><v>{1 + j % 2}</v></c>" for j in range(columns)) + "</row>"

    def pieces() -> Iterator[str]:
        yield _header([f"c{j + 1}" for j in range(columns)])
        for _ in range(rows):
            yield row

    return xlsx(pieces())


def xlsx_long_cell(chars: int, shared: bool) -> bytes:
    """A header ``a, b``, then rows whose first cell in one of them holds ``chars`` characters: a shared
    string (held by the workbook at once) or an inline one (in the sheet)."""
    chunk = "x" * 1_000_000
    whole, rest = divmod(chars, len(chunk))

    def text() -> Iterator[str]:
        for _ in range(whole):
            yield chunk
        yield "x" * rest

    def rows() -> Iterator[str]:
        yield _header(["a", "b"])
        if shared:
            yield '<row r="2"><c r="A2" t="s"><v>0</v></c><c r="B2"><v>1</v></c></row>'
        else:
            yield '<row r="2"><c r="A2" t="inlineStr"><is><t>'
            yield from text()
            yield '</t></is></c><c r="B2"><v>1</v></c></row>'
        yield '<row r="3"><c r="A3" t="inlineStr"><is><t>y</t></is></c><c r="B3"><v>2</v></c></row>'

    def strings() -> Iterator[str]:
        yield (
            '<?xml version="1.0" encoding="UTF-8"?>'
            '<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="1" uniqueCount="1"><si><t>'
        )
        yield from text()
        yield "</t></si></sst>"

    return xlsx(rows(), strings() if shared else None)


def xlsx_mixed_one() -> bytes:
    """A column holding the number 1 and the text "1" (and 2 and "2"), beside a plain column."""

    def rows() -> Iterator[str]:
        yield _header(["a", "b"])
        cells = ["<v>1</v>", "<v>2</v>", "", ""]
        texts = ["", "", "1", "2"]
        for r, (number, text) in enumerate(zip(cells, texts), start=2):
            value = f'<c r="A{r}">{number}</c>' if number else f'<c r="A{r}" t="inlineStr"><is><t>{text}</t></is></c>'
            yield f'<row r="{r}">{value}<c r="B{r}"><v>{r % 2}</v></c></row>'

    return xlsx(rows())


def parquet_rows(rows: int, columns: int = 2) -> bytes:
    """``rows`` rows of ``columns`` small-integer columns, run-length encoded: a few KB per million rows."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    block = min(rows, 1_000_000)
    values = pa.array([1, 2] * (block // 2) + [1] * (block % 2), type=pa.int8())
    out = io.BytesIO()
    schema = pa.schema([(f"c{j}", pa.int8()) for j in range(columns)])
    with pq.ParquetWriter(out, schema, compression="zstd") as writer:
        done = 0
        while done < rows:
            n = min(block, rows - done)
            writer.write_table(pa.table([values.slice(0, n)] * columns, schema=schema))
            done += n
    return out.getvalue()


def parquet_long_text(chars: int, rows: int = 2) -> bytes:
    """A text column whose first cell holds ``chars`` characters (the others ``'y'``), and a number column:
    compressed to a few KB, unpacked to the text's size."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    text = pa.array(["x" * chars] + ["y"] * (rows - 1))
    table = pa.table({"a": text, "b": pa.array([k % 2 for k in range(rows)], type=pa.int8())})
    out = io.BytesIO()
    pq.write_table(table, out, compression="zstd", use_dictionary=False)
    return out.getvalue()


def zsav_rows(rows: int) -> bytes:
    """An SPSS ``.zsav`` file of ``rows`` rows of two columns of 1 and 2: a few hundred KB per 10 M rows."""
    import os
    import tempfile

    import numpy as np
    import pandas as pd
    import pyreadstat

    values = np.tile(np.array([1.0, 2.0]), rows // 2 + 1)[:rows]
    frame = pd.DataFrame({"a": values, "b": values[::-1].copy()})
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "rows.zsav")
        pyreadstat.write_sav(frame, path, compress=True)
        with open(path, "rb") as fh:
            return fh.read()
