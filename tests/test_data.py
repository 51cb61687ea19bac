"""Loading, validating and compressing categorical data (effdim.data, effdim.datasets)."""

from __future__ import annotations

import io
import time
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from effdim import ReadLimits, datasets
from effdim.data import (
    DataError,
    Dataset,
    check_matches_model,
    from_frame,
    from_patterns,
    resolve_mapping,
)
from effdim.model import HLCModel
from effdim.reading import load_csv

STOUFFER = str(resources.files("effdim.datasets") / "stouffer_toby.csv")  # the published table, as bundled


def write(tmp_path, content, name="data.csv"):
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return path


def as_counter(ds: Dataset) -> dict:
    """{decoded pattern: count}, independent of state order."""
    out = {}
    for row, count in zip(ds.patterns, ds.counts):
        key = tuple(ds.decode(j, code) for j, code in enumerate(row))
        out[key] = out.get(key, 0) + count
    return out


# ----------------------------------------------------------------- good input
def test_stouffer_toby_counts_are_detected():
    ds = load_csv(STOUFFER)
    assert ds.columns == ("A", "B", "C", "D")
    assert ds.count_column == "count"
    assert ds.n_rows == 216
    assert ds.n_patterns == 16
    assert ds.cardinalities == (2, 2, 2, 2)
    assert ds.states == (("+", "-"),) * 4
    assert ds.n_missing == 0
    assert ds.source == "stouffer_toby.csv"
    counter = as_counter(ds)
    assert counter[("+", "+", "+", "+")] == 42
    assert counter[("-", "-", "-", "-")] == 20


def test_count_column_none_treats_counts_as_data():
    with pytest.raises(DataError, match=r"column 'count' has more than 10 distinct values"):
        load_csv(STOUFFER, count_column=None, limits=ReadLimits(max_states=10))
    ds = load_csv(STOUFFER, count_column=None)
    assert ds.columns[-1] == "count" and ds.n_rows == 16


def test_to_frame_round_trips_through_from_frame():
    ds = load_csv(STOUFFER)
    frame = ds.to_frame()
    assert list(frame.columns) == ["A", "B", "C", "D", "count"]
    assert frame["count"].sum() == 216
    again = from_frame(frame, count_column="count", name="again")
    assert again.states == ds.states
    np.testing.assert_array_equal(again.patterns, ds.patterns)
    np.testing.assert_array_equal(again.counts, ds.counts)
    codes = ds.to_frame(decoded=False)
    assert codes["A"].dtype.kind == "i"


def test_to_frame_count_name_does_not_clash():
    ds = from_patterns([[0, 1], [1, 0]], columns=["count", "x"])
    assert list(ds.to_frame().columns) == ["count", "x", "count_"]


def test_missing_cells_are_kept_and_counted(tmp_path):
    text = "A,B,C,count\n1,x,NA,3\n2,?,y,2\n , y, x ,1\n1,x,NaN,4\n"
    ds = load_csv(write(tmp_path, text))
    assert ds.n_rows == 10
    # row 1: one missing (x3 -> 3), row 2: one (x2), row 3: one (x1), row 4: one (x4)
    assert ds.n_missing == 10
    assert ds.states == ((1, 2), ("x", "y"), ("x", "y"))  # first appearance; the same answers in one order
    counter = as_counter(ds)
    assert counter[(1, "x", None)] == 7  # rows 1 and 4 merge
    assert counter[(None, "y", "x")] == 1  # white space stripped, blank cell missing
    assert (ds.patterns == -1).sum() == 3


def test_custom_missing_tokens(tmp_path):
    path = write(tmp_path, "A,B\n1,-9\n2,1\n1,2\n")
    assert load_csv(path).cardinalities == (2, 3)
    ds = load_csv(path, missing=("-9",))
    assert ds.cardinalities == (2, 2) and ds.n_missing == 1


def test_natural_state_order(tmp_path):
    text = "num,word,mixed,padded,real\n10,b,1,01,0.5\n9,a,x,1,1.5\n2,c,2,02,-2\n"
    ds = load_csv(write(tmp_path, text))
    assert ds.states[0] == (2, 9, 10)
    assert all(isinstance(v, int) for v in ds.states[0])
    assert ds.states[1] == ("b", "a", "c")  # words: the order of first appearance
    assert ds.states[2] == ("1", "x", "2")
    assert ds.states[3] == ("01", "1", "02")  # "01" and "1" are not merged; numbered labels by their number
    assert ds.states[4] == (-2.0, 0.5, 1.5)


