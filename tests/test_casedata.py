"""Data with covariates and sampling weights (effdim.casedata): rows merged on answers, covariates and weight
together, rows with a missing covariate or weight left out and counted, weights rescaled to the rows used,
every refusal naming the column."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from effdim import datasets, parse_model
from effdim.casedata import arrange
from effdim.data import DataError, from_frame
from effdim.formula import FormulaError

MODEL = parse_model("X:2:a:2,b:2")


def frame(**extra):
    base = {"a": [1, 2, 1, 2, 1, 2, 1, 1], "b": ["x", "y", "x", "x", "y", "y", None, "x"]}
    base.update(extra)
    return from_frame(pd.DataFrame(base))


def test_patterns_keep_covariates_apart_and_missing_covariates_are_counted():
    data = frame(age=[20.0, 30.0, 20.0, 40.0, None, 30.0, 50.0, 20.0])
    case = arrange(data, MODEL, covariates="age")
    assert case.n_input == 8 and case.n_dropped_covariates == 1 and case.n_rows == 7
    # rows 0, 2 and 7 share answers and age, and rows 1 and 5; row 3 has row 5's answers at another age
    assert sorted(case.data.counts.tolist()) == [1, 1, 2, 3]
    assert case.design.names == ("(Intercept)", "age")
    assert case.data.columns == ("a", "b") and case.data.n_missing == 1  # the missing answer stays
    assert case.pattern_of_row[4] == -1 and (case.pattern_of_row[[0, 2, 7]] == case.pattern_of_row[0]).all()
    np.testing.assert_array_equal(case.squares, case.data.counts)  # no weights: squares are counts


def test_weights_are_rescaled_to_the_rows_used():
    data = frame(w=[2.0, 1.0, 2.0, 1.0, 0.0, 1.0, None, 1.0])
    case = arrange(data, MODEL, weights="w")
    assert case.n_dropped_weights == 2 and case.n_rows == 6  # a missing weight and a weight of 0
    raw = np.array([2.0, 1.0, 2.0, 1.0, 1.0, 1.0])
    scale = 6 / raw.sum()
    assert np.isclose(case.data.counts.sum(), 6)
    assert np.isclose(case.squares.sum(), np.sum((raw * scale) ** 2))


@pytest.mark.parametrize(
    ("kwargs", "error", "says"),
    [
        ({"covariates": "a"}, FormulaError, "covariate 'a' is an item of the model"),
        ({"covariates": "agee"}, FormulaError, "no column named 'agee' for the covariates; columns left out: w"),
        ({"weights": "a"}, DataError, "the weight column 'a' is an item of the model"),
        ({"weights": "nope"}, DataError, "no column named 'nope'"),
        ({"weights": "w", "covariates": "w"}, DataError, "both a covariate and the weights"),
    ],
)
def test_refusals_name_the_column(kwargs, error, says):
    data = frame(w=[1.0] * 7 + [2.0])
    with pytest.raises(error, match=says):
        arrange(data, MODEL, **kwargs)


@pytest.mark.parametrize(
    ("values", "says"), [(["x"] * 7 + ["2"], "'x' is not a number"), ([1.0] * 7 + [-1.0], "negative")]
)
def test_bad_weights_are_refused(values, says):
    with pytest.raises(DataError, match=f"weight column 'w': .*{says}"):
        arrange(frame(w=values), MODEL, weights="w")


@given(st.lists(st.one_of(st.none(), st.floats(-2, 5), st.sampled_from(["x", "1e9"])), min_size=8, max_size=8))
def test_any_weight_column_arranges_or_says_why(weights):
    try:
        data = frame(w=weights)
    except DataError:
        return  # a column with a single value, refused by the reader
    try:
        case = arrange(data, MODEL, weights="w")
    except DataError as err:
        assert "weight" in str(err) or "no row" in str(err)
        return
    assert np.isclose(case.data.counts.sum(), case.n_rows) and np.all(case.data.counts > 0)


def test_polca_election_rows_as_polca_uses_them():
    data = datasets.load("election")
    items = datasets.info("election").items
    model = parse_model("X:3:" + ",".join(f"{c}:4" for c in items))
    assert arrange(data, model, covariates="PARTY").n_rows == 1760  # poLCA's N: 25 rows without PARTY
    assert arrange(data, model, covariates="PARTY*AGE").n_rows == 1752
