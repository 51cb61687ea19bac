"""The dashboard's covariates card without a browser (effdim_app.state.regression): the columns a fit leaves
out are offered, picking them writes the formula, the regression shows poLCA's cheating coefficients, and on
an uploaded survey with a weight column its report carries the regression and the command that writes it."""

import html
import json
import re
import shlex
from pathlib import Path

import numpy as np
import pytest
from questionnaire import CONTRACT, ID, ITEMS, WEIGHT, YEARS, survey_with_covariates
from waiting import run_in_fresh_loop as run

from effdim import fit
from effdim.cli import main
from effdim_app.state import DataState, FittedState, ModelState, RegressionState, ScoresState

REFERENCE = json.loads((Path(__file__).parent / "references" / "polca_se.json").read_text())["models"]


def _swept(load, items, card):
    models, data = ModelState(), DataState()
    scores = ScoresState(models, data)
    fitted = FittedState(scores, models)
    load(data)
    assert data.use_columns(items)
    scores.param.update(card_max=card, restarts=3, seed=5)
    run(scores.run_sweep())
    fitted.chosen = next(k for k, f in fitted.fits.items() if f.card == card)
    return fitted, RegressionState(fitted)


def test_covariates_offered_picked_and_fitted():
    _, state = _swept(lambda d: d.load_bundled("cheating"), ["LIEEXAM", "LIEPAPER", "FRAUD", "COPYEXAM"], 2)
    assert state.candidates == ["GPA"]
    assert not run(state.run()) and "Pick at least one covariate" in state.message
    state.covariates = ["GPA"]
    assert state.formula == "GPA"
    assert run(state.run()) and state.message_kind == "success" and "315 rows (4 left out)" in state.message
    shown = state.shown
    assert list(shown.table["term"]) == ["(Intercept)", "GPA"]
    np.testing.assert_allclose(shown.fit.coefficients, REFERENCE["cheating_gpa"]["coeff"], rtol=1e-3)
    assert len(shown.curves) == 1 and shown.curves[0].probabilities.shape == (25, 2)
    state.formula = "C(GPA)"
    assert run(state.run()) and len(state.shown.table) == 5
    kept = state.shown
    state.formula = "GPA +"
    assert not run(state.run()) and "a column name is missing at the end" in state.message
    assert state.message_kind == "danger" and state.shown is kept


def test_an_uploaded_survey_with_weights_is_regressed_and_reported(tmp_path, monkeypatch):
    frame = survey_with_covariates()
    content = frame.to_csv(index=False).encode("utf-8")
    fitted, state = _swept(lambda d: d.load_upload("staff.csv", content), list(ITEMS.values()), 3)
    assert state.candidates == [YEARS, CONTRACT, WEIGHT]
    state.covariates = [YEARS, CONTRACT]
    assert state.formula == f"`{YEARS}` + {CONTRACT}"
    state.weights = WEIGHT
    assert run(state.run()), state.message
    shown = state.shown
    assert shown.fit.standard_errors().method == "robust" and shown.rows["weights"] == WEIGHT
    assert list(shown.table["term"]) == ["(Intercept)"] * 2 + [f"`{YEARS}`"] * 2 + [f"{CONTRACT}[Fixed-term]"] * 2
    years = shown.table[shown.table["term"] == f"`{YEARS}`"]
    assert (years["coefficient"] < 0).all() and (years["p"] < 0.01).all()  # the leaving classes: fewer years
    engine = fit(
        frame.drop(columns=ID),
        fitted.fit.model,
        covariates=state.formula,
        weights=WEIGHT,
        mapping=dict(fitted.fit.columns),
        restarts=3,
        seed=5,
        warn=False,
    )
    assert shown.fit.loglik == pytest.approx(engine.loglik, abs=1e-6)  # the engine's fit, as the job made it
    assert [c.categorical for c in shown.curves] == [False, True]

    page = run(state.report())
    assert '<section id="regression"' in page and "every score uses N = 800" in page
    command = html.unescape(re.search(r'<pre class="command"><code>(.*?)</code></pre>', page, re.S).group(1))
    lines = command.splitlines()
    assert lines[-2] == "# the latent class regression, a refit of the model shown with its covariates:"
    assert f"--covariates '`{YEARS}` + {CONTRACT}' --weights '{WEIGHT}'" in lines[-1]
    monkeypatch.chdir(tmp_path)
    (tmp_path / "staff.csv").write_bytes(content)
    assert main(shlex.split(lines[-1])[1:]) == 0
    assert '<section id="regression"' in (tmp_path / "effdim-report.html").read_text(encoding="utf-8")