def test_categories_go_along_their_scale_and_numbered_labels_sort_by_number(tmp_path):
    text = (
        "freq,rating,colour\nsometimes,10 Not at all,red\nnever,2 Very well,green\noften,1 Extremely well,blue\n"
        "never,2 Very well,red\n"
    )
    ds = load_csv(write(tmp_path, text))
    assert ds.states[0] == ("never", "sometimes", "often")
    assert ds.states[2] == ("red", "green", "blue")  # no scale: the order of first appearance
    assert ds.states[1] == ("1 Extremely well", "2 Very well", "10 Not at all")


def test_with_state_order_renumbers_one_column_and_keeps_the_data(tmp_path):
    text = "freq,rating\nsometimes,2\nnever,1\noften,2\nnever,\nnever,1\n"
    ds = load_csv(write(tmp_path, text))
    again = ds.with_state_order("freq", ["often", "never", "sometimes"])
    assert again.states == (("often", "never", "sometimes"), (1, 2))
    before = ds.to_frame().sort_values(["freq", "rating"]).reset_index(drop=True)
    after = again.to_frame().sort_values(["freq", "rating"]).reset_index(drop=True)
    pd.testing.assert_frame_equal(before, after)  # same rows, same counts, missing kept
    assert [again.decode("freq", again.patterns[r, 0]) for r in again.rows] == [
        "sometimes",
        "never",
        "often",
        "never",
        "never",
    ]  # each input row keeps its value
    assert ds.with_state_order("rating", ["2", "1"]).states[1] == (2, 1)  # states named by their text
    for bad in (["often", "never"], ["often", "never", "never"], ["often", "never", "seldom"]):
        with pytest.raises(DataError, match="a new order must list each of its states once"):
            ds.with_state_order("freq", bad)


def test_crlf_bom_blank_lines_and_no_final_newline(tmp_path):
    raw = b"\xef\xbb\xbfA,B\r\n1,2\r\n\r\n   \r\n2,1\r\n1,1"
    ds = load_csv(write(tmp_path, raw))
    assert ds.columns == ("A", "B") and ds.n_rows == 3


def test_buffers_and_bytes():
    text = "A,B\nx,1\ny,2\n"
    for source in (io.StringIO(text), io.BytesIO(text.encode()), text.encode()):
        ds = load_csv(source, name="mem")
        assert ds.n_rows == 2 and ds.source == "mem"


def test_quoted_fields(tmp_path):
    text = 'A,B\n"a, with comma",1\n"multi\nline",2\nplain,1\n'
    ds = load_csv(write(tmp_path, text))
    assert ds.states[0] == ("a, with comma", "multi\nline", "plain")


def test_literal_quotes_inside_unquoted_fields(tmp_path):
    ds = load_csv(write(tmp_path, 'A,B\nab"c,1\nd,2\n'))
    assert ds.states[0] == ('ab"c', "d")
    with pytest.raises(DataError, match="line 3 has 1 field, expected 2"):
        load_csv(write(tmp_path, 'A,B\nab"c,1\nd\n'))


def test_quoted_file_like_r_write_csv(tmp_path):
    rng = np.random.default_rng(1)
    frame = pd.DataFrame(np.where(rng.random((243_000, 5)) < 0.5, "yes", "no"), columns=list("ABCDE"))
    path = tmp_path / "quoted.csv"
    frame.to_csv(path, index=False, quoting=1)  # every field quoted
    ds = load_csv(path)  # its speed is measured in benchmarks/engine/bench_data_memory.py, not here
    assert all(sorted(s) == ["no", "yes"] for s in ds.states) and ds.n_rows == 243_000


def test_other_separator(tmp_path):
    ds = load_csv(write(tmp_path, "A;B\n1;2\n2;1\n"), sep=";")
    assert ds.columns == ("A", "B")


