"""Regularity (Lemmas 3.2, 4.1) and regularize()."""

from hypothesis import given
from strategies import hlc_models

from effdim import parse_model
from effdim.bounds import standard_dimension
from effdim.regularity import is_regular, largest_regular_card, regularity_violations, regularize, shrink_limit


def test_lc_regularity_is_lemma_3_2():
    assert is_regular(parse_model("8:2,2,2,2"))
    [violation] = regularity_violations(parse_model("9:2,2,2,2"))
    assert violation.node == "H1" and violation.rule == "Lemma 3.2"


def test_figure2_is_regular():
    assert is_regular(parse_model("5(3(2,2),2,3(2,2))"))


def test_shrink_step_is_logged():
    result = regularize(parse_model("9(3(2,2),2,3(2,2))"))
    assert [(s.node, s.rule, s.old, s.new) for s in result.steps] == [("H1", "shrink", "9", "6")]
    assert result.model.card("H1") == 6


def test_strict_inequality_for_two_neighbours_one_hidden():
    model = parse_model("3(2(2),2,2)")
    # H2 has two neighbours (H1 and O1), one hidden, and |H2| = 2 = min: irregular
    [violation] = regularity_violations(model)
    assert violation.node == "H2" and violation.rule == "two neighbours, one hidden"
    result = regularize(model)
    assert [s.rule for s in result.steps] == ["remove"]
    assert str(result.model) == "3:2,2,2"
    assert is_regular(result.model)


def test_remove_rerootes_when_the_root_goes():
    model = parse_model("4(3(2,2),3(2,2))")
    # root H1 has two neighbours, both hidden, |H1| = 4 >= 3
    result = regularize(model)
    assert [(s.node, s.rule) for s in result.steps] == [("H1", "shrink"), ("H1", "remove")]
    assert result.model.root in ("H2", "H3")
    assert len(result.model.hidden) == 2


def test_the_two_limits_differ_only_in_the_strict_case():
    assert largest_regular_card(parse_model("3:2,2,2,2"), "H1") == 8  # Lemma 3.2: 16 / 2
    assert largest_regular_card(parse_model("2:3,2,2"), "H1") == 4
    fig2 = parse_model("5(3(2,2),2,3(2,2))")
    for node, limit in (("H1", 6), ("H2", 4)):  # 3*2*3 / 3 and 5*2*2 / 5 (Lemma 4.1)
        assert shrink_limit(fig2, node) == largest_regular_card(fig2, node) == limit
    # two neighbours, one hidden: strictly below prod/max, and never below 1
    chain = parse_model("3(2(2,2),2(2,2))")
    assert (shrink_limit(chain, "H1"), largest_regular_card(chain, "H1")) == (2, 1)
    assert (shrink_limit(parse_model("4(4(2,2),2)"), "H1"), largest_regular_card(parse_model("4(4(2,2),2)"), "H1")) == (
        2,
        1,
    )
    assert is_regular(chain.with_card("H1", 1)) and not is_regular(chain.with_card("H1", 2))


def test_regularization_reports_what_changed():
    result = regularize(parse_model("9(9(2,2),2)"))
    changes = result.changes
    assert result.original == parse_model("9(9(2,2),2)")
    assert {node: (c.old, c.new) for node, c in changes.items()} == {
        node: (9, None if node not in result.model else result.model.card(node)) for node in changes
    }
    assert any(c.new is None and str(c) == "removed" for c in changes.values())
    shrunk = regularize(parse_model("9:2,2,2,2")).changes["H1"]
    assert (shrunk.old, shrunk.new, str(shrunk)) == (9, 8, "9 → 8")
    assert regularize(parse_model("3:2,2,2,2")).changes == {}


@given(hlc_models(max_hidden=5, max_card=5))
def test_regularize_is_idempotent_and_never_raises_ds(model):
    result = regularize(model)
    assert is_regular(result.model)
    assert standard_dimension(result.model) <= standard_dimension(model)
    again = regularize(result.model)
    assert again.model == result.model and not again.steps
    assert set(result.model.observed) == set(model.observed)
    if is_regular(model):
        assert not result.steps and result.model == model
