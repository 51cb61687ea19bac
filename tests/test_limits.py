"""Size limits: every Jacobian is sized before it is allocated; the closed forms stay available."""

from __future__ import annotations

import resource
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from effdim import HLCModel, parse_model
from effdim.bounds import complete_dimension, lc_bounds, standard_dimension
from effdim.dimensions import bounds_report, dimensions, dimensions_cost
from effdim.limits import SizeLimitError, format_bytes
from effdim.rank import effective_dimension, modular_rank, rank_cost

HUGE = ["3:1000000000,2", "1000000000:2,2", "3:100000,2", "61:50,50,50"]


@pytest.mark.parametrize("text", HUGE)
def test_huge_models_are_refused_in_plain_words_before_allocating(text):
    model = parse_model(text)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(SizeLimitError) as info:
        dimensions(model, max_bytes=512 * 1024**2)
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    message = str(info.value)
    assert "matrix" in message and "more than the limit of 512.0 MiB" in message
    assert "rows=" not in message and "sketch" not in message  # no library option names
    assert info.value.needed > info.value.limit == 512 * 1024**2
    assert grown_kib < 100_000  # nothing big was allocated


def test_the_limit_is_checked_by_every_rank_entry_point():
    model = HLCModel.lc(3, [100_000, 2])
    for call in (lambda: modular_rank(model, 0), lambda: effective_dimension(model)):
        with pytest.raises(SizeLimitError):
            call()


def test_a_model_within_the_limit_is_computed():
    model = parse_model("5(3(2,2),2,3(2,2))")
    peak, work = dimensions_cost(model)
    assert 0 < peak < 1024**2 and work > 0
    assert dimensions(model, max_bytes=peak).de == 23


def test_cost_grows_with_the_model():
    small, big = rank_cost(parse_model("3:5,5,5")), rank_cost(parse_model("6:5,5,5"))
    assert big.bytes > small.bytes and big.work > small.work
    assert rank_cost(parse_model("3:5,5,5")).columns == standard_dimension(parse_model("3:5,5,5"))


def test_measured_peak_memory_stays_under_the_estimate():
    """The estimate of rank_cost bounds the real peak (tracemalloc, in a fresh process)."""
    code = (
        "import tracemalloc; from effdim import parse_model; from effdim.rank import effective_dimension, rank_cost\n"
        "m = parse_model('12:9,9,9'); tracemalloc.start()\n"
        "effective_dimension(m, seed=0, check_float=False, repeats=1)\n"
        "print(tracemalloc.get_traced_memory()[1], rank_cost(m).bytes)"
    )
    peak, estimate = map(
        int, subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    )
    assert peak <= estimate < 3 * peak


@pytest.mark.parametrize("text", HUGE + ["5(3(2,2),2,3(2,2))", "3:2,2,2,2"])
def test_bounds_report_gives_the_closed_forms_of_any_model(text):
    model = parse_model(text)
    report = bounds_report(model, "too large here")
    assert report.de is None and report.de_status == "not computed" and report.de_method == "too large here"
    assert report.ds == standard_dimension(model) and report.dc == complete_dimension(model)
    for row in report.local:
        b = lc_bounds(model.local_lc(row.hidden))
        assert (row.ds, row.dc, row.dp, row.db, row.de, row.deficit) == (b.ds, b.dc, b.dp, b.db, None, None)
    assert report.to_json()["de"] is None


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 6), st.lists(st.integers(2, 4), min_size=2, max_size=4))
def test_bounds_report_agrees_with_the_full_report(r, cards):
    model = HLCModel.lc(r, cards)
    full, cheap = dimensions(model, check_float=False), bounds_report(model)
    assert (cheap.ds, cheap.dc, cheap.regular, cheap.regularized, cheap.upper_bound) == (
        full.ds,
        full.dc,
        full.regular,
        full.regularized,
        full.upper_bound,
    )
    assert full.de <= cheap.upper_bound


def test_format_bytes():
    assert [format_bytes(n) for n in (0, 1536, 3 * 1024**3, 2**70)] == ["0 bytes", "1.5 KiB", "3.0 GiB", "1024.0 EiB"]
