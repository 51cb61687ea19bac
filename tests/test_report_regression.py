"""The HTML report of a latent class regression and of a weighted fit (effdim.report): the coefficients with
standard errors and odds ratios as effdim.FitResult.coefficient_table gives them, the class probabilities along
each covariate, the rows used and the N of the scores, the profiles' standard errors, user text escaped."""

from __future__ import annotations

import numpy as np
import pytest
from test_report import Page

from effdim import datasets, fit
from effdim.cli import main
from effdim.report import report_html

XSS = "<img src=x onerror=alert(1)>"


@pytest.fixture(scope="module")
def cheating_gpa():
    data = datasets.load("cheating")
    return data, fit(data, 2, covariates="GPA", seed=1, warn=False)


def test_a_regression_reports_its_coefficients_curves_and_rows(cheating_gpa):
    data, result = cheating_gpa
    page = Page(report_html(result, data=data))
    assert "regression" in page.sections and "fit" not in page.sections and "residuals" not in page.sections
    table = result.coefficient_table()
    cells = page.cells["regression"]
    for row in table.to_dict("records"):
        at = cells.index(row["term"])
        assert cells[at + 1] == f"X = {row['class']}"
        assert float(cells[at + 2]) == pytest.approx(row["coefficient"], abs=1e-4)
        assert float(cells[at + 3]) == pytest.approx(row["se"], abs=1e-4)
        assert float(cells[at + 6]) == pytest.approx(row["odds_ratio"], abs=1e-3)
    assert [a["aria-label"] for a in page.svgs("class probabilities")] == ["class probabilities of X by GPA"]
    assert "315 of 319 rows used (4 left out for a missing covariate)" in page.sections["profiles"]
    se = result.standard_errors()
    p = result.params.cpts[result.model.observed[0]][0, 0]
    assert f"{p:.3f} ({se.tables[result.model.observed[0]][0, 0]:.3f})" in page.cells["profiles"]


def test_a_categorical_covariate_is_drawn_as_bars_per_category(cheating_gpa):
    data, _ = cheating_gpa
    result = fit(data, 2, covariates="C(GPA)", seed=1, warn=False)
    page = Page(report_html(result, data=data))
    assert "GPA[2]" in page.cells["regression"] and "(Intercept)" in page.cells["regression"]
    assert page.svgs("profile of GPA") and not page.svgs("class probabilities")


def test_a_weighted_fit_says_its_weights_and_n_and_user_text_is_escaped():
    rng = np.random.default_rng(4)
    counts = datasets.load("cheating").to_frame().rename(columns={"GPA": XSS})
    frame = counts.loc[counts.index.repeat(counts.pop("count"))].reset_index(drop=True)  # a row per student
    frame["w t"] = rng.uniform(0.5, 2.0, len(frame))
    frame.loc[len(frame) - 1, "w t"] = 0.0  # a student with a GPA
    result = fit(frame, 2, covariates=f"`{XSS}`", weights="w t", seed=1, warn=False)
    page = Page(report_html(result, data=None))
    text = page.sections["profiles"]
    assert "rows used (4 left out for a missing covariate, 1 for a missing or zero weight)" in text
    assert "Weighted by the sampling weights in w t" in text and "every score uses N = 314" in text
    assert "robust sandwich" in text
    assert f"class probabilities of X by {XSS}" in [a["aria-label"] for a in page.svgs("class probabilities")]


def test_the_command_line_writes_the_regression_report(tmp_path):
    out = tmp_path / "r.html"
    assert main(["fit", "cheating", "--model", "2", "--covariates", "GPA", "--seed", "1", "--report", str(out)]) == 0
    page = Page(out.read_text())
    assert "regression" in page.sections and "GPA" in page.cells["regression"]
