"""effdim.reading.read_data: one reader for every face; encodings, separators, limits, formats."""

from __future__ import annotations

import io
import re
import warnings

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pyreadstat
import pytest

from effdim import ReadLimits
from effdim.data import DataError
from effdim.reading import load_csv, read_data

# a survey with accents (Latin-1 can write them), a quoted field holding every separator, and a missing cell
ROWS = [
    ["opinion", "région", "note"],
    ["très bien", "Île-de-France", "1"],
    ["mal", "Bretagne", "2"],
    ['"a, b; c\td"', "Bretagne", ""],
    ["très bien", "Provence", "2"],
    ["mal", "Île-de-France", "1"],
]
ENCODINGS = ["utf-8", "utf-8-sig", "latin-1", "utf-16"]
SEPARATORS = [",", ";", "\t"]


def csv_bytes(encoding: str, sep: str, newline: str = "\n") -> bytes:
    text = newline.join(sep.join(row) for row in ROWS) + newline
    return text.encode(encoding)


def reference():
    return read_data(csv_bytes("utf-8", ","), name="ref.csv").dataset


@pytest.mark.parametrize("sep", SEPARATORS, ids=["comma", "semicolon", "tab"])
@pytest.mark.parametrize("encoding", ENCODINGS)
def test_same_file_in_every_encoding_and_separator_loads_identically(encoding, sep, tmp_path):
    ref = reference()
    path = tmp_path / "survey.csv"
    path.write_bytes(csv_bytes(encoding, sep, "\r\n" if encoding == "latin-1" else "\n"))
    for source, name in ((path, None), (path.read_bytes(), "survey.csv")):  # the CLI's path, the upload's bytes
        loaded = read_data(source, name=name)
        ds = loaded.dataset
        assert loaded.separator == sep
        assert loaded.encoding == encoding
        assert ds.columns == ref.columns and ds.states == ref.states
        assert ds.patterns.tolist() == ref.patterns.tolist() and ds.counts.tolist() == ref.counts.tolist()
        assert ds.states[0][2] == "a, b; c\td"  # the quoted field kept its separators
    assert load_csv(path).states == ref.states  # the library call detects as well


def test_reading_a_csv_costs_a_few_bytes_per_byte_of_the_file():
    """The cells are coded column by column in chunks, never all held as text: an 11.5 MB file of ten
    label columns peaks at about 7 MB of allocations per MB (tracemalloc), where reading it whole with
    pandas and coding it afterwards peaked at 16 (docs/robustness.md, "Reading data")."""
    import tracemalloc

    rng = np.random.default_rng(0)
    labels = [np.array(["a", "b"]), np.array(["x", "y", "z"]), np.array(["lo", "mid", "hi", "top"])]
    rows = 500_000
    columns = [labels[j % 3][rng.integers(0, len(labels[j % 3]), rows)] for j in range(10)]
    body = "\n".join(",".join(row) for row in zip(*columns))
    raw = (",".join(f"c{j}" for j in range(10)) + "\n" + body + "\n").encode()
    del columns, body
    tracemalloc.start()
    try:
        loaded = read_data(raw, name="m.csv")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert loaded.dataset.n_rows == rows
    assert peak / len(raw) < 10, f"{peak / len(raw):.1f} bytes per byte of the file"


def test_description_says_what_was_detected():
    latin = read_data(csv_bytes("latin-1", ";"), name="x.csv")
    assert latin.description() == "CSV, Latin-1, fields separated by semicolons"
    assert read_data(csv_bytes("utf-16", "\t"), name="x.csv").description() == "CSV, UTF-16, fields separated by tabs"


