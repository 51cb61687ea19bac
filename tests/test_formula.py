"""Covariate formulas (effdim.formula): the terms R would make, the design R's model.matrix would build, and a
clear FormulaError (never another exception) for any text or data."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from effdim.formula import INTERCEPT, FormulaError, design_matrix, parse_formula
from effdim.limits import MAX_DESIGN_COLUMNS


def terms(text):
    return [str(t) for t in parse_formula(text).terms]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("PARTY", ["PARTY"]),
        ("~ PARTY + AGE", ["PARTY", "AGE"]),
        ("PARTY * AGE", ["PARTY", "AGE", "PARTY:AGE"]),
        ("A*B*C", ["A", "B", "C", "A:B", "A:C", "B:C", "A:B:C"]),
        ("A:B + C", ["C", "A:B"]),  # R orders terms by their number of factors
        ("(A + B):C", ["A:C", "B:C"]),
        ("A + A + B:A", ["A", "A:B"]),  # each term once, factors in order of first appearance
        ("A:A", ["A"]),
        ("C(GPA) + AGE", ["C(GPA)", "AGE"]),
        ("`my col` * x", ["`my col`", "x", "`my col`:x"]),
        ("C", ["C"]),  # a column named C is a column, not the function
    ],
)
def test_terms_as_r_expands_them(text, expected):
    assert terms(text) == expected


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("", "no covariate is named"),
        ("PARTY +", "a column name is missing at the end, after '+'"),
        ("A ++ B", "at '+' (character 4)"),
        ("y ~ A", "give the covariates only, right of '~'"),
        ("A - B", "'-' at character 3 is not supported"),
        ("A + 1", "the intercept is always in the model"),
        ("log(AGE)", "log(...) at character 1 is not a formula function"),
        ("C(A", "C( takes one column name and a ')'"),
        ("C()", "C( needs one column name inside"),
        ("(A + B", "a ')' is missing at the end"),
        ("A B", "'B' (character 3) cannot follow here; join terms with '+'"),
        ("A + C(A)", "A is written both as a number and as categories C(A)"),
        ("`open", "the backquote at character 1 is never closed"),
    ],
)
def test_syntax_errors_say_where(text, says):
    with pytest.raises(FormulaError) as err:
        parse_formula(text)
    assert says in str(err.value)


def test_design_of_an_interaction_is_every_product():
    values = {"G": ["b", "a", "c", "a", "b", "c", None], "X": [1.0, 2.5, 3.0, 4.0, 5.0, 6.5, 7.0]}
    d = design_matrix("G*X", values)
    assert d.names == (INTERCEPT, "G[b]", "G[c]", "X", "G[b]:X", "G[c]:X")
    assert d.references == {"G": "a"} and d.levels == {"G": ("a", "b", "c")}
    assert d.kept.tolist() == [True] * 6 + [False] and d.n_dropped == 1
    g_b, g_c, x = d.matrix[:, 1], d.matrix[:, 2], d.matrix[:, 3]
    assert g_b.tolist() == [1, 0, 0, 0, 1, 0] and g_c.tolist() == [0, 0, 1, 0, 0, 1]
    assert np.array_equal(d.matrix[:, 4], g_b * x) and np.array_equal(d.matrix[:, 5], g_c * x)
    assert [None if t is None else str(t) for t in d.term_of] == [None, "G", "G", "X", "G:X", "G:X"]


def test_numbers_enter_as_numbers_unless_categorical():
    values = {"P": [1, 2, 3, 1, 7]}
    assert design_matrix("P", values).names == (INTERCEPT, "P")
    categorical = design_matrix("C(P)", values)
    assert categorical.names == (INTERCEPT, "P[2]", "P[3]", "P[7]")
    # given levels set the reference (the data's first category)
    again = design_matrix("C(P)", values, levels={"P": [7, 3, 2, 1]})
    assert again.names == (INTERCEPT, "P[3]", "P[2]", "P[1]") and again.references == {"P": 7}


def test_missing_values_leave_rows_out():
    d = design_matrix("A + B", {"A": [1.0, np.nan, 3.0, 4.0, 2.0], "B": ["x", "y", None, "x", "y"]})
    assert d.kept.tolist() == [True, False, False, True, True]
    assert d.matrix.shape == (3, 3)


@pytest.mark.parametrize(
    ("text", "values", "says"),
    [
        ("AGEE", {"AGE": [1, 2]}, "no column named 'AGEE' for the covariates; columns left out: AGE"),
        ("G", {"G": [1, 1, 1, None]}, "covariate 'G' has the single value 1 in the rows used"),
        ("C(G)", {"G": ["x", "x"]}, "covariate 'G' has a single category (x)"),
        ("A + B", {"A": [1, 2, 3], "B": [2.0, 4.0, 6.0]}, "the design column B is a combination"),
        ("A*B", {"A": [1, 2, 3], "B": [0, 1, 2.5]}, "only 3 rows have every covariate"),
        ("C(ID)", {"ID": list(range(MAX_DESIGN_COLUMNS + 5))}, "has 205 categories"),
        ("A", {"A": [None, None]}, "every row has a missing covariate"),
    ],
)
def test_data_errors_name_the_culprit(text, values, says):
    with pytest.raises(FormulaError) as err:
        design_matrix(text, values)
    assert says in str(err.value)


def test_a_model_item_named_as_covariate_is_refused_in_those_words():
    with pytest.raises(FormulaError, match="covariate 'A' is an item of the model"):
        design_matrix("A", {"B": [1, 2]}, items=["A"])


def test_collinearity_counts_only_rows_with_weight():
    values = {"A": [1.0, 2.0, 3.0, 4.0], "B": [2.0, 4.0, 6.0, 0.0]}
    design_matrix("A + B", values)  # independent over all four rows
    with pytest.raises(FormulaError, match="combination"):
        design_matrix("A + B", values, weights=np.array([1.0, 1.0, 1.0, 0.0]))


_PIECES = st.sampled_from(["A", "B", "C", "`a b`", "C(A)", "C(B)", "+", "*", ":", "(", ")", "~", " ", "-", "1", "`"])


@given(st.one_of(st.lists(_PIECES, max_size=12).map("".join), st.text(max_size=30)))
def test_any_text_parses_or_says_why(text):
    try:
        formula = parse_formula(text)
    except FormulaError as err:
        assert str(err) and "\n" not in str(err)
        return
    assert formula.terms
    assert parse_formula(str(formula)).terms == formula.terms  # what it prints parses back to itself


_CELLS = st.one_of(
    st.none(), st.integers(-3, 3), st.floats(allow_nan=True, allow_infinity=True), st.sampled_from("xyz")
)


@given(
    st.lists(st.tuples(_CELLS, _CELLS), min_size=0, max_size=12), st.sampled_from(["A", "A*B", "C(A):B", "B + C(B)"])
)
def test_any_data_makes_a_design_or_says_why(rows, text):
    values = {"A": [r[0] for r in rows], "B": [r[1] for r in rows]}
    try:
        d = design_matrix(text, values)
    except FormulaError as err:
        assert str(err) and "\n" not in str(err)
        return
    assert d.matrix.shape == (int(d.kept.sum()), len(d.names))
    assert np.isfinite(d.matrix).all() and (d.matrix[:, 0] == 1).all()
