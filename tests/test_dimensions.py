"""The dimension report: Figure 2, Corollary 4.1 against the direct rank, invariants."""

import dataclasses
import sys

import pytest
from hypothesis import assume, given, settings
from strategies import hlc_models, lc_models, regular_hlc_models
from test_bounds import TABLE1

from effdim import ModelError, parse_model
from effdim.bounds import lc_bounds, standard_dimension
from effdim.dimensions import BOTH, COROLLARY, DIRECT, RouteDisagreement, dimensions
from effdim.regularity import regularize
from effdim.survey import bound_gaps, regular_lc_models

dimensions_module = sys.modules["effdim.dimensions"]  # the package exports the function under the same name


def test_figure2_hlc_model():
    report = dimensions(parse_model("5(3(2,2),2,3(2,2))"))
    assert (report.ds, report.de, report.de_status) == (41, 23, "proven")
    assert report.de_direct == report.de_local_sum == 23
    assert [(r.hidden, r.lc, r.deficit) for r in report.local] == [
        ("H1", "5:3,3,2", 12),
        ("H2", "3:5,2,2", 3),
        ("H3", "3:5,2,2", 3),
    ]
    assert report.regular and report.dp is None
    assert report.deficit_sum == report.ds - report.de == 18 and report.to_json()["deficit_sum"] == 18


@pytest.mark.parametrize("notation, de, db, ds, dc, dp", TABLE1)
def test_table1_reports(notation, de, db, ds, dc, dp):
    report = dimensions(parse_model(notation))
    assert (report.de, report.db, report.ds, report.dc) == (de, db, ds, dc)
    assert report.de_status == ("proven" if de == db else "probable")
    if report.de_status == "probable":
        assert 0 < report.failure_bound < 1e-3


def test_lc_models_with_db_above_de_are_found_by_computation():
    """Every regular LC model over up to four variables of up to three states."""
    gaps = {gap.model: gap for gap in bound_gaps(max_observed=4, max_card=3)}
    assert {"3:2,2,2,2", "4:3,3,3"} <= set(gaps)
    assert all(g.de < g.db and g.failure_bound < 1e-6 for g in gaps.values())
    # the scan covers models where the bound is tight too
    assert sum(1 for _ in regular_lc_models(4, 3)) > 10 * len(gaps)


@settings(max_examples=25)
@given(lc_models())
def test_lc_de_within_bounds(model):
    report = dimensions(model, check_float=False)
    bounds = lc_bounds(model)
    assert report.de <= bounds.db <= bounds.ds
    assert report.de <= bounds.dc


@settings(max_examples=25)
@given(regular_hlc_models(max_hidden=4, max_card=3))
def test_corollary_4_1_equals_the_direct_rank(model):
    assume(not model.is_lc)
    report = dimensions(model, direct=True, check_float=False)
    assert report.de_direct == report.de_local_sum
    assert report.de <= report.upper_bound <= report.ds


@settings(max_examples=20)
@given(hlc_models(max_hidden=4, max_card=4))
def test_regularize_keeps_de(model):
    regular = regularize(model).model
    assert dimensions(model, check_float=False).de == dimensions(regular, check_float=False).de
    assert standard_dimension(regular) <= standard_dimension(model)


def test_irregular_model_reports_its_regular_equivalent():
    report = dimensions(parse_model("9:2,2,2,2"))
    assert not report.regular and report.regularized == "8:2,2,2,2"
    assert report.de == 15 and report.violations


def test_deficit_sum_is_ds_minus_de_only_for_regular_models():
    """Corollary 4.1 needs a regular model: 5(5(2,2),2) has local deficits 35 but ds - de = 32."""
    report = dimensions(parse_model("5(5(2,2),2)"))
    assert not report.regular and (report.ds, report.de, report.deficit_sum) == (39, 7, 35)


def test_float_second_opinion_agrees():
    report = dimensions(parse_model("5(3(2,2),2,3(2,2))"))
    assert report.float_rank == 23 and report.singular_gap > 1e3


def test_json_has_the_documented_keys():
    data = dimensions(parse_model("3:2,2,2,2")).to_json()
    assert {"model", "regular", "ds", "de", "dc", "de_status", "local", "dp", "db"} <= set(data)
    assert set(data["local"][0]) >= {"hidden", "lc", "ds", "de", "dc", "dp", "db", "binding"}
    assert data["de_status"] == "probable" and data["de"] == 13 and data["db"] == 14


def test_basis_says_which_route_proved_de():
    fig2 = parse_model("5(3(2,2),2,3(2,2))")
    assert dimensions(fig2).de_basis == BOTH
    alone = dimensions(fig2, direct=False)
    assert (alone.de, alone.de_status, alone.de_basis) == (23, "proven", COROLLARY)
    assert alone.to_json()["de_basis"] == COROLLARY and "not asked for" in alone.de_method
    assert dimensions(parse_model("3:2,2,2,2")).de_basis == DIRECT


def test_direct_route_skipped_above_the_limit_says_so(monkeypatch):
    monkeypatch.setattr(dimensions_module, "DIRECT_ROUTE_MAX_DS", 40)
    report = dimensions(parse_model("5(3(2,2),2,3(2,2))"))  # ds 41
    assert report.de_direct is None and report.de_basis == COROLLARY
    assert "skipped (ds 41 > DIRECT_ROUTE_MAX_DS = 40)" in report.de_method


def test_direct_rank_below_corollary_4_1_is_an_error(monkeypatch):
    """Two certified lower bounds that disagree downwards: a bug or bad luck, never silence."""
    real = dimensions_module.effective_dimension

    def one_too_low(model, **options):
        result = real(model, **options)
        return dataclasses.replace(result, de=result.de - 1, status="probable", failure_bound=1e-12)

    monkeypatch.setattr(dimensions_module, "effective_dimension", one_too_low)
    with pytest.raises(RouteDisagreement, match=r"is 22, below the Corollary 4\.1 value 23") as caught:
        dimensions(parse_model("5(3(2,2),2,3(2,2))"), direct=True)
    assert isinstance(caught.value, ModelError)