def test_given_encoding_and_separator_are_checked():
    raw = csv_bytes("latin-1", ",")
    with pytest.raises(
        DataError,
        match=r"x.csv: not UTF-8 text: byte 0xe9 at offset 9 \(line 1, column 10\); "
        r"read it as latin-1",
    ):
        read_data(raw, name="x.csv", encoding="utf-8")
    assert read_data(raw, name="x.csv", encoding="latin1").dataset.states == reference().states
    with pytest.raises(DataError, match="unknown encoding 'klingon'"):
        read_data(raw, name="x.csv", encoding="klingon")
    # a separator given wins over detection: here the header becomes one column
    with pytest.raises(DataError, match=r"only 1 column .*is the separator ';'\?"):
        read_data(csv_bytes("utf-8", ";"), name="x.csv", sep=",")


def test_utf8_split_across_scan_blocks(monkeypatch):
    """The UTF-8 check decodes in blocks: a character cut by a block boundary is still UTF-8."""
    from effdim import csvscan

    monkeypatch.setattr(csvscan, "_BLOCK", 7)
    raw = "a,b\nété,1\nhiver,2\n".encode()
    assert read_data(raw).encoding == "utf-8"
    bad = raw + b"caf\xe9,1\n"
    assert csvscan._first_non_utf8(bad) == len(raw) + 3


def test_small_scan_blocks_give_the_same_records(monkeypatch):
    """Records (quoted line breaks, blank lines) are the same whatever the block size of the scan."""
    from effdim import csvscan

    raw = b'A,B\n"x\n\ny",1\n\n  \nz,2\n"q""r",1\nz,2'
    whole = read_data(raw).dataset
    monkeypatch.setattr(csvscan, "_BLOCK", 5)
    small = read_data(raw).dataset
    assert small.states == whole.states == (("x\n\ny", "z", 'q"r'), (1, 2))
    assert small.rows.tolist() == whole.rows.tolist()
    with pytest.raises(DataError, match="line 7 has 3 fields"):
        read_data(b'A,B\n"x\n\ny",1\n\nz,2\nz,2,3\n')


def test_column_limit_is_checked_on_the_header_before_parsing(monkeypatch):
    from effdim import csvscan

    wide = ",".join(f"c{j}" for j in range(3000)) + "\n" + ",".join("1" for _ in range(3000)) + "\n"
    monkeypatch.setattr(csvscan, "_parse", lambda *a, **k: pytest.fail("parsed cells of a file over the limit"))
    with pytest.raises(DataError, match=r"wide.csv: the header has 3,000 columns, more than the limit of 2,000"):
        read_data(wide.encode(), name="wide.csv")
    with pytest.raises(DataError, match=r"more than the limit of 10"):
        read_data(wide.encode(), name="wide.csv", limits=ReadLimits(max_columns=10))


def test_distinct_values_limit_refuses_or_drops_while_parsing():
    rows = "\n".join(f"r{i},{i % 2},{i % 3}" for i in range(5000))
    raw = ("id,a,b\n" + rows + "\n").encode()
    with pytest.raises(DataError, match=r"column 'id' has more than 50 distinct values \(e.g. 'r0', 'r1'"):
        read_data(raw, name="ids.csv")
    loaded = read_data(raw, name="ids.csv", limits=ReadLimits(too_many_states="drop"))
    assert loaded.dataset.columns == ("a", "b")
    assert [name for name, _ in loaded.dropped] == ["id"] and loaded.dropped[0][1] > 50
    assert loaded.dataset.n_rows == 5000
    # a count column may have any number of distinct counts
    counts = "\n".join(f"{i % 2},{i % 3},{i + 1}" for i in range(200))
    for name in ("count", "FrEq"):
        assert read_data(f"a,b,{name}\n{counts}\n".encode()).dataset.n_rows == sum(range(1, 201))


def test_huge_counts_name_the_count_column():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no RuntimeWarning on the way
        with pytest.raises(DataError, match=r"c.csv: the counts in column 'count' sum to inf, more than 1e\+15"):
            read_data(b"a,b,count\n0,1,1e308\n1,0,1e308\n0,0,3\n", name="c.csv")
    with pytest.raises(DataError, match=r"counts in column 'freq' sum to 2e\+15"):
        read_data(b"a,b,freq\n0,1,1e15\n1,0,1e15\n", name="c.csv")