def test_auto_count_names_and_fractional_weights(tmp_path):
    ds = load_csv(write(tmp_path, "A,B,Freq\nx,1,2.5\ny,2,0.5\nx,1,1\n"))
    assert ds.count_column == "Freq"
    assert ds.n_rows == 4.0
    assert as_counter(ds)[("x", 1)] == 3.5
    # a column called n with text is data, not counts
    ds = load_csv(write(tmp_path, "A,n\nx,yes\ny,no\n"))
    assert ds.columns == ("A", "n") and ds.count_column is None


def test_zero_counts_leave_no_pattern(tmp_path):
    ds = load_csv(write(tmp_path, "A,B,count\nx,1,0\ny,2,3\nx,2,1\n"))
    assert ds.n_rows == 4 and ds.n_patterns == 2


def test_compresses_243000_rows_quickly(tmp_path):
    rng = np.random.default_rng(0)
    codes = rng.integers(0, 2, size=(243_000, 5))
    frame = pd.DataFrame(np.where(codes == 1, "yes", "no"), columns=list("ABCDE"))
    path = tmp_path / "big.csv"
    frame.to_csv(path, index=False)
    load_csv(path)  # warm up imports and caches
    # CPU seconds of this process: the other tests running meanwhile do not count, so it need not run alone
    start = time.process_time()
    ds = load_csv(path)
    elapsed = time.process_time() - start
    assert ds.n_rows == 243_000 and ds.n_patterns == 32
    assert elapsed < 2.0, f"loading took {elapsed:.2f} s of CPU"  # ~0.1 s measured; slack for slow CPUs
    four = ds.subset(["A", "B", "C", "D"])
    assert four.n_patterns <= 16 and four.n_rows == 243_000
    four_csv = tmp_path / "four.csv"
    frame[list("ABCD")].to_csv(four_csv, index=False)
    assert load_csv(four_csv).n_patterns <= 16


@settings(max_examples=30, deadline=None)
@given(
    st.integers(0, 2**32 - 1),
    st.integers(2, 4),
    st.integers(2, 5),
)
def test_relabelling_values_permutes_patterns(seed, n_columns, n_states):
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, n_states, size=(60, n_columns))
    codes[:, :] = np.where(rng.random(codes.shape) < 0.1, -1, codes)
    for j in range(n_columns):  # every state present at least once
        codes[:n_states, j] = np.arange(n_states)
    labels_a = [f"s{i}" for i in range(n_states)]
    labels_b = [f"t{p}" for p in rng.permutation(n_states)]  # relabelled, different sort order

    def text(labels):
        lines = [",".join(f"C{j}" for j in range(n_columns))]
        lines += [",".join("NA" if c < 0 else labels[c] for c in row) for row in codes]
        return "\n".join(lines) + "\n"

    a = load_csv(io.StringIO(text(labels_a)))
    b = load_csv(io.StringIO(text(labels_b)))
    rename = dict(zip(labels_b, labels_a))
    counter_b = {tuple(None if v is None else rename[v] for v in k): c for k, c in as_counter(b).items()}
    assert counter_b == as_counter(a)
    assert a.n_patterns == b.n_patterns and a.n_missing == b.n_missing == int((codes < 0).sum())


