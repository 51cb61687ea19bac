"""ds, dc, dp, db of LC models (Theorems 3-4) against Table 1 and brute force."""

import itertools
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from effdim import parse_model
from effdim.bounds import best_split, complete_dimension, lc_bounds, pairwise_bound, standard_dimension

# Table 1 of the paper: model, de, db, ds, dc, dp ("dc" when no split qualifies)
TABLE1 = [
    ("2:2,2", 3, 3, 5, 3, "dc"),
    ("2:2,2,2", 7, 7, 7, 7, "dc"),
    ("3:2,2,2", 7, 7, 11, 7, "dc"),
    ("4:2,2,2", 7, 7, 15, 7, "dc"),
    ("2:3,3", 7, 7, 9, 8, 7),
    ("2:3,3,3", 13, 13, 13, 26, 19),
    ("3:3,3,3", 20, 20, 20, 26, "dc"),
    ("3:4,5", 17, 17, 23, 19, 17),
    ("4:3,3,3", 25, 26, 27, 26, "dc"),
    ("5:3,3,3", 26, 26, 34, 26, "dc"),
    ("6:3,3,3", 26, 26, 41, 26, "dc"),
    ("2:2,2,2,2", 9, 9, 9, 15, 11),
    ("3:2,2,2,2", 13, 14, 14, 15, 14),
    ("4:2,2,2,2", 15, 15, 19, 15, "dc"),
    ("5:2,2,2,2", 15, 15, 24, 15, "dc"),
    ("6:2,2,2,2", 15, 15, 29, 15, "dc"),
    ("3:5,2,2", 17, 17, 20, 19, 17),
    ("3:4,2,2", 14, 14, 17, 15, 14),
    ("5:3,3,2", 17, 17, 29, 17, "dc"),
    ("5:6,3,2", 34, 34, 44, 35, 34),
    ("5:10,3,2", 54, 54, 64, 59, 54),
]


@pytest.mark.parametrize("notation, de, db, ds, dc, dp", TABLE1)
def test_table1_bounds(notation, de, db, ds, dc, dp):
    bounds = lc_bounds(parse_model(notation))
    assert (bounds.ds, bounds.dc, bounds.db) == (ds, dc, db)
    if dp == "dc":
        assert bounds.dp_is_dc and bounds.dp == dc
    else:
        assert bounds.dp == dp and not bounds.dp_is_dc
    assert getattr(bounds, bounds.binding) == bounds.db


def test_ds_and_dc_of_figure2():
    model = parse_model("5(3(2,2),2,3(2,2))")
    assert standard_dimension(model) == 41
    assert complete_dimension(model) == 31


def _brute_dp(r, cards):
    n, total = len(cards), math.prod(cards)
    best = total - 1
    for k in range(1, n):
        for side in itertools.combinations(range(n), k):
            a = math.prod(cards[i] for i in side)
            b = total // a
            if r < min(a, b):
                best = min(best, r * (a + b - r) - 1)
    return best


@given(st.integers(1, 12), st.lists(st.sampled_from([2, 2, 3, 4, 5, 6, 8, 9, 10, 12, 16]), min_size=1, max_size=9))
def test_dp_equals_brute_force_over_all_splits(r, cards):
    assert pairwise_bound(r, cards).dp == _brute_dp(r, cards)


@given(st.lists(st.integers(2, 30), min_size=2, max_size=9))
def test_best_split_names_a_subset_with_that_product(cards):
    a, side = best_split(cards)
    assert 0 < len(side) < len(cards)
    assert math.prod(cards[i] for i in side) == a <= math.isqrt(math.prod(cards))


def test_two_hundred_mixed_variables_need_no_enumeration():
    cards = [2, 3, 4, 5] * 50
    bound = pairwise_bound(10, cards)
    assert bound.exact
    assert bound.lower <= bound.dp < complete_dimension(parse_model("10:" + ",".join(map(str, cards))))


def test_heuristic_split_is_still_a_valid_bound():
    cards = list(range(2, 11)) * 22
    bound = pairwise_bound(10, cards)
    assert bound.lower <= bound.dp
    if not bound.exact:
        assert bound.split is not None
