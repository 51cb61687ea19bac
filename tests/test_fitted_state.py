"""State of the dashboard's Fitted model view, without a browser (effdim_app.state.fitted)."""

from waiting import run_in_fresh_loop as run

from effdim_app.state import DataState, FittedState, ModelState, ProposalState, ScoresState


def test_fits_follow_the_sweep_survive_a_model_change_and_reorder():
    models, data = ModelState(), DataState()
    scores = ScoresState(models, data)
    state = FittedState(scores, models)
    assert state.fit is None
    data.load_bundled("stouffer-toby")
    scores.card_max = 3
    run(scores.run_sweep())
    assert len(state.fits) == 3 and state.fit.card == 2  # best by BIC+, as Goodman's two classes
    state.chosen = next(k for k, f in state.fits.items() if f.card == 3)
    shares = state.fit.params.marginals()["X"]
    assert state.reorder("3,1,2")
    assert list(state.fit.params.marginals()["X"]) == [shares[2], shares[0], shares[1]]
    assert not state.reorder("1,1,2") and "must list each of 1..3 once" in state.proposal
    assert len(state.posteriors_csv().splitlines()) == 17


def _swept_with_proposals():
    """The states of a dashboard session that swept Stouffer-Toby's LC model over |X| = 1..3, with its proposals."""
    models, data = ModelState(), DataState()
    scores = ScoresState(models, data)
    fitted = FittedState(scores, models)
    data.load_bundled("stouffer-toby")
    scores.card_max = 3
    run(scores.run_sweep())
    return models, scores, fitted, ProposalState(fitted)


def test_a_proposal_changes_nothing_until_applied_and_undo_brings_the_sweep_back():
    models, scores, fitted, proposal = _swept_with_proposals()
    before, mapping, swept = models.model, scores.mapping, list(scores.results)
    fitted.chosen = next(k for k, f in fitted.fits.items() if f.card == 3)
    assert proposal.propose("C", "D")
    assert str(proposal.pending) == "X:3(A:2,B:2,H1:2(C:2,D:2))"
    assert "ds = " in proposal.text and "de = " in proposal.text
    assert models.model == before and scores.results == swept  # nothing changed yet
    proposal.dismiss()
    assert proposal.pending is None and models.model == before
    assert proposal.propose("C", "D") and proposal.apply()
    assert str(models.model) == "X:3(A:2,B:2,H1:2(C:2,D:2))" and scores.mapping == "model"
    assert not scores.results  # the scores state cleared its results: the model changed ...
    assert fitted.fit.card == 3  # ... the view keeps the fit it shows
    assert proposal.undo()
    assert models.model == before and scores.mapping == mapping and scores.results == swept
    assert fitted.fit.card == 3 and not fitted.stale  # the fit shown before, not the sweep's pick (|X| = 2)
    assert not proposal.applied and "back" in proposal.text
    fitted.chosen = next(k for k, f in fitted.fits.items() if f.card == 1)  # the menu still chooses the fit
    assert fitted.shown.fit.card == 1 and not fitted.stale
    models.undo()  # nothing left to undo: the fit chosen stays
    assert fitted.fit.card == 1 and scores.results == swept


def test_toggling_auto_regularize_after_a_proposal_keeps_its_undo():
    """On a regular model auto-regularize changes nothing scored: toggled after Apply, Undo still brings the
    sweep back (the toggle re-sends the same model, which used to drop the results kept for Undo)."""
    models, scores, fitted, proposal = _swept_with_proposals()
    before, swept = models.model, list(scores.results)
    assert proposal.propose("C", "D") and proposal.apply()
    models.auto_regularize = False
    models.auto_regularize = True
    assert proposal.applied
    assert proposal.undo()
    assert models.model == before and scores.results == swept and "back" in proposal.text


def _command(html: str) -> str:
    """The command of a report (its Command section), unescaped."""
    import html as html_lib
    import re

    return html_lib.unescape(re.search(r'<pre class="command"><code>(.*?)</code></pre>', html, re.S).group(1))


