"""Columns read with every value they have (``unlimited``): a distal outcome, a covariate or a weight
that is a number with more distinct values than a category column may have."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from effdim import ReadLimits
from effdim.data import DataError, from_frame
from effdim.reading import read_data


def _frame(n: int = 120) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame(
        {
            "item": rng.choice(["yes", "no"], n),
            "other": rng.choice(["a", "b", "c"], n),
            "Age": np.arange(n) % 80 + 18.5,
        }
    )


def test_a_column_with_many_values_is_refused_unless_named():
    raw = _frame().to_csv(index=False).encode()
    with pytest.raises(DataError, match="'Age' has more than 50 distinct values"):
        read_data(raw, name="ages.csv")
    data = read_data(raw, name="ages.csv", limits=ReadLimits(unlimited=["Age"])).dataset
    ages = data.states[data.index("Age")]
    assert len(ages) == 80 and ages[:2] == (18.5, 19.5)
    # the other columns keep the limit
    with pytest.raises(DataError, match="'other' has more than 2 distinct values"):
        read_data(raw, name="ages.csv", limits=ReadLimits(unlimited=["Age"], max_states=2))


def test_a_named_column_is_not_dropped_with_the_wide_ones():
    raw = _frame().to_csv(index=False).encode()
    loaded = read_data(raw, name="ages.csv", limits=ReadLimits(too_many_states="drop"))
    assert [name for name, _ in loaded.dropped] == ["Age"]
    kept = read_data(raw, name="ages.csv", limits=ReadLimits(too_many_states="drop", unlimited=["Age"]))
    assert kept.dropped == () and "Age" in kept.dataset.columns


@pytest.mark.parametrize("suffix", [".xlsx", ".parquet"])
def test_other_formats_read_a_named_column_whole(tmp_path, suffix):
    path = tmp_path / f"ages{suffix}"
    frame = _frame()
    frame.to_excel(path, index=False) if suffix == ".xlsx" else frame.to_parquet(path, index=False)
    with pytest.raises(DataError, match="'Age' has more than 50"):
        read_data(path)
    assert len(read_data(path, limits=ReadLimits(unlimited=["Age"])).dataset.states[2]) == 80
    assert "Age" not in read_data(path, limits=ReadLimits(too_many_states="drop")).dataset.columns


def test_a_data_frame_reads_a_named_column_whole():
    with pytest.raises(DataError, match="'Age' has more than 50"):
        from_frame(_frame())
    assert from_frame(_frame(), unlimited=["Age"]).cardinalities == (2, 3, 80)