def test_cells_of_hundreds_of_digits_stay_labels_and_longer_ones_are_refused():
    big = "9" * 990
    raw = (f"a,b\n{big},1\n1,2\n{big} apples,1\n").encode()
    ds = read_data(raw).dataset
    assert ds.states[0] == ("1", big, f"{big} apples")  # numbered labels sorted by their number, of any length
    huge = "9" * 4400  # more digits than Python turns into a number: refused as a label, never converted
    with pytest.raises(
        DataError, match=r"column 'a' holds a text of 4,400 characters \(starting '9{30}'\); a category"
    ):
        read_data(f"a,b\n{huge},1\n1,2\n".encode())
    with pytest.raises(DataError, match=r"line 2: count 'x9{30,}… in column 'count' is not a number"):
        read_data(f"a,b,count\n1,2,x{huge}\n2,1,3\n2,2,4\n".encode())


def test_bad_csv_bytes_stay_one_line_errors():
    for raw, pattern in [
        (b"A,B\n\x00\x01,2\n", r"not a text file \(NUL byte at offset 4, line 2\)"),
        (b'A,B\n"x,1\n', r"line 2: a quoted field is never closed"),
        # a quote closing an unquoted field, then one opening a field that never closes (found by hypothesis:
        # the scan paired the two quotes and pandas' ParserError escaped as a traceback)
        (b'A\n0"\n"\n', r"only 1 column"),
        (b'A,B\n0",1\n",2\n', r"line 3 has 1 field, expected 2"),
    ]:
        with pytest.raises(DataError, match=pattern):
            read_data(raw, name="bad.csv")


def test_from_open_binary_and_text_files():
    raw = csv_bytes("utf-8", ";")
    assert read_data(io.BytesIO(raw)).dataset.states == reference().states
    assert read_data(io.StringIO(raw.decode())).dataset.states == reference().states


def test_wide_random_file_matches_a_frame():
    """Many rows, several chunks of the parser: the same patterns as from_frame on the same table."""
    from effdim.data import from_frame

    rng = np.random.default_rng(3)
    frame = pd.DataFrame({f"q{j}": rng.choice(["yes", "no", "NA", " maybe "], size=30_000) for j in range(40)})
    raw = frame.to_csv(index=False).encode()
    ds = read_data(raw).dataset
    expected = from_frame(frame.replace("NA", None).apply(lambda c: c.str.strip()))
    assert ds.states == expected.states
    assert ds.patterns.tolist() == expected.patterns.tolist() and ds.counts.tolist() == expected.counts.tolist()


def test_cli_fit_reads_every_encoding_and_separator_the_same_way(tmp_path, capsys):
    """``effdim fit`` detects what the dashboard's upload detects, says so on stderr, and fits the same data."""
    from effdim.cli import main

    outputs = set()
    for encoding in ENCODINGS:
        for sep in SEPARATORS:
            path = tmp_path / f"survey-{encoding}-{ord(sep)}.csv"
            path.write_bytes(csv_bytes(encoding, sep))
            assert (
                main(
                    [
                        "fit",
                        str(path),
                        "--model",
                        "2:3,3,2",
                        "--map",
                        "O1=opinion",
                        "--map",
                        "O2=région",
                        "--map",
                        "O3=note",
                        "--seed",
                        "1",
                        "--restarts",
                        "2",
                        "--quiet",
                    ]
                )
                == 0
            )
            out, err = capsys.readouterr()
            assert err == ""  # --quiet: no detection line
            outputs.add(out.replace(path.name, "FILE"))
    assert len(outputs) == 1
    assert main(["sweep", str(path), "--max-card", "2", "--restarts", "1", "--json", "--sep", "\t"]) == 0
    capsys.readouterr()
    status = main(
        [
            "fit",
            str(path),
            "--model",
            "2:3,3,2",
            "--map",
            "O1=opinion",
            "--map",
            "O2=région",
            "--map",
            "O3=note",
            "--restarts",
            "1",
            "--sep",
            "tab",
            "--encoding",
            "UTF16",  # the reader's other names for an encoding, in any case (effdim.text_formats)
        ]
    )
    assert status == 0
    assert (
        capsys.readouterr().err.splitlines()[0] == f"effdim: read {path.name} as CSV, UTF-16, fields separated by tabs"
    )
    assert main(["fit", str(path), "--model", "2:2,2", "--encoding", "latin1"]) == 2
    assert capsys.readouterr().err.strip() == (
        f"effdim: {path.name}: the file is UTF-16 text, not Latin-1; read it as utf-16"
    )


