"""The data demo's script (effdim_app/data_demo_script.py): which fits it reads and what it says of them, on the
bundled survey it analyses."""

from __future__ import annotations

import re

import pytest

from effdim import datasets
from effdim.fitting import fit
from effdim.scores import best
from effdim_app import data_demo_script as script


@pytest.fixture(scope="module")
def fits():
    """The survey's LC fits of 1 to 3 classes, labelled as the fitted view labels a sweep's fits."""
    data = datasets.load(script.DATA_SET)
    fitted = [fit(data, k, restarts=3, seed=0, warn=False) for k in (1, 2, 3)]
    return {f"|X| = {script.classes(f)}: {f.model}": f for f in fitted}


def test_the_pick_and_the_fit_with_one_class_fewer(fits):
    pick, fewer = script.pick_and_fewer(fits, "bic+")
    assert fits[pick] is best(fits.values(), "bic+")
    assert script.classes(fits[fewer]) == script.classes(fits[pick]) - 1
    one = {label: f for label, f in fits.items() if script.classes(f) == 1}
    assert script.pick_and_fewer(one, "bic+") == (next(iter(one)),) * 2  # no fit has fewer classes than one


def test_the_profile_names_each_class_share_and_most_likely_answers(fits):
    pick = fits[script.pick_and_fewer(fits, "bic+")[0]]
    said = script.profile_sentence(pick)
    shares = pick.class_shares()["share"]
    assert [int(s) for s in re.findall(r"class \d \((\d+)%\)", said)] == [round(100 * s) for s in shares]
    profiles = pick.profiles()
    first = profiles[(profiles["class"] == 1) & (profiles["item"] == "PURPOSE")]
    assert f"class 1 ({shares.iloc[0]:.0%}): {first.sort_values('probability').iloc[-1]['category']}," in said


def test_the_residual_sentence_quotes_the_largest_residual_and_the_same_pair_at_the_pick(fits):
    pick_label, fewer_label = script.pick_and_fewer(fits, "bic+")
    pick, fewer = fits[pick_label], fits[fewer_label]
    a, b, value = script.largest_residual(fewer)
    residuals = fewer.bivariate_residuals()
    assert value == residuals.max().max() == residuals.loc[a, b]
    said = script.residual_sentence(fewer, pick)
    assert f"is {value:.1f}, between {a} and {b}" in said
    assert f"same pair's residual is {pick.bivariate_residuals().loc[a, b]:.1f}." in said
    assert "one fewer than the pick" not in script.residual_sentence(pick, pick)


def test_the_sweep_sentence_names_every_pick():
    said = script.sweep_sentence({"bic": (3, -1.0), "bic+": (2, -2.0)}, 4)
    assert said.startswith("Fitted LC models with 1 to 4 classes") and "pick: BIC 3, BIC+ 2." in said
