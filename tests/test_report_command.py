"""The command a dashboard report writes reproduces it: on a researcher's survey, whose identifier column the
reader leaves out, the command (with --drop) runs and gives the numbers the dashboard showed; the posteriors'
download keeps the identifier first."""

from __future__ import annotations

import html
import io
import json
import re
import shlex

import pandas as pd
from questionnaire import ID, survey_csv
from waiting import run_in_fresh_loop as run

from effdim.cli import main
from effdim_app.jobs import JobRunner
from effdim_app.state import DataState, FittedState, ModelState, ScoresState


def test_the_reports_command_gives_the_dashboards_numbers_and_the_posteriors_keep_the_identifier(
    tmp_path, monkeypatch, capsys
):
    jobs = JobRunner(workers=1, timeout=120)
    models = ModelState(jobs=jobs)
    data = DataState()
    assert data.load_upload("survey.csv", survey_csv())
    assert data.left_out == [ID] and data.ids[ID].tolist()[:2] == ["R0001", "R0002"]
    scores = ScoresState(models, data, jobs=jobs, restarts=2, seed=4, card_max=3)
    fitted = FittedState(scores, models)
    shown = run(scores.run_sweep())
    page = run(fitted.report())
    command = html.unescape(re.search(r'<pre class="command"><code>(.*?)</code></pre>', page).group(1))
    assert f"--drop {ID}" in command
    words = shlex.split(command)
    assert words[:3] == ["effdim", "sweep", "survey.csv"]
    (tmp_path / "survey.csv").write_bytes(survey_csv())
    monkeypatch.chdir(tmp_path)
    assert main([*words[1:], "--json", "--quiet"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert [f["card"] for f in again] == [f.card for f in shown]
    for ours, theirs in zip(shown, again):
        assert abs(ours.loglik - theirs["loglik"]) < 1e-6 and ours.de == theirs["de"]
    written = (tmp_path / "effdim-report.html").read_text(encoding="utf-8")
    for fit in shown:  # the page the command wrote shows the dashboard's log-likelihoods
        assert f"{fit.loglik:,.2f}" in written or f"{fit.loglik:.2f}" in written
    posteriors = pd.read_csv(io.StringIO(fitted.posteriors_csv()))
    assert posteriors.columns[0] == ID and posteriors[ID].tolist() == data.ids[ID].tolist()
