"""The dashboard's structure search without a browser (effdim_app.state.learning): its progress is the share of its
time limit used, its best tree so far is drawn as it improves, and a search the server stops or the user cancels
keeps that tree and opens it in the editor."""

from __future__ import annotations

import asyncio
from functools import cache

import numpy as np
import pytest
from waiting import run_in_fresh_loop as run
from waiting import until

from effdim import EMSettings, HLCModel
from effdim.distribution import sample
from effdim.experiments.structure import random_latent_tree, separated_parameters
from effdim_app.config import search_seconds
from effdim_app.jobs import JobRunner
from effdim_app.state import DataState, ModelState, ScoresState, learning
from effdim_app.tasks import learn_task

FIG2 = "5(3(2,2),2,3(2,2))"


@cache
def wide_csv() -> bytes:
    """1,000 rows from a random tree over 40 leaves: its search takes minutes."""
    truth = random_latent_tree(np.random.default_rng(3), (40, 40), (8, 10))
    data = sample(separated_parameters(truth), 1000, np.random.default_rng(1))
    return data.to_frame().to_csv(index=False).encode()


def _scores(timeout: float) -> ScoresState:
    m, d = ModelState(FIG2), DataState()
    s = ScoresState(m, d, restarts=1, learn_score="bic", jobs=JobRunner(workers=1, timeout=timeout))
    d.load_upload("wide.csv", wide_csv())
    return s


def test_the_search_ends_before_the_server_stops_it():
    assert search_seconds(60) == 55 and search_seconds(20) == 15 and search_seconds(8) == 6
    assert all(0 < search_seconds(t) < t for t in (0.5, 1, 5, 19.9, 20, 3600))


def test_the_bar_fills_with_the_time_used_and_the_best_trees_are_drawn_as_they_improve(monkeypatch):
    monkeypatch.setattr(learning, "search_seconds", lambda _: 6.0)
    s = _scores(timeout=60)
    bars, trees = [], []
    s.param.watch(lambda e: bars.append((e.new, s.status)), "progress")
    s.param.watch(lambda e: trees.append((e.new, s.running)), "learned_tree")
    learned = run(s.run_learn())
    assert learned is not None and learned.stopped == "max_time"
    during = [value for value, status in bars if "running for" in status]
    assert during == sorted(during) and len(set(during)) >= 3 and 0 < during[0] and during[-1] >= 50, bars
    assert any("ends by 6 s at the latest" in status for _, status in bars)
    assert s.progress == 100 and s.status.startswith(
        "Structure search stopped at the time limit (6 s); best tree so far"
    )
    drawn = [tree for tree, running in trees if running and tree is not None]
    assert drawn and drawn[-1] == learned.model and s.learned_tree == learned.model


@pytest.mark.parametrize("end", ["timed out", "cancelled"])
def test_a_search_the_server_stops_or_the_user_cancels_keeps_its_best_tree(monkeypatch, end):
    """The search's own limit set beyond the server's (as when the worker is starved): the server kills the worker,
    and the best tree it handed out is opened in the editor, said to be the best so far; a cancel keeps it too."""
    monkeypatch.setattr(learning, "search_seconds", lambda t: 10 * t)
    s = _scores(timeout=12.0 if end == "timed out" else 60.0)
    before = s.models.model

    async def go():
        task = asyncio.ensure_future(s.run_learn())
        if end == "cancelled":
            await until(lambda: s.job is not None and s.job.partial, "the first best tree")
            s.cancel()
        return await task

    best = run(go())
    assert best is not None and best.phase != "done"  # the last best tree reported, not a search's result
    assert isinstance(best.model, HLCModel) and sorted(best.model.observed) == sorted(s.data.dataset.columns)
    assert s.models.model == best.model and s.mapping == "model" and s.learned_tree == best.model
    how = "stopped by the server's time limit" if end == "timed out" else "cancelled"
    assert s.status.startswith(f"Structure search {how} after ") and "best tree so far" in s.status
    assert "now in the tree editor" in s.learned_note and not s.running
    assert (s.message_kind, bool(s.message)) == ("warning", end == "timed out")
    assert s.models.undo() and s.models.model == before


def test_a_progress_without_partial_gets_the_counts_only():
    """The task's progress is the thousandths of the search's time limit used, 1,000 at the end; a progress that
    takes no parts (a plain callable) is given none."""
    calls = []
    data = sample(separated_parameters(random_latent_tree(np.random.default_rng(1), (6, 6), (2, 2))), 500, 1)
    learn_task(
        data, score="bic", settings=EMSettings(restarts=1, seed=0), max_time=30, progress=lambda *a: calls.append(a)
    )
    assert calls and all(total == 1000 for _, total, _ in calls) and calls[-1][0] == 1000
    assert [done for done, _, _ in calls] == sorted(done for done, _, _ in calls)