# ------------------------------------------------------------------ bad input
BAD_FILES = [
    ("empty", b"", r"empty"),
    ("only blank lines", b"\n  \n\n", r"empty"),
    ("no data rows", b"A,B\n", r"no data rows"),
    ("one column", b"A\nx\ny\n", r"only 1 column"),
    ("other separator", b"A|B\n1|2\n2|1\n", r"is the separator '\|'"),
    (
        "one data column plus counts",
        b"A,count\nx,1\ny,2\n",
        r"fewer than two data columns \('A', plus counts in 'count'\)",
    ),
    ("ragged short", b"A,B,C\n1,2,3\n\n1,2\n", r"line 4 has 2 fields, expected 3"),
    ("ragged long", b"A,B\n1,2\n1,2,3\n2,1\n", r"line 3 has 3 fields, expected 2"),
    ("ragged quoted", b'A,B\n"x\ny",1\n1\n', r"line 4 has 1 field, expected 2"),
    ("ragged after quoted line break", b'A,B\n"x\n\ny",1\n"d",2,3\n', r"line 5 has 3 fields, expected 2"),
    ("unterminated quote", b'A,B\n1,2\n"x",""\n"y,1\n', r"line 4: a quoted field is never closed"),
    ("binary", b"A,B\n\x00\x01,2\n", r"NUL byte at offset 4, line 2"),
    ("single state", b"A,B\nx,1\nx,2\n", r"column 'A' has a single value 'x'"),
    ("all missing", b"A,B\nNA,1\n?,2\n", r"column 'A' has no values"),
    ("duplicate name", b"A,B,A\n1,2,3\n2,1,3\n", r"duplicate column name 'A' \(columns 1 and 3\)"),
    ("headerless", b"0,1,0\n1,1,0\n", r"duplicate column name '0'.*lack a header"),
    ("empty name", b"A,,B\n1,2,3\n2,1,3\n", r"column 2 has no name"),
    ("negative count", b"A,B,count\nx,1,2\ny,2,-1\n", r"line 3: count '-1' in column 'count' is negative"),
    (
        "non-numeric count",
        b"A,B,count\nx,1,2\ny,2,3\n\nx,2,lots\n",
        r"line 5: count 'lots' in column 'count' is not a number",
    ),
    ("missing count", b"A,B,weight\nx,1,2\ny,2,\n", r"line 3: count '' in column 'weight' is not a number"),
    ("all counts zero", b"A,B,count\nx,1,0\ny,2,0\n", r"every count in 'count' is 0"),
    ("two count columns", b"A,B,count,freq\nx,1,1,1\ny,2,2,2\n", r"several columns could hold the counts"),
]


@pytest.mark.parametrize("content,pattern", [c[1:] for c in BAD_FILES], ids=[c[0] for c in BAD_FILES])
def test_rejects_bad_files_naming_the_culprit(tmp_path, content, pattern):
    path = write(tmp_path, content, "bad.csv")
    with pytest.raises(DataError, match=pattern) as info:
        load_csv(path)
    assert "bad.csv" in str(info.value)


def test_rejects_too_many_states(tmp_path):
    rows = "\n".join(f"{i * 0.37:.2f},{i % 2}" for i in range(60))
    with pytest.raises(
        DataError, match=r"column 'X' has more than 50 distinct values \(e.g. '0.00', .*probably continuous"
    ):
        load_csv(write(tmp_path, "X,Y\n" + rows + "\n"))
    assert load_csv(write(tmp_path, "X,Y\n" + rows + "\n"), limits=ReadLimits(max_states=100)).cardinalities == (60, 2)


def test_rejects_large_files(tmp_path):
    path = write(tmp_path, "A,B\n" + "x,1\ny,2\n" * 100)
    with pytest.raises(DataError, match=r"larger than the limit of 100 bytes \(804 bytes\)"):
        load_csv(path, limits=ReadLimits(max_bytes=100))
    with pytest.raises(DataError, match=r"larger than the limit of 100 bytes"):
        load_csv(io.BytesIO(path.read_bytes()), limits=ReadLimits(max_bytes=100))


def test_explicit_count_column_errors(tmp_path):
    path = write(tmp_path, "A,B,n\nx,1,yes\ny,2,no\n")
    with pytest.raises(DataError, match=r"line 2: count 'yes' in column 'n' is not a number"):
        load_csv(path, count_column="n")
    with pytest.raises(DataError, match=r"count column 'w' not found; columns are A, B, n"):
        load_csv(path, count_column="w")


def test_missing_file(tmp_path):
    with pytest.raises(DataError, match="cannot read"):
        load_csv(tmp_path / "nope.csv")


# ----------------------------------------------------------------- from_frame
def test_from_frame_handles_nan_and_categoricals():
    df = pd.DataFrame(
        {
            "size": pd.Categorical(["low", "high", "mid", "low"], categories=["low", "mid", "high"], ordered=True),
            "flag": [1.0, np.nan, 2.0, 1.0],
            "answer": ["b", "a", None, "b"],
        }
    )
    ds = from_frame(df)
    assert ds.states == (("low", "mid", "high"), (1, 2), ("b", "a"))  # "b" comes first
    assert ds.n_missing == 2
    assert as_counter(ds)[("low", 1, "b")] == 2


def test_from_frame_names_rows_by_index():
    df = pd.DataFrame({"A": ["x", "y"], "B": [1, 2], "count": [3, -1]}, index=["r1", "r2"])
    with pytest.raises(DataError, match=r"row 2 \(index 'r2'\): count -1"):
        from_frame(df, count_column="count")