# ------------------------------------------------------------------ other formats
def survey_frame() -> pd.DataFrame:
    return pd.DataFrame({"q1": [1, 2, 2, 3, 1, 3], "q2": [0, 1, 1, 0, 1, 0], "region": ["n", "s", "s", "n", "e", "e"]})


def test_spss_value_labels_become_the_categories(tmp_path):
    import pyreadstat  # a dependency of effdim: missing, the test fails rather than skips

    path = tmp_path / "survey.sav"
    labels = {"q1": {1.0: "never", 2.0: "sometimes", 3.0: "often"}, "q2": {0.0: "no", 1.0: "yes"}}
    pyreadstat.write_sav(survey_frame(), str(path), variable_value_labels=labels)
    for source, name in ((path, None), (path.read_bytes(), "upload.sav"), (path.read_bytes(), "no-extension")):
        loaded = read_data(source, name=name)
        assert loaded.format == "sav" and loaded.description() == "SPSS"
        ds = loaded.dataset
        assert ds.columns == ("q1", "q2", "region")
        assert ds.states == (("never", "sometimes", "often"), ("no", "yes"), ("n", "s", "e"))
        assert [ds.decode("q1", ds.patterns[r, 0]) for r in ds.rows] == [
            "never",
            "sometimes",
            "sometimes",
            "often",
            "never",
            "often",
        ]


def test_stata_value_labels_become_the_categories(tmp_path):
    path = tmp_path / "survey.dta"
    frame = survey_frame()
    frame["q1"] = pd.Categorical.from_codes([0, 1, 1, 2, 0, 2], ["never", "sometimes", "often"])
    frame.to_stata(path, write_index=False)
    loaded = read_data(path)
    assert loaded.format == "dta"
    assert loaded.dataset.states[0] == ("never", "sometimes", "often")
    assert loaded.dataset.states[1:] == ((0, 1), ("n", "s", "e"))


def test_excel_and_parquet(tmp_path):
    frame = survey_frame()
    frame.loc[2, "q2"] = None
    expected = read_data(frame.to_csv(index=False).encode(), name="x.csv").dataset
    for suffix, write in (
        (".xlsx", lambda p: frame.to_excel(p, index=False)),
        (".parquet", lambda p: frame.to_parquet(p, index=False)),
    ):
        path = tmp_path / f"survey{suffix}"
        write(path)
        ds = read_data(path).dataset
        assert ds.states == expected.states and ds.n_missing == 1
        assert ds.patterns.tolist() == expected.patterns.tolist()


@pytest.mark.parametrize("suffix", [".sav", ".dta", ".xlsx", ".parquet"])
def test_bad_files_of_each_format_get_one_line(tmp_path, suffix):
    path = tmp_path / f"broken{suffix}"
    path.write_bytes(b"this is not what the name says\n" * 3)
    with pytest.raises(DataError, match=rf"broken{suffix}: not a readable \w+ file \(") as info:
        read_data(path)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("suffix", [".sav", ".dta", ".xlsx", ".parquet"])
