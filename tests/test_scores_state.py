"""The dashboard's scores state (effdim_app.state.ScoresState) without a browser: sweeps, hill climbs and the
structure search run as jobs, cancelled, limited, and cleared when the model or the data change.
"""

from __future__ import annotations

import asyncio
import sys

import pytest
from waiting import run_in_fresh_loop as run
from waiting import until

from effdim_app import presets
from effdim_app.state import DataState, ModelState, ScoresState

FIG2 = "5(3(2,2),2,3(2,2))"


@pytest.fixture
def scores():
    m, d = ModelState(FIG2), DataState()
    s = ScoresState(m, d, restarts=1, card_max=3)
    d.load_bundled("stouffer-toby")
    return s


def test_sweep_lc_over_all_columns(scores):
    results = run(scores.run_sweep())
    assert [r.card for r in results] == [1, 2, 3]
    assert scores.results and scores.progress == 100 and not scores.running
    best = scores.best()
    assert set(best) == {"bic", "bic+", "cs", "cs+", "aic", "sbic", "sbic+"}
    csv = scores.results_csv()
    assert csv.splitlines()[0].startswith("model,card,loglik,bic,bic_plus,cs,cs_plus,aic,aic_plus,aic3")
    assert len(csv.splitlines()) == 4


def test_results_are_cleared_when_model_or_data_change(scores):
    run(scores.run_sweep())
    assert scores.results
    scores.mapping = "model"  # another scored model
    assert not scores.results and "cleared" in scores.status
    scores.mapping = "lc"
    run(scores.run_sweep())
    scores.data.load_upload("ok.csv", b"X,Y\n1,a\n2,b\n1,b\n")
    assert not scores.results
    scores.mapping = "model"
    run(scores.run_sweep())  # refused: the model does not match
    assert not scores.results and scores.mismatch and scores.message_kind == "danger"


def test_model_mapping_and_hill_climb(scores):
    scores.mapping = "model"
    assert scores.mismatch  # Figure 2 has five leaves, the data four columns
    scores.models.load_preset(presets.FIGURE1)  # O1..O4 map to A..D by position
    assert not scores.mismatch
    assert [row[:2] for row in scores.leaf_map] == [("O1", "A"), ("O2", "B"), ("O3", "C"), ("O4", "D")]
    climb = run(scores.run_climb())
    assert climb is not None and climb.path
    frame = scores.climb_frame()
    assert list(frame["step"]) == list(range(len(climb.path)))
    scores.models.select("H1")
    scores.models.set_card(2)
    assert scores.climb is None  # stale: cleared


def test_a_leaf_without_a_column_is_told_in_the_dashboards_words(scores):
    """The remedy names the dashboard's own controls, never a Python argument or a CLI option."""
    scores.mapping = "model"  # Figure 2's leaves O1..O5, the data's columns A..D
    (problem,) = scores.mismatch
    assert problem.startswith("leaves 'O1', 'O2', 'O3', 'O4', 'O5' name no data column (columns: A, B, C, D)")
    assert problem.endswith(
        "rename the leaves after the columns (Rename on the Model tab), or score the LC model over all columns"
    )
    assert "mapping=" not in problem and "--map" not in problem


def test_use_lc_model_in_editor(scores):
    assert scores.use_lc_model_in_editor()
    assert scores.mapping == "model" and scores.models.model.observed == ["A", "B", "C", "D"]
    assert not scores.mismatch


def test_cancel_and_stale_runs_are_discarded(scores):
    scores.param.update(card_max=12, restarts=20)  # long enough to be cancelled while running

    async def until_running():
        await until(lambda: scores.job is not None and scores.job.state == "running", "the sweep's job running")

    async def cancel_midway():
        task = asyncio.ensure_future(scores.run_sweep())
        await until_running()
        assert scores.running and "running" in scores.status
        scores.cancel()
        return await task

    assert run(cancel_midway()) is None
    assert not scores.running and "cancelled" in scores.status

    async def edit_midway():
        task = asyncio.ensure_future(scores.run_sweep())
        await until_running()
        scores.data.load_bundled("lc-8-2222")  # new data: the run is cancelled, nothing shown
        return await task

    assert run(edit_midway()) is None
    assert not scores.results and not scores.running


def test_sweep_range_is_checked_against_the_server_limits():
    from effdim_app.config import ServerLimits

    scores = ScoresState(ModelState(FIG2, limits=ServerLimits(max_card=40)), DataState(), restarts=1)
    scores.data.load_bundled("carcinoma")  # seven binary items: up to 64 classes in a regular LC model
    scores.card_max = 10**12  # 64 in fact
    assert run(scores.run_sweep()) is None
    assert "above this server's limit" in scores.message and scores.message_kind == "danger"
    scores.card_max = 38
    assert scores._sweep_range() == (list(range(1, 39)), True)  # within both limits
    scores.models.limits = ServerLimits(max_sweep=30)
    assert run(scores.run_sweep()) is None
    assert "at most 30 at a time" in scores.message and not scores.running


