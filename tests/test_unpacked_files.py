"""Data files small on disk and huge once unpacked are refused from their metadata or while they stream,
before any frame of their cells exists (effdim.binary_formats); bytes and mixed cells become text.

The hostile files (tests/hostile_files.py) are built here in a fraction of a second each: where a file at
the command line's limits would take seconds to write, the same shape is read with a smaller file-size
limit (``max_bytes``), from which every unpacking limit is derived the same way.
"""

from __future__ import annotations

import io
import json

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hostile_files import (
    parquet_long_text,
    parquet_rows,
    xlsx_far_column,
    xlsx_long_cell,
    xlsx_mixed_one,
    xlsx_rows,
    zsav_rows,
)

import effdim.binary_formats
from effdim.cli import main
from effdim.data import DataError, from_frame
from effdim.limits import MAX_LABEL_CHARS
from effdim.read_limits import UNPACK_FACTOR, ReadLimits
from effdim.reading import read_data


def refused(raw: bytes, name: str, pattern: str, **options) -> str:
    with pytest.raises(DataError, match=pattern) as err:
        read_data(raw, name=name, **options)
    message = str(err.value)
    assert "\n" not in message and "Traceback" not in message
    return message


def one_line(capsys, argv: list[str]) -> str:
    status = main(argv)
    out, err = capsys.readouterr()
    assert status == 2, (out, err)
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    return err.strip()


# ---------------------------------------------------------------- Excel
def test_an_excel_row_reaching_the_last_column_is_refused_at_once(capsys, tmp_path):
    """The file of the attack: one cell at XFD per row (34 KB for 100,000 rows); refused at its first row
    (the row is never padded to 16,384 cells again and again)."""
    path = tmp_path / "far.xlsx"
    raw = xlsx_far_column(2_000)
    assert len(raw) < 20_000
    path.write_bytes(raw)
    line = one_line(capsys, ["sweep", str(path), "--quiet"])
    assert line == "effdim: far.xlsx: row 2 reaches column 16,384, more than the limit of 2,000 columns"


def test_an_excel_sheet_stating_its_size_is_refused_from_it(tmp_path):
    refused(xlsx_far_column(10, stated=True), "far.xlsx", r"^far.xlsx: the file has 16,384 columns, more than")


def test_an_excel_sheet_of_too_many_cells_is_refused_while_it_streams():
    raw = xlsx_rows(6_000)
    assert len(raw) < 10_000
    message = refused(raw, "rows.xlsx", r"cells, more than the limit of 50,000 ", limits=ReadLimits(max_bytes=100_000))
    assert message.startswith("rows.xlsx: the file holds 5,001 rows x 10 columns = 50,010 cells")


@pytest.mark.parametrize("shared", [True, False])
def test_an_excel_cell_of_megabytes_is_refused(shared):
    """A shared text over the file-size limit is refused from the zip directory (the reader holds every shared
    text at once); an inline one within the unpacked size is read, and refused as a label."""
    raw = xlsx_long_cell(3_000_000, shared=shared)
    assert len(raw) < 20_000
    if shared:
        refused(
            raw,
            "long.xlsx",
            r"its shared texts, which are read at once, unpack to 2.9 MiB",
            limits=ReadLimits(max_bytes=1_000_000),
        )
    else:
        refused(
            raw,
            "long.xlsx",
            r"column 'a' \(row 2\) holds a text of 3,000,000 characters",
            limits=ReadLimits(max_bytes=1_000_000),
        )


def test_an_excel_file_unpacking_past_its_limit_is_refused_from_the_zip_directory():
    raw = xlsx_long_cell(30_000_000, shared=False)
    refused(
        raw,
        "long.xlsx",
        r"^long.xlsx: the file unpacks to 28.6 MiB, more than the limit of 9.5 MiB$",
        limits=ReadLimits(max_bytes=1_000_000),
    )


def test_an_excel_file_of_mixed_numbers_and_texts_reads_each_cell_as_text():
    """The number 1 and the text "1" are one state, as in a CSV file (not four states 1, 2, '1', '2')."""
    data = read_data(xlsx_mixed_one(), name="mixed.xlsx").dataset
    assert data.states[0] == (1, 2)
    assert data.counts.sum() == 4


def test_a_frame_of_mixed_numbers_and_texts_reads_each_cell_as_text():
    frame = pd.DataFrame({"a": [1, "1", 2, "2", 2.0], "b": ["x", "y", "x", "y", "x"]})
    assert from_frame(frame).states[0] == (1, 2)
    spelled = pd.DataFrame({"a": [1, "01", 2], "b": ["x", "y", "x"]})
    as_csv = read_data(b"a,b\n1,x\n01,y\n2,x\n").dataset.states[0]
    assert from_frame(spelled).states[0] == as_csv and "01" in as_csv  # two spellings never merge, as in a CSV