def test_a_file_cut_short_is_refused_in_the_users_words(tmp_path, suffix):
    """A file cut in half: the message says what is wrong with the file, not what the format's library
    said (a struct's byte count, a zip's directory, a Parquet footer)."""
    frame = pd.DataFrame({"a": [1.0, 2.0, 1.0], "b": ["x", "y", "y"]})
    whole = tmp_path / f"whole{suffix}"
    if suffix == ".sav":
        pyreadstat.write_sav(frame, str(whole))
    elif suffix == ".dta":
        frame.to_stata(whole, write_index=False)
    elif suffix == ".xlsx":
        frame.to_excel(whole, index=False)
    else:
        frame.to_parquet(whole, index=False)
    raw = whole.read_bytes()
    with pytest.raises(DataError) as info:
        read_data(raw[: len(raw) // 2], name=f"half{suffix}")
    kind = {".sav": "SPSS", ".dta": "Stata", ".xlsx": "Excel", ".parquet": "Parquet"}[suffix]
    assert str(info.value) == (
        f"half{suffix}: not a readable {kind} file (damaged, cut short, or another format under this name)"
    )


def test_nested_parquet_cells_are_named_not_a_library_error():
    """Parquet columns of lists or records are no categories: one line naming the column (it was
    pandas' 'unhashable type' TypeError)."""
    for cells in ([[1, 2], [3], [1, 2]], [{"x": 1}, {"x": 2}, {"x": 1}]):
        buffer = io.BytesIO()
        pq.write_table(pa.table({"nested": cells, "b": [1, 2, 1]}), buffer)
        with pytest.raises(DataError, match=r"^n.parquet: column 'nested' holds lists or records, not one category"):
            read_data(buffer.getvalue(), name="n.parquet")


def test_other_formats_follow_the_same_rules(tmp_path):
    frame = pd.DataFrame({"id": range(100), "a": [i % 2 for i in range(100)], "b": [i % 3 for i in range(100)]})
    path = tmp_path / "ids.parquet"
    frame.to_parquet(path)
    with pytest.raises(DataError, match=r"ids.parquet: column 'id' has more than 50 distinct values"):
        read_data(path)
    loaded = read_data(path, limits=ReadLimits(too_many_states="drop"))
    assert loaded.dataset.columns == ("a", "b") and loaded.dropped == (("id", 100),)
    with pytest.raises(DataError, match="a separator applies to CSV files only"):
        read_data(path, sep=";")
    wide = pd.DataFrame({f"c{j}": [0, 1] for j in range(30)})
    wide.to_parquet(path)
    with pytest.raises(DataError, match="the file has 30 columns, more than the limit of 10"):
        read_data(path, limits=ReadLimits(max_columns=10))
    frame = pd.DataFrame({"a": [0, 1, 0], "b": [1, 0, 0], "count": [5, 2.5, 1]})
    frame.to_parquet(path)
    assert read_data(path).dataset.n_rows == 8.5


@pytest.mark.parametrize(
    "limits, culprit",
    [
        (dict(max_bytes=0), "max_bytes must be a whole number of at least 1, got 0"),
        (dict(max_states=True), "max_states must be a whole number of at least 1, got True"),
        (dict(max_columns=2.5), "max_columns must be a whole number of at least 1, got 2.5"),
        (dict(too_many_states="skip"), "too_many_states must be 'refuse' or 'drop', got 'skip'"),
    ],
)
def test_nonsense_limits_are_refused_naming_the_limit(limits, culprit):
    with pytest.raises(DataError, match=re.escape(culprit)):
        ReadLimits(**limits)


def test_a_name_tells_the_format_of_bytes_and_load_csv_reads_text_whatever_the_name():
    assert read_data(b"a,b\n1,x\n2,y\n", name="plain.txt").format == "csv"
    assert load_csv(b"a,b\n1,x\n2,y\n", name="answers.sav").columns == ("a", "b")
