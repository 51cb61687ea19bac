"""State of the dashboard's "Distal outcomes" card, without a browser (effdim_app.state.distal)."""

import html
import re
import shlex

import numpy as np
from waiting import run_in_fresh_loop as run

from effdim import datasets
from effdim.threestep import distal_outcomes
from effdim_app.state import DataState, DistalState, FittedState, ModelState, ScoresState

ITEMS = ["LIEEXAM", "LIEPAPER", "FRAUD", "COPYEXAM"]


def _cheating_swept():
    """A session that swept the LC model of the cheating data's four items over 1..3 classes, GPA left out."""
    models, data = ModelState(), DataState()
    scores = ScoresState(models, data)
    fitted = FittedState(scores, models)
    distal = DistalState(fitted)
    data.load_bundled("cheating")
    assert data.use_columns(ITEMS)
    scores.param.update(card_max=3, restarts=3, seed=5)
    run(scores.run_sweep())
    return data, fitted, distal


def test_the_columns_left_out_are_offered_and_estimated_as_the_engine_does():
    data, fitted, distal = _cheating_swept()
    assert distal.candidates == ["GPA"] and distal.outcomes == []
    assert not distal.estimate() and "Pick at least one column" in distal.message
    fitted.chosen = next(k for k, f in fitted.fits.items() if f.card == 2)
    distal.param.update(outcomes=["GPA"], method="ml")
    assert distal.estimate()
    [gpa] = distal.results
    assert gpa.column == "GPA" and gpa.method == "ml" and gpa.kind == "categorical"
    assert gpa.n_missing == 4 and gpa.estimates.shape == (2, 5)
    [engine] = distal_outcomes(fitted.fit, datasets.load("cheating"), "GPA", method="ml")
    np.testing.assert_allclose(gpa.estimates, engine.estimates, rtol=1e-10)
    assert fitted.distal == distal.results and distal.message_kind == "success"
    assert distal.message == "1 outcome by the ML correction."


def test_another_fit_clears_the_results_and_keeps_the_choice():
    _, fitted, distal = _cheating_swept()
    distal.outcomes = ["GPA"]
    assert distal.estimate() and distal.results
    fitted.chosen = next(k for k, f in fitted.fits.items() if f.card == 3)
    assert distal.results == [] and fitted.distal == [] and distal.outcomes == ["GPA"]
    fitted.chosen = next(k for k, f in fitted.fits.items() if f.card == 1)
    assert distal.estimate() and distal.results[0].wald.df == 0  # one class: nothing to test


def test_a_refusal_is_said_and_nothing_is_kept():
    """A fit whose second class copies the first (a degenerate point) is nobody's most probable class: the
    BCH correction is refused in words, the ML correction still answers."""
    from dataclasses import replace

    from effdim.distribution import Parameters

    _, fitted, distal = _cheating_swept()
    label = next(k for k, f in fitted.fits.items() if f.card == 2)
    two = fitted.fits[label]
    cpts = {"X": np.array([0.7, 0.3]), **{leaf: np.array([[0.8, 0.2], [0.8, 0.2]]) for leaf in two.model.observed}}
    copied = replace(two, em=replace(two.em, params=Parameters(two.model, cpts)))
    fitted.param.update(fits={**fitted.fits, label: copied}, chosen=label)
    distal.param.update(outcomes=["GPA"], method="bch")
    assert not distal.estimate()
    assert distal.message == (
        "The distal outcomes could not be estimated: class 2 is no unit's most probable class, so the BCH "
        "correction cannot undo the classification error; use the ML correction or proportional assignment."
    )
    assert distal.message_kind == "danger" and distal.results == [] and fitted.distal == []
    distal.method = "ml"
    assert distal.estimate() and distal.results[0].method == "ml"


def test_the_report_shows_the_distal_outcomes_and_the_command_that_gives_them(tmp_path, monkeypatch):
    from effdim.cli import main

    _, fitted, distal = _cheating_swept()
    distal.outcomes = ["GPA"]
    assert distal.estimate()
    page = run(fitted.report())
    assert '<section id="distal"' in page and "GPA (categorical; 315 rows with a value, 4 without a value)" in page
    command = html.unescape(re.search(r'<pre class="command"><code>(.*?)</code></pre>', page, re.S).group(1))
    lines = command.splitlines()
    assert lines[-2] == "# the distal outcomes, of a refit of the model shown:"
    assert lines[-1].startswith("effdim fit cheating --model") and lines[-1].endswith(
        "--distal GPA --distal-method bch"
    )
    monkeypatch.chdir(tmp_path)
    assert main([*shlex.split(lines[-1])[1:], "--json"]) == 0


def test_step_1_uncertainty_widens_the_errors_and_reaches_the_command(tmp_path, monkeypatch):
    """The box of the card: the standard errors carry the measurement model's uncertainty (never smaller than
    with the classification error taken as known), the report says so and its command asks for it."""
    from effdim.cli import main

    _, fitted, distal = _cheating_swept()
    distal.param.update(outcomes=["GPA"], method="ml")
    assert distal.estimate()
    [known] = distal.results
    distal.step1 = True
    assert distal.estimate()
    [carried] = distal.results
    assert known.se_method == "observed" and carried.se_method == "observed, with step 1's uncertainty"
    np.testing.assert_allclose(carried.estimates, known.estimates, rtol=1e-12)
    assert np.all(carried.se >= known.se - 1e-12) and np.any(carried.se > known.se * 1.001)
    page = run(fitted.report())
    assert "Standard errors observed, with step 1&#x27;s uncertainty; intervals" in page
    command = html.unescape(re.search(r'<pre class="command"><code>(.*?)</code></pre>', page, re.S).group(1))
    assert command.splitlines()[-1].endswith("--distal GPA --distal-method ml --step1-uncertainty")
    monkeypatch.chdir(tmp_path)
    assert main([*shlex.split(command.splitlines()[-1])[1:], "--json"]) == 0


def test_the_distal_command_of_an_uploaded_survey_maps_its_leaves_to_the_questions(tmp_path, monkeypatch):
    """A survey's questions cannot name leaves (O1..O6): the command reads the outcome column too, so without
    ``--map`` its leaves would find no columns; it must run where the file is."""
    from questionnaire import ITEMS, YEARS, survey_with_covariates

    from effdim.cli import main

    content = survey_with_covariates().to_csv(index=False).encode("utf-8")
    models, data = ModelState(), DataState()
    scores = ScoresState(models, data)
    fitted = FittedState(scores, models)
    distal = DistalState(fitted)
    data.load_upload("staff.csv", content)
    assert data.use_columns(list(ITEMS.values()))
    scores.param.update(card_max=2, restarts=2, seed=5)
    run(scores.run_sweep())
    fitted.chosen = next(k for k, f in fitted.fits.items() if f.card == 2)
    assert set(fitted.fit.columns) != set(fitted.fit.columns.values())  # leaves named apart from their columns
    distal.outcomes = [YEARS]
    assert distal.estimate(), distal.message
    page = run(fitted.report())
    command = html.unescape(re.search(r'<pre class="command"><code>(.*?)</code></pre>', page, re.S).group(1))
    line = command.splitlines()[-1]
    assert "--map" in line
    monkeypatch.chdir(tmp_path)
    (tmp_path / "staff.csv").write_bytes(content)
    assert main([*shlex.split(line)[1:], "--json"]) == 0
