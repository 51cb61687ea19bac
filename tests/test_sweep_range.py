"""The range a sweep fits unless told (effdim.search.sweep_range: 1 up to DEFAULT_MAX_CARD, within the largest
regular cardinality, stopping at saturation), one rule for every face; and what a sweep stopped part way has."""

from __future__ import annotations

import threading

import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import hlc_models

from effdim import datasets, parse_model, sweep
from effdim.regularity import largest_regular_card
from effdim.search import DEFAULT_MAX_CARD, Cancelled, sweep_range


@given(hlc_models(max_hidden=3, max_card=4), st.integers(1, 12), st.integers(1, 12), st.data())
def test_the_range_runs_from_its_low_end_to_the_smallest_of_its_caps(model, top, low, data):
    node = data.draw(st.sampled_from(model.hidden))
    regular = largest_regular_card(model, node)
    assert sweep_range(model, node, max_card=top, min_card=low) == list(range(low, min(top, regular) + 1))
    assert sweep_range(model, node) == list(range(1, min(DEFAULT_MAX_CARD, regular) + 1))


def test_a_questionnaire_of_six_three_answer_items_sweeps_a_class_enumeration_not_243_cardinalities():
    model = parse_model("1:3,3,3,3,3,3")
    assert largest_regular_card(model, model.root) == 243
    assert sweep_range(model) == list(range(1, DEFAULT_MAX_CARD + 1))
    with pytest.raises(ValueError, match="the largest cardinality"):
        sweep_range(model, max_card=0)


def test_the_default_sweep_stops_at_saturation_and_given_cardinalities_are_all_fitted():
    data = datasets.load("stouffer-toby")  # four binary items: |X| = 4 first saturates them
    assert [f.card for f in sweep(data, restarts=1, seed=0)] == [1, 2, 3, 4]
    assert [f.card for f in sweep(data, cards=[3, 4, 5], restarts=1, seed=0)] == [3, 4, 5]
    assert [f.card for f in sweep(data, max_card=5, until_saturated=False, restarts=1, seed=0)] == [1, 2, 3, 4, 5]


def test_a_sweep_hands_out_each_fit_as_it_finishes_and_a_cancelled_one_keeps_them():
    data = datasets.load("stouffer-toby")
    handed, stop = [], threading.Event()

    class Progress:  # the job workers' protocol: called with counts, handed each fit
        def __call__(self, done, total):
            pass

        def partial(self, fit):
            handed.append(fit.card)
            if fit.card == 2:
                stop.set()

    with pytest.raises(Cancelled) as stopped:
        sweep(data, max_card=6, restarts=1, seed=0, progress=Progress(), cancel=stop)
    assert handed == [1, 2]
    assert [f.card for f in stopped.value.partial] == [1, 2]
    again = sweep(data, cards=[1, 2], restarts=1, seed=0)
    assert [f.loglik for f in stopped.value.partial] == [f.loglik for f in again]
