"""The dashboard's sweep (effdim_app.state.ScoresState.run_sweep) on a researcher's survey: the default range is
a class enumeration, each fit is shown as it finishes, and a sweep cancelled or stopped by the server's time limit
keeps and shows the cardinalities it finished."""

from __future__ import annotations

import asyncio
import re

import pytest
from questionnaire import survey_csv
from waiting import run_in_fresh_loop, until

from effdim_app.jobs import JobRunner
from effdim_app.state import DataState, FittedState, ModelState, ScoresState


@pytest.fixture(scope="module")
def jobs():
    runner = JobRunner(workers=1, timeout=120)
    runner.warm_up()
    return runner


def survey_scores(jobs: JobRunner) -> tuple[ScoresState, FittedState]:
    models = ModelState(jobs=jobs)
    data = DataState()
    assert data.load_upload("survey.csv", survey_csv())
    scores = ScoresState(models, data, jobs=jobs, restarts=2)
    return scores, FittedState(scores, models)


def test_the_default_range_of_six_three_answer_items_is_one_to_eight_not_243():
    scores, _ = survey_scores(None)
    assert scores._sweep_range() == ([1, 2, 3, 4, 5, 6, 7, 8], True)


def test_fits_show_as_they_finish_and_a_cancelled_sweep_keeps_them(jobs):
    scores, fitted = survey_scores(jobs)
    seen, statuses = [], []
    scores.param.watch(lambda e: seen.append([f.card for f in e.new]), "results")
    scores.param.watch(lambda e: statuses.append(e.new), "status")

    async def cancel_after_two():
        task = asyncio.ensure_future(scores.run_sweep())
        await until(lambda: len(scores.results) >= 2, "two fits of the sweep on screen")
        assert scores.running and not fitted.fits  # the fitted view waits for the sweep's end
        scores.cancel()
        return await task

    kept = run_in_fresh_loop(cancel_after_two())
    cards = [f.card for f in kept]
    assert cards[:2] == [1, 2] and cards == list(range(1, len(cards) + 1)) and len(cards) < 8
    # drawn as they arrive (on screen while the sweep still ran, checked above), in growing runs from |X| = 1:
    # fits finishing within one poll of the job's messages arrive together
    assert all(s == list(range(1, len(s) + 1)) for s in seen), seen
    assert any(re.search(r"\|X\| = 1(, \d+)* done", s) for s in statuses), statuses  # names the cardinalities done
    assert scores.results == kept and not scores.running
    assert scores.status.startswith(f"Sweep cancelled: kept the {len(cards)} cardinalities (|X| = 1-{cards[-1]})")
    assert fitted.fit is not None and fitted.fit.card in cards  # the best of those finished, shown
    assert scores.settings_of_results.cards == tuple(cards)  # the report's command sweeps what was kept


def test_a_sweep_stopped_by_the_time_limit_keeps_what_it_finished(jobs):
    scores, fitted = survey_scores(jobs)

    async def time_out_after_one():
        task = asyncio.ensure_future(scores.run_sweep())
        await until(lambda: len(scores.results) >= 1, "the sweep's first fit")
        scores.job.timeout = 0  # the server's limit reached now
        return await task

    kept = run_in_fresh_loop(time_out_after_one())
    assert kept and [f.card for f in kept] == list(range(1, len(kept) + 1))
    assert scores.status.startswith("Sweep stopped by the time limit: kept the")
    assert "time limit" in scores.message and scores.message_kind == "warning"
    assert fitted.fit is not None and not fitted.stale
