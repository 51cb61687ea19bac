"""The colours of a categorical distal outcome's bars are named (effdim.charts.class_legend): its panel stands
without the class shares that are the legend of the item profiles."""

import xml.etree.ElementTree as ET

from effdim import datasets, fit
from effdim.charts import CLASS_COLORS, class_legend
from effdim.report import distal_html
from effdim.threestep import distal_outcomes

SVG = "{http://www.w3.org/2000/svg}"


def test_the_legend_names_each_class_beside_its_colour_escaped():
    svg = ET.fromstring(class_legend(["low", "<b>mid</b>", "high"], "Group & X"))
    assert [r.get("fill") for r in svg.iter(f"{SVG}rect")] == list(CLASS_COLORS[:3])
    labels = [t.text for t in svg.iter(f"{SVG}text")]
    assert labels == ["Group & X = low", "Group & X = <b>mid</b>", "Group & X = high"]
    xs = [float(t.get("x")) for t in svg.iter(f"{SVG}text")]
    gaps = [b - a for a, b in zip(xs, xs[1:])]
    assert all(gap > 6.8 * len(label) for gap, label in zip(gaps, labels))  # no label runs into the next swatch
    assert float(svg.get("width")) >= xs[-1] + 6.8 * len(labels[-1]) - 1


def test_a_categorical_outcome_gets_the_legend_and_a_continuous_one_does_not():
    data = datasets.load("cheating")
    items = ["LIEEXAM", "LIEPAPER", "FRAUD", "COPYEXAM"]
    fitted = fit(data.subset(items), 2, seed=1, warn=False)
    (gpa,) = distal_outcomes(fitted, data, "GPA")
    (as_number,) = distal_outcomes(fitted, data, {"GPA": "continuous"})
    categorical, continuous = distal_html([gpa]), distal_html([as_number])
    assert categorical.count('aria-label="colours of the classes of X"') == 1
    assert "colours of the classes" not in continuous
