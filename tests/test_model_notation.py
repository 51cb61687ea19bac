"""The HLC model and its text/JSON notation (round trips, re-rooting, bad input)."""

import json

import pytest
from hypothesis import given
from strategies import hlc_models

from effdim import HLCModel, ModelError, NotationError, format_model, model_from_json, model_to_json, parse_model
from effdim.notation import load_model

FIGURE2 = "5(3(2,2),2,3(2,2))"


def test_figure2_named_and_unnamed_are_the_same_model():
    named = parse_model("H1:5(H2:3(O1:2,O2:2),O3:2,H3:3(O4:2,O5:2))")
    assert named == parse_model(FIGURE2)
    assert str(named) == FIGURE2
    assert named.hidden == ["H1", "H2", "H3"]
    assert named.observed == ["O1", "O2", "O3", "O4", "O5"]
    assert named.neighbors("H2") == ["H1", "O1", "O2"]


def test_lc_notation_and_tree_form_agree():
    assert parse_model("3:2,2,2,2") == parse_model("3(2,2,2,2)")
    assert str(parse_model("3(2,2,2,2)")) == "3:2,2,2,2"
    assert parse_model("X:3:A:2,B:2").observed == ["A", "B"]


@given(hlc_models(max_hidden=5))
def test_notation_round_trip(model):
    assert parse_model(format_model(model)) == model
    assert parse_model(format_model(model, names=True)) == model


@given(hlc_models(max_hidden=5))
def test_json_round_trip(model):
    text = json.dumps(model_to_json(model))
    assert model_from_json(text) == model


@given(hlc_models(max_hidden=5))
def test_rerooting_keeps_the_tree(model):
    for h in model.hidden:
        other = model.rerooted(h)
        assert other.root == h
        assert set(map(frozenset, other.edges)) == set(map(frozenset, model.edges))
        assert parse_model(str(other)) == other


def test_local_lc_models_of_figure2():
    model = parse_model(FIGURE2)
    assert [str(model.local_lc(h)) for h in model.hidden] == [
        "H1:5(H2:3,O3:2,H3:3)",
        "H2:3(H1:5,O1:2,O2:2)",
        "H3:3(H1:5,O4:2,O5:2)",
    ]


@pytest.mark.parametrize(
    "text, culprit",
    [
        ("5(3(2,,2),2)", "position 7"),
        ("5(3(2,2)", "position 9"),
        ("", "empty"),
        ("5", "single node"),
        ("3:2(2,2)", "cannot have children"),
        ("5(1,2)", "'O1'"),
        ("0(2,2)", "'H1'"),
        ("A:3(A:2,B:2)", "duplicate name 'A'"),
        ("3:2,2)", "position 6"),
        ("3:2;2", "position 4"),
        ("x(2,2)", "':' after the name 'x'"),
    ],
)
def test_bad_notation_names_the_culprit(text, culprit):
    with pytest.raises(NotationError, match=culprit.replace("(", r"\(")):
        parse_model(text)


@pytest.mark.parametrize(
    "cards, hidden, edges, culprit",
    [
        (
            {"H": 2, "A": 2, "B": 2, "C": 2},
            ["H"],
            [("H", "A"), ("H", "B"), ("A", "C")],
            "observed node 'A' is internal",
        ),
        (
            {"H": 2, "G": 2, "A": 2, "B": 2},
            ["H", "G"],
            [("H", "A"), ("H", "B"), ("H", "G")],
            "hidden node 'G' is a leaf",
        ),
        ({"H": 2, "A": 2, "B": 2, "C": 2}, ["H"], [("H", "A"), ("H", "B")], "disconnected"),
        ({"H": 2, "G": 2, "A": 2, "B": 2}, ["H", "G"], [("H", "G"), ("G", "A"), ("A", "H"), ("H", "B")], "cycle"),
        ({"H": 2, "A": 1, "B": 2}, ["H"], [("H", "A"), ("H", "B")], "'A'.*>= 2"),
        ({"H": 2.5, "A": 2, "B": 2}, ["H"], [("H", "A"), ("H", "B")], "'H'.*integer"),
        ({"H": 2, "A": 2, "B": 2}, ["H"], [("H", "A"), ("H", "Z")], "unknown node 'Z'"),
        ({"H": 2, "A b": 2, "B": 2}, ["H"], [("H", "A b"), ("H", "B")], "invalid node name 'A b'"),
    ],
)
def test_invalid_models_name_the_culprit(cards, hidden, edges, culprit):
    with pytest.raises(ModelError, match=culprit):
        HLCModel(cards, hidden, edges)


def test_rerooting_at_an_observed_node_is_refused():
    with pytest.raises(ModelError, match="observed node 'O1'"):
        parse_model(FIGURE2).rerooted("O1")


def test_edits_return_new_models_and_validate():
    model = parse_model(FIGURE2)
    assert str(model.with_card("H1", 4)) == "4(3(2,2),2,3(2,2))"
    assert str(model.without("H3")) == "5(3(2,2),2)"
    assert model.with_hidden_child("H1", "H9", 2, {"A": 2, "B": 3}).card("B") == 3
    assert model.renamed("O3", "Q").observed[2] == "Q"
    with pytest.raises(ModelError, match="duplicate name"):
        model.renamed("O3", "O1")
    with pytest.raises(ModelError, match="hidden node 'H2' is a leaf"):
        model.without("O1").without("O2")
    with pytest.raises(ModelError, match="observed node 'O3'"):
        model.with_child("O3", "Z", 2)
    assert str(model) == FIGURE2  # unchanged


@pytest.mark.parametrize(
    "payload, culprit",
    [
        ("{", "invalid JSON"),
        ("[]", "must be an object"),
        ('{"nodes": [], "edges": []}', "non-empty list 'nodes'"),
        ('{"nodes": [{"name": "H", "card": 2}], "edges": []}', r"nodes\[0\] has no 'hidden'"),
        ('{"nodes": [{"name": "H", "card": 2, "hidden": 1}], "edges": []}', r"nodes\[0\].*true or false"),
        ('{"nodes": [{"name": "H", "card": 2, "hidden": true}], "edges": [["H"]]}', r"edges\[0\]"),
    ],
)
def test_bad_json_names_the_culprit(payload, culprit):
    with pytest.raises(ModelError, match=culprit):
        model_from_json(payload)


def test_load_model_reads_json_files(tmp_path):
    path = tmp_path / "m.json"
    path.write_text(json.dumps(model_to_json(parse_model(FIGURE2))))
    assert load_model(str(path)) == parse_model(FIGURE2)
    with pytest.raises(ModelError, match="cannot read model file"):
        load_model(str(tmp_path / "missing.json"))