def test_the_report_carries_the_command_that_writes_it_again(tmp_path, monkeypatch):
    import shlex

    from effdim.cli import main

    models, data = ModelState(), DataState()
    scores = ScoresState(models, data)
    state = FittedState(scores, models)
    data.load_bundled("stouffer-toby")
    scores.param.update(card_max=3, restarts=3, seed=11)
    run(scores.run_sweep())
    scores.seed = 12  # changed after the sweep: the command keeps the sweep's seed
    command = _command(run(state.report()))
    assert command.startswith("effdim sweep stouffer-toby --max-card 3 --restarts 3 --seed 11 --cs-prior ")
    assert command.endswith("--pick bic+ --report effdim-report.html")
    monkeypatch.chdir(tmp_path)
    assert main(shlex.split(command)[1:] + ["--quiet"]) == 0
    again = (tmp_path / "effdim-report.html").read_text(encoding="utf-8")
    assert f"loglik {state.fit.loglik:.4f}" in again and _command(again).startswith("effdim sweep stouffer-toby")

    state.chosen = next(k for k, f in state.fits.items() if f.card == 3)  # not a pick: a refit of the model shown
    refit = _command(run(state.report())).splitlines()
    assert refit[0].startswith("# refits the model shown")
    assert refit[-1] == (
        f"effdim fit stouffer-toby --model 'X:3(A:2,B:2,C:2,D:2)' --restarts 3 --seed 11 --cs-prior {scores.cs_prior} "
        "--report effdim-report.html"
    )


def swept_stouffer_toby(card_max: int) -> FittedState:
    """The fitted state after an LC sweep of 1..card_max classes on the Stouffer-Toby data."""
    models, data = ModelState(), DataState()
    scores = ScoresState(models, data)
    state = FittedState(scores, models)
    data.load_bundled("stouffer-toby")
    scores.card_max = card_max
    run(scores.run_sweep())
    return state


def test_the_fitted_view_says_when_shares_and_posteriors_are_not_unique():
    """de < ds (three classes on Stouffer-Toby: ds 14, de 13): the view's notes say which fitted quantities
    are not unique; with de = ds (two classes) they say nothing of it."""
    from effdim_app.views.fitted_view import _stats_html

    state = swept_stouffer_toby(3)
    state.chosen = next(k for k, f in state.fits.items() if f.card == 3)
    html = _stats_html(state.shown)
    assert "not unique: de = 13 &lt; ds = 14" in html and "1-dimensional set" in html
    assert "class shares, posteriors and entropy R2 are not unique" in html
    state.chosen = next(k for k, f in state.fits.items() if f.card == 2)
    assert "not unique" not in _stats_html(state.shown)


def test_a_fit_that_cannot_be_shown_for_a_defect_says_so_without_a_librarys_words(monkeypatch):
    """An error that is no engine refusal (a defect, a library's error) reads as effdim's failure, not as
    pandas' message; the server's log has the traceback."""
    from effdim import FitResult

    state = swept_stouffer_toby(2)

    def broken(self, *args, **kwargs):
        raise TypeError("unhashable type: 'numpy.ndarray'")

    monkeypatch.setattr(FitResult, "class_shares", broken)
    state.chosen = next(k for k, f in state.fits.items() if f.card == 1)
    assert state.shown is None and state.error == (
        "Cannot show this fit: an unexpected error inside effdim, not a problem with your input "
        "(the server's log has the details)"
    )


def test_showing_a_fit_imports_nothing_on_the_servers_event_loop():
    """The view's numbers of a fit (shares, identification, profiles, residuals, statistics) come from modules
    the state imports with it: the first fit a fresh server showed imported effdim.diagnostics and scipy.stats
    (0.6 s) on its event loop, every session waiting (a fresh interpreter, as a server starts)."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "import effdim_app.state\n"
        "from effdim import datasets, parse_model\n"
        "from effdim import fit\n"
        "fitted = fit(datasets.load('stouffer-toby'), parse_model('X:2(A:2,B:2,C:2,D:2)'), restarts=1, seed=0)\n"
        "before = set(sys.modules)\n"
        "fitted.class_shares(), fitted.identification(), fitted.profiles('X')\n"
        "fitted.bivariate_residuals(), fitted.fit_statistics()\n"
        "print(sorted(m for m in set(sys.modules) - before if m.split('.')[0] in ('effdim', 'scipy')))\n"
    )  # (pandas imports its pyarrow glue at its first table of text, which a server's pages make before any fit)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]", f"imported while a fit was shown: {out}"