# --------------------------------------------------------------- from_patterns
def test_from_patterns_merges_and_keeps_declared_states():
    ds = from_patterns([[0, 1], [0, 1], [1, -1]], counts=[1, 2, 0.5], cardinalities=[3, 2])
    assert ds.columns == ("O1", "O2")
    assert ds.states == ((0, 1, 2), (0, 1))
    assert ds.n_rows == 3.5 and ds.n_missing == 0.5
    assert as_counter(ds) == {(0, 1): 3.0, (1, None): 0.5}
    with pytest.raises(DataError, match="row 2: count -1"):
        from_patterns([[0, 1], [1, 0]], counts=[1, -1])
    with pytest.raises(DataError, match="out of range"):
        from_patterns([[0, 2]], cardinalities=[2, 2])


def test_dataset_is_immutable_and_validated():
    ds = from_patterns([[0, 1], [1, 0]])
    with pytest.raises(ValueError):
        ds.patterns[0, 0] = 1
    with pytest.raises(AttributeError):  # a frozen dataclass
        ds.n_rows = 3
    with pytest.raises(DataError, match="positive"):
        Dataset(("a", "b"), ((0, 1), (0, 1)), np.array([[0, 1]]), np.array([0.0]), 0.0, 0)
    with pytest.raises(DataError, match="n_rows"):
        Dataset(("a", "b"), ((0, 1), (0, 1)), np.array([[0, 1]]), np.array([2.0]), 3.0, 0)


def test_decode_and_subset():
    ds = load_csv(STOUFFER)
    assert ds.decode("A", 0) == "+" and ds.decode(1, 1) == "-" and ds.decode("C", -1) is None
    with pytest.raises(DataError, match="no column named 'Z'"):
        ds.decode("Z", 0)
    sub = ds.subset(["D", "A"])
    assert sub.columns == ("D", "A") and sub.n_patterns == 4 and sub.n_rows == 216
    total_minus_minus = sum(c for k, c in as_counter(ds).items() if k[0] == "-" and k[3] == "-")
    assert as_counter(sub)[("-", "-")] == total_minus_minus


# ------------------------------------------------------------- model matching
def test_match_by_name_reorders_and_drops_columns():
    ds = load_csv(STOUFFER)
    model = HLCModel.parse("X:2(D:2,B:2,A:2)")
    matched = check_matches_model(ds, model)
    assert matched.columns == ("D", "B", "A") == tuple(model.observed)
    assert matched.n_rows == 216 and matched.n_patterns == 8


def test_match_positionally_for_default_names():
    ds = load_csv(STOUFFER)
    model = HLCModel.parse("3:2,2,2,2")
    matched = check_matches_model(ds, model)
    assert matched.columns == ("O1", "O2", "O3", "O4")
    assert matched.states == ds.states
    np.testing.assert_array_equal(matched.patterns, ds.patterns)
    assert resolve_mapping(ds, model) == {"O1": "A", "O2": "B", "O3": "C", "O4": "D"}
    # positional mapping follows the leaf numbers, not the pre-order of a re-rooted tree
    tree = HLCModel.parse("2(2(2,2),2(2,2))")
    rerooted = tree.rerooted("H3")
    assert resolve_mapping(ds, rerooted)["O1"] == "A"


def test_match_with_mapping_and_errors():
    ds = load_csv(STOUFFER)
    model = HLCModel.parse("2:2,2,2")
    with pytest.raises(DataError, match=r"leaves 'O1', 'O2', 'O3' name no data column.*4 columns") as info:
        check_matches_model(ds, model)
    assert str(info.value).endswith("name the leaves after the columns, or pass mapping={leaf: column}")
    assert "--map" not in str(info.value)  # a CLI option means nothing in Python (the CLI says its own)
    matched = check_matches_model(ds, model, mapping={"O1": "C", "O2": "A", "O3": "B"})
    assert matched.columns == ("O1", "O2", "O3") and matched.n_patterns == 8
    with pytest.raises(DataError, match=r"column 'A' is mapped to two leaves"):
        check_matches_model(ds, model, mapping={"O1": "A", "O2": "A", "O3": "B"})
    with pytest.raises(DataError, match=r"no column for leaves 'O3'"):
        check_matches_model(ds, model, mapping={"O1": "A", "O2": "B"})
    with pytest.raises(DataError, match=r"no column named 'Q'"):
        check_matches_model(ds, model, mapping={"O1": "A", "O2": "B", "O3": "Q"})


