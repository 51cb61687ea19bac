"""The fitted view's checks that take refits (effdim_app.state.FitChecksState): the bootstrap p-value of G2 and the
share ranges over equally good fits, each a job, each the engine's answer for the fit shown and only for it."""

from __future__ import annotations

import pytest
from waiting import run_in_fresh_loop as run

from effdim.bootstrap import bootstrap_g2
from effdim.executor import Execution
from effdim_app.jobs import JobRunner
from effdim_app.state import DataState, FitChecksState, FittedState, ModelState, ScoresState


@pytest.fixture(scope="module")
def checked():
    jobs = JobRunner(workers=1, timeout=120)
    models = ModelState(jobs=jobs)
    data = DataState()
    assert data.load_bundled("stouffer-toby")
    scores = ScoresState(models, data, jobs=jobs, restarts=2, seed=3, card_max=3)
    fitted = FittedState(scores, models)
    run(scores.run_sweep())
    return FitChecksState(fitted, replicates=20)


def test_the_bootstrap_p_value_is_the_engines_for_the_fit_shown_and_goes_with_it(checked):
    fitted = checked.fitted
    fit = fitted.fit
    result = run(checked.run_bootstrap())
    assert checked.bootstrap is result and checked.bootstrap_job is None
    engine = bootstrap_g2(fit, 20, fitted.scores.em_settings(), execution=Execution("serial"))
    assert result.p_value == engine.p_value and result.B == 20
    fitted.chosen = next(label for label in fitted.fits if label.startswith("|X| = 3"))
    assert checked.bootstrap is None  # another fit shown: that p-value was not its


def test_the_share_ranges_of_a_fit_that_is_not_unique(checked):
    fitted = checked.fitted
    fitted.chosen = next(label for label in fitted.fits if label.startswith("|X| = 3"))
    assert not fitted.fit.unique  # 3:2,2,2,2 has de = 13 < ds = 14
    ranges = run(checked.run_share_ranges())
    (rows,) = ranges["shares"].values()
    assert len(rows) == 3 and all(0 <= lo <= hi <= 1 for lo, hi in rows) and ranges["fits"] >= 1
    assert checked.share_ranges is ranges
