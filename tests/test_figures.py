"""The Data tab's figures (effdim_app.figures): Bokeh figures built once, updated in place, scaled for a projector,
a click on a residual; the profiles as the report's SVG panels."""

import pandas as pd
import pytest
from bokeh.core.properties import value

from effdim import datasets, sweep
from effdim.scores import SCORES
from effdim_app.figures import ClimbCurve, ResidualMap, ScoreCurves, profile_html, scale_fonts
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
    assert figure.title.text.startswith("Scores against |H| (N = 216)")
    styles = sorted(
        (bool(r.glyph.line_dash), r.glyph.line_width) for r in figure.renderers if r.glyph.__class__.__name__ == "Line"
    )
    with_de = sum(SCORES[k].uses_de for k in SHOWN_SCORES)
    assert 0 < with_de < len(SHOWN_SCORES)
    # de scores thin and dashed over the wide ds ones
    assert styles == [(False, 5)] * (len(SHOWN_SCORES) - with_de) + [(True, 2)] * with_de


def test_climb_curve_follows_the_climbed_score():
    climb = ClimbCurve()
    path = pd.DataFrame({"step": [0, 1, 2], "score": [-10.0, -8.0, -7.5], "hidden cards": ["X=1", "X=2", "X=3"]})
    climb.update(path, "bic+")
    assert climb.last.data == {"step": [2], "score": [-7.5], "hidden cards": ["X=3"]}
    # a text, not a column's name: a plain string set after the legend is built is read as one ("Invalid field")
    assert climb.item.label == value("BIC+ along the path")
    assert [item.label for item in climb.figure.legend[0].items][1] == value("best model")
    assert len(climb.figure.title.text) <= 30  # fits above the plot at the narrowest width of the Data tab
    assert climb.line.glyph.line_color == SCORES["bic+"].color


def test_profiles_shares_and_residuals_of_a_fit(fits):
    fit = fits[1]
    node = fit.model.root
    table = fit.class_shares()
    rows = table[table["node"] == fit.labels.name(node)]
    shares, panels = profile_html(fit.profiles(node), rows[["state", "share"]], node)
    # the report's drawing: a panel per item, a bar per (category, state); the shares' bars are the legend
    assert panels.count("<svg") == 4 and panels.count("<rect") == 4 * 2 * 2
    assert shares.count("<svg") == 1 and f"{node} = 1" in shares

    clicked = []
    residuals = ResidualMap(lambda a, b: clicked.append((a, b)))
    bvr = fit.bivariate_residuals()
    residuals.update(bvr)
    assert len(residuals.source.data["bvr"]) == 4 * 3
    assert residuals.figure.x_range.factors == ["A", "B", "C", "D"]
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


def test_a_residual_map_of_long_item_names_shows_them_shortened_on_its_axes_and_whole_in_its_hover():
    names = ["I am satisfied with my job overall", "I am satisfied with my pay", "My manager listens to me"]
    residuals = ResidualMap(lambda a, b: None)
    residuals.update(pd.DataFrame([[0, 1.5, 2], [1.5, 0, 0.2], [2, 0.2, 0]], index=names, columns=names))
    axis = residuals.figure.x_range.factors
    assert len(set(axis)) == 3 and max(map(len, axis)) <= 18 and axis[2] == "My manager li…"
    assert set(residuals.source.data["item"]) == set(names)  # what the hover and a click name


def test_projector_mode_scales_every_font_of_a_figure_and_back(fits):
    frame = pd.DataFrame(
        [{"card": f.card, "n": 216, **{SCORES[k].key: f.score(k) for k in SHOWN_SCORES}} for f in fits]
    )
    bvr = fits[1].bivariate_residuals()
    residuals = ResidualMap(lambda a, b: None)
    residuals.update(bvr)
    curves = ScoreCurves(SHOWN_SCORES)
    curves.update(frame, {})
    climb = ClimbCurve()
    for figure in (curves.figure, climb.figure, residuals.figure):
        before = _fonts(figure)
        assert {"title", "axis label", "ticks", "legend"} & set(before), before
        scale_fonts(figure, 1.5, 300)
        assert _fonts(figure) == {k: v * 1.5 for k, v in before.items()} and figure.height == round(300 * 1.5**0.5)
        scale_fonts(figure, 1.0, 300)
        assert _fonts(figure) == before and figure.height == 300
    cell_values = [r.glyph for r in residuals.figure.renderers if r.glyph.__class__.__name__ == "Text"]
    scale_fonts(residuals.figure, 1.5)
    assert cell_values[0].text_font_size == "13.5pt"  # the values written in the cells: 9 pt at normal size


def _fonts(figure) -> dict[str, float]:
    """The point sizes of a figure's title, axis labels, ticks and legend labels."""
    found = {"title": figure.title.text_font_size}
    for axis in figure.axis:
        found["axis label"] = axis.axis_label_text_font_size
        found["ticks"] = axis.major_label_text_font_size
    for legend in figure.legend:
        found["legend"] = legend.label_text_font_size
    return {k: float(v[:-2]) for k, v in found.items()}