def test_match_cardinalities():
    ds = from_frame(pd.DataFrame({"A": [1, 2, 3, 1], "B": ["x", "y", "x", "y"]}))
    with pytest.raises(DataError, match=r"column 'A' has 3 states but leaf 'A' has cardinality 2"):
        check_matches_model(ds, HLCModel.parse("H:2(A:2,B:2)"))
    # fewer data states than the leaf is fine: the extra state did not occur
    matched = check_matches_model(ds, HLCModel.parse("H:2(A:4,B:2)"))
    assert matched.cardinalities == (3, 2)


# ------------------------------------------------------------ bundled data sets
def test_bundled_datasets_load_with_provenance():
    assert datasets.names() == [
        "carcinoma",
        "cheating",
        "election",
        "gss82",
        "hlc-figure2",
        "lc-8-2222",
        "stouffer-toby",
    ]
    assert datasets.DEFAULT in datasets.names()
    for name in datasets.names():
        ds = datasets.load(name)
        entry = datasets.info(name)
        assert ds.source == name and entry.references and entry.description
        if entry.model:
            model = HLCModel.parse(entry.model)
            assert ds.n_rows == 10_000
            matched = check_matches_model(ds, model)
            assert matched.columns == tuple(model.observed)
    st_ = datasets.load("stouffer-toby")
    ref = load_csv(STOUFFER)
    np.testing.assert_array_equal(st_.patterns, ref.patterns)
    np.testing.assert_array_equal(st_.counts, ref.counts)
    with pytest.raises(ValueError, match="unknown data set 'nope'"):
        datasets.load("nope")


def test_bundled_polca_data_as_polca_has_them():
    """poLCA's election and cheating: one row per respondent, the covariates kept (AGE's 79 values too)."""
    election = datasets.load("election")
    assert election.n_rows == 1785 and election.rows is not None
    assert set(datasets.info("election").items) < set(election.columns)
    assert election.states[0] == ("1 Extremely well", "2 Quite well", "3 Not too well", "4 Not well at all")
    age = election.states[election.index("AGE")]
    assert len(age) == 79 and min(age) == 18 and max(age) == 97
    cheating = datasets.load("cheating")
    assert cheating.n_rows == 319 and cheating.states[cheating.index("GPA")] == (1, 2, 3, 4, 5)
    assert cheating.n_missing == 4


def test_bundled_polca_tables_are_the_test_tables_and_carcinoma_chooses_a_model_whose_de_is_below_ds():
    """carcinoma and gss82 as the tests' tables; on carcinoma, the tree its docstring names beats the best LC
    model (3 classes) by BIC+ and has de < ds, while BIC, penalising ds, prefers the LC model."""
    from effdim import fit

    for name in ("carcinoma", "gss82"):
        bundled, table = datasets.load(name), load_csv(Path(__file__).parent / "data" / f"{name}.csv")
        assert bundled.states == table.states and bundled.n_rows == table.n_rows
        assert sorted(map(tuple, bundled.to_frame().to_numpy().tolist())) == sorted(
            map(tuple, table.to_frame().to_numpy().tolist())
        )
    data = datasets.load("carcinoma")
    tree = fit(data, "H1:2(A:2,C:2,D:2,F:2,H2:2(G:2,H3:3(B:2,E:2)))", seed=0, warn=False)
    lc = fit(data, "3:2,2,2,2,2,2,2", seed=0, warn=False)
    assert (tree.de, tree.ds) == (19, 23) and not tree.unique
    assert tree.score("bic+") > lc.score("bic+") and tree.score("bic") < lc.score("bic")
    assert datasets.load("gss82").states[0] == ("Good", "Depends", "Waste of time")


def test_the_fit_commands_help_names_every_bundled_data_set(monkeypatch):
    from effdim.cli.parser import build_parser

    monkeypatch.setenv("COLUMNS", "1000")  # one line per option: no name broken at its hyphen
    fit_help = build_parser()._subparsers._group_actions[0].choices["fit"].format_help()
    assert all(name in " ".join(fit_help.split()) for name in datasets.names())