def test_cs_prior_reaches_the_scores_and_picks_say_when_saturated(scores):
    scores.card_max = 8  # the largest regular |X| for four binary items
    scores.past_saturation = True
    scores.cs_prior = "k2:1"
    results = run(scores.run_sweep())
    assert {r.scores.cs_prior for r in results} == {"k2:1"}
    notes = scores.pick_notes()
    assert scores.best()["cs+"][0] == 8  # K2 drives CS+ to the top (docs/experiments.md)
    assert notes["cs+"] == ["largest regular cardinality", "saturated (de = dc = 15)"]
    assert scores.best()["bic"][0] == 2 and notes["bic"] == []
    scores.cs_prior = "bdeu:1"
    assert not scores.results  # CS depends on the prior: the old results are stale


def test_tree_edit_keeps_lc_sweep_results_but_clears_model_sweep_results():
    """The LC model over all columns does not use the edited tree: editing the tree leaves its results."""
    scores = ScoresState(ModelState(), DataState())
    assert scores.data.load_bundled("stouffer-toby")
    scores.results = ["stand-in result"]
    scores.models.set_card(2, node="O2")
    assert scores.results == ["stand-in result"]
    scores.mapping = "model"
    assert scores.results == []


def test_default_sweep_stops_where_de_reaches_dc(monkeypatch):
    """By default the worker stops at de = dc; the server computes no dimension to find where."""

    def no_dimensions_here(*args, **kwargs):
        raise AssertionError("a dimension was computed on the server's event loop")

    scores = ScoresState(ModelState(), DataState(), restarts=1)
    scores.data.load_bundled("stouffer-toby")  # four binary items: dc = 15, LC 4:2,2,2,2 has de = 15
    monkeypatch.setattr(sys.modules["effdim.dimensions"], "_lc_rank", no_dimensions_here)  # every local de
    assert scores._sweep_range() == ([1, 2, 3, 4, 5, 6, 7, 8], True)
    scores.card_min = 2
    scores.card_max = 20
    assert scores._sweep_range() == ([2, 3, 4, 5, 6, 7, 8], True)  # up to the largest regular |X|
    scores.past_saturation = True
    assert scores._sweep_range() == ([2, 3, 4, 5, 6, 7, 8], False)
    scores.card_max = 6
    assert scores._sweep_range() == ([2, 3, 4, 5, 6], False)
    monkeypatch.undo()
    scores.param.update(card_min=1, card_max=8, past_saturation=False)
    results = run(scores.run_sweep())
    assert [r.card for r in results] == [1, 2, 3, 4]
    assert "Stopped at |X| = 4, where de = dc" in scores.status


def test_learn_structure_opens_the_learned_tree_in_the_editor_and_undo_brings_back_the_model(scores):
    before = scores.models.model
    notes, trees = [], []
    scores.param.watch(lambda e: notes.append(e.new), "status")
    scores.param.watch(lambda e: trees.append((e.new, scores.running, scores.learned_note)), "learned_tree")
    learned = run(scores.run_learn())
    assert learned is not None and not scores.running
    assert scores.models.model == learned.model and scores.mapping == "model"
    assert set(learned.model.observed) == set(scores.data.dataset.columns)  # leaves named after the columns
    assert scores.status.startswith("Structure learned") and f"de {learned.fit.de}" in scores.status
    assert any("best so far" in n for n in notes)  # the worker's progress reached the status line
    # the worker's best trees (sent in notation) were drawn while it ran, then the result stays drawn
    during = [(tree, note) for tree, running, note in trees if running and tree is not None]
    assert during and all(set(t.observed) == set(learned.model.observed) for t, _ in during)
    assert during[0][1].startswith("Best tree so far (1 hidden node)")
    assert scores.learned_tree == learned.model and "now in the tree editor" in scores.learned_note
    assert scores.models.undo() and scores.models.model == before
    scores.data.load_bundled("stouffer-toby")  # new data: the learned tree no longer belongs to it
    assert scores.learned_tree is None and scores.learned_note == ""


def test_a_structure_search_stopped_by_its_time_says_so_and_opens_its_best_tree(monkeypatch):
    """The search gets the computation's time limit less a margin (effdim_app.config.search_seconds); stopped by
    it, it still opens its best tree and says why it ended."""
    from effdim_app.jobs import JobRunner
    from effdim_app.state import learning

    monkeypatch.setattr(learning, "search_seconds", lambda _: 0.3)
    m, d = ModelState(FIG2), DataState()
    s = ScoresState(m, d, restarts=1, jobs=JobRunner(workers=1, timeout=4.0))  # a search of 0.3 s
    d.load_bundled("hlc-figure2")
    learned = run(s.run_learn())
    assert learned is not None and learned.stopped == "max_time"
    assert s.status.startswith("Structure search stopped at the time limit (0.3 s); best tree so far: ")
    assert m.model == learned.model


def test_learn_structure_needs_data():
    s = ScoresState(ModelState(FIG2), DataState())
    assert run(s.run_learn()) is None
    assert s.message == "Load a data set first."