def test_excel_reads_as_before():
    """A plain workbook: header, numbers, texts, an empty cell, trailing empty rows; as pandas read it."""
    frame = pd.DataFrame({"a": [1, 2, None, 1], "b": ["x", "y", "y", "x"], "c": [1.5, 2.5, 1.5, 2.5]})
    out = io.BytesIO()
    frame.to_excel(out, index=False)
    data = read_data(out.getvalue(), name="plain.xlsx").dataset
    assert data.columns == ("a", "b", "c")
    assert data.states == ((1, 2), ("x", "y"), (1.5, 2.5))
    assert data.n_rows == 4 and data.n_missing == 1


# ---------------------------------------------------------------- Parquet
def test_a_parquet_text_of_megabytes_is_refused_from_its_footer():
    raw = parquet_long_text(12_000_000)
    assert len(raw) < 20_000
    refused(
        raw,
        "long.parquet",
        r"^long.parquet: the file unpacks to 11.4 MiB, more than",
        limits=ReadLimits(max_bytes=1_000_000),
    )


def test_a_parquet_label_over_the_limit_is_refused(capsys, tmp_path):
    path = tmp_path / "long.parquet"
    path.write_bytes(parquet_long_text(MAX_LABEL_CHARS + 1))
    line = one_line(capsys, ["sweep", str(path), "--quiet"])
    assert line.startswith(f"effdim: long.parquet: column 'a' holds a text of {MAX_LABEL_CHARS + 1:,} characters")


def test_parquet_bytes_states_are_shown_and_exported_as_text(capsys, tmp_path):
    path = tmp_path / "bytes.parquet"
    codes = pa.array([b"\xff\x01", b"ok", b"caf\xc3\xa9", b"ok"] * 3, type=pa.binary())
    pq.write_table(pa.table({"a": codes, "b": [1, 2, 2, 1] * 3, "c": ["x", "y", "y", "x"] * 3}), path)
    assert read_data(path).dataset.states[0] == ("\\xff\x01", "ok", "café")
    argv = ["fit", str(path), "--model", "2:3,2,2", "--map", "O1=a", "--map", "O2=b", "--map", "O3=c"]
    assert main([*argv, "--json", "--restarts", "1", "--quiet"]) == 0
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    assert {p["a"] for p in json.loads(out)["worst_patterns"]} == {"\\xff\x01", "ok", "café"}


def test_parquet_reads_as_before():
    """Ordered categoricals keep their order, NaN and null are missing, a pandas index is no column."""
    frame = pd.DataFrame(
        {
            "a": pd.Categorical(["lo", "hi", "mid", "lo"], categories=["lo", "mid", "hi"], ordered=True),
            "b": [1.0, float("nan"), 2.0, 1.0],
            "c": pd.array([True, False, None, True], dtype="boolean"),
        },
        index=pd.Index([10, 11, 12, 13], name="id"),
    )
    out = io.BytesIO()
    frame.to_parquet(out)
    data = read_data(out.getvalue(), name="plain.parquet").dataset
    assert data.columns == ("a", "b", "c")
    assert data.states == (("lo", "mid", "hi"), (1, 2), (False, True))
    assert data.n_missing == 2


# ---------------------------------------------------------------- rows stated in the metadata
@pytest.mark.parametrize(
    ("build", "name", "rows", "max_bytes"),
    [(parquet_rows, "rows.parquet", 600_000, 1_000_000), (zsav_rows, "rows.zsav", 300_000, 500_000)],
)
def test_a_file_of_too_many_rows_is_refused_from_its_metadata(build, name, rows, max_bytes):
    """A Parquet file's footer, an SPSS file's header: the rows are counted before any is read."""
    raw = build(rows)
    assert len(raw) < 50_000
    message = refused(
        raw,
        name,
        rf"{2 * rows:,} cells, more than the limit of {max_bytes // 2:,}",
        limits=ReadLimits(max_bytes=max_bytes),
    )
    assert message.startswith(f"{name}: the file holds {rows:,} rows x 2 columns")


# ---------------------------------------------------------------- the limits and the last resort
def test_the_limits_follow_the_file_size_limit():
    limits = ReadLimits(max_bytes=50_000_000)
    assert limits.cells == 25_000_000 and limits.unpacked_bytes == UNPACK_FACTOR * 50_000_000


def test_a_file_that_exhausts_memory_anyway_is_one_line(monkeypatch, capsys, tmp_path):
    def exhausted(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(effdim.binary_formats, "_read_parquet", exhausted)
    path = tmp_path / "any.parquet"
    path.write_bytes(parquet_rows(10))
    assert one_line(capsys, ["sweep", str(path), "--quiet"]) == (
        "effdim: any.parquet: the file needs more memory than this computer has to read it"
    )
