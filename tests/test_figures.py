"""The Data tab's Bokeh figures (effdim_app.figures): built once, updated in place, click on a residual."""

import pandas as pd
import pytest

from effdim import datasets, sweep
from effdim.scores import SCORES
from effdim_app.figures import ClimbCurve, ProfileBars, ResidualMap, ScoreCurves, ShareBars
from effdim_app.state import SHOWN_SCORES


@pytest.fixture(scope="module")
def fits():
    return sweep(datasets.load("stouffer-toby"), cards=range(1, 4), restarts=2, seed=3)


def test_score_curves_keep_their_figure_and_mark_each_best(fits):
    frame = pd.DataFrame(
        [{"card": f.card, "n": 216, **{SCORES[k].key: f.score(k) for k in SHOWN_SCORES}} for f in fits]
    )
    best = {"bic": (2, frame.loc[1, "bic"]), "bic+": (1, frame.loc[0, "bic_plus"])}
    curves = ScoreCurves(SHOWN_SCORES)
    figure = curves.figure
    curves.update(frame, best)
    curves.update(frame, best)  # a second sweep: the same figure, new data
    assert curves.figure is figure
    assert list(curves.curves["cs+"].data["card"]) == [1, 2, 3]
    assert list(curves.curves["cs+"].data["score"]) == pytest.approx(list(frame["cs_plus"]))
    assert curves.stars["bic"].data["card"] == [2] and curves.stars["cs"].data["card"] == []
    assert figure.title.text.startswith("Scores against the cardinality (N = 216)")
    styles = sorted(
        (bool(r.glyph.line_dash), r.glyph.line_width) for r in figure.renderers if r.glyph.__class__.__name__ == "Line"
    )
    assert styles == [(False, 5)] * 3 + [(True, 2)] * 2  # de scores thin and dashed over the wide ds ones


def test_climb_curve_follows_the_climbed_score():
    climb = ClimbCurve()
    path = pd.DataFrame({"step": [0, 1, 2], "score": [-10.0, -8.0, -7.5], "hidden cards": ["X=1", "X=2", "X=3"]})
    climb.update(path, "bic+")
    assert climb.last.data == {"step": [2], "score": [-7.5], "hidden cards": ["X=3"]}
    assert climb.item.label == "BIC+ along the path"
    assert climb.line.glyph.line_color == SCORES["bic+"].color


def test_profiles_shares_and_residuals_of_a_fit(fits):
    fit = fits[1]
    node = fit.model.root
    profile = ProfileBars()
    profile.update(fit.profiles(node), {1: 0.6, 2: 0.4}, node)
    # poLCA-style: one bar per (item, category, state), grouped by item then category, no lines
    assert profile.figure.x_range.factors == profile.source.data["x"]
    assert len(profile.source.data["x"]) == 4 * 2 * 2 and profile.source.data["x"][:2] == [
        ("A", "+", "1"),
        ("A", "+", "2"),
    ]
    assert not any(r.glyph.__class__.__name__ in ("Line", "MultiLine") for r in profile.figure.renderers)
    assert set(profile.source.data["label"]) == {f"{node} = 1 (60%)", f"{node} = 2 (40%)"}
    shares = ShareBars()
    table = fit.class_shares()
    rows = table[table["node"] == fit.labels.name(node)]
    shares.update(rows["state"], rows["share"], node)
    assert sum(shares.source.data["share"]) == pytest.approx(1.0)

    clicked = []
    residuals = ResidualMap(lambda a, b: clicked.append((a, b)))
    bvr = fit.bivariate_residuals()
    residuals.update(bvr)
    assert len(residuals.source.data["bvr"]) == 4 * 3
    assert residuals.colors.high >= 3.0
    assert all(len(t.split(".")[1]) == 2 for t in residuals.source.data["value"])  # written in the cells
    i = next(
        k
        for k, (a, b) in enumerate(zip(residuals.source.data["item"], residuals.source.data["with"]))
        if (a, b) == ("C", "D")
    )
    residuals.source.selected.indices = [i]  # what a click in the browser sends
    assert clicked == [("C", "D")]
    assert residuals.source.selected.indices == []  # forgotten: the same cell can be clicked again
    residuals.source.selected.indices = [i]
    assert clicked == [("C", "D")] * 2
