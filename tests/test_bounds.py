"""ds, dc, dp, db of LC models (Theorems 3-4) against Table 1 and brute force."""

import itertools
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from effdim import parse_model
from effdim.bounds import best_split, complete_dimension, lc_bounds, pairwise_bound, standard_dimension
from effdim.paper import FIGURE2, TABLE1


@pytest.mark.parametrize("notation, de, db, ds, dc, dp", TABLE1)
def test_table1_bounds(notation, de, db, ds, dc, dp):
    bounds = lc_bounds(parse_model(notation))
    assert (bounds.ds, bounds.dc, bounds.db) == (ds, dc, db)
    if dp is None:  # the table writes "dc": no split qualifies
        assert bounds.dp_is_dc and bounds.dp == dc
    else:
        assert bounds.dp == dp and not bounds.dp_is_dc
    assert getattr(bounds, bounds.binding) == bounds.db


def test_ds_and_dc_of_figure2():
    model = parse_model(FIGURE2.model)
    assert standard_dimension(model) == FIGURE2.ds
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
