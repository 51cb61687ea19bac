"""The dashboard's state classes, without a browser (effdim_app.state, layout, presets)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import time

import pytest
from waiting import run_in_fresh_loop, until

from effdim import HLCModel, parse_model
from effdim.treelayout import tree_layout
from effdim_app import presets
from effdim_app.state import DataState, ModelState, ScoresState

FIG2 = "5(3(2,2),2,3(2,2))"


run = run_in_fresh_loop


def rows(state: ModelState) -> dict[str, tuple]:
    return {r.hidden: (r.lc, r.ds, r.de, r.dc, r.dp, r.db, r.binding, r.deficit) for r in state.report.local}


# ------------------------------------------------------------------- the module
def test_state_module_does_not_import_panel():
    """Nor does its Fitted model view's module (in the same fresh interpreter: each starts in seconds of CPU)."""
    import subprocess

    code = (
        "import sys, effdim_app.state, effdim_app.state.fitted\nprint('panel' in sys.modules, 'bokeh' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


# ------------------------------------------------------------------- model state
def test_default_is_figure_2_with_paper_dimensions():
    s = ModelState()
    assert str(s.model) == FIG2
    assert s.selected == s.model.root
    assert (s.report.ds, s.report.de, s.report.de_status) == (41, 23, "proven")
    assert sorted(r.deficit for r in s.report.local) == [3, 3, 12]
    assert s.is_regular and s.regularization is None and s.changed == {}


def test_set_card_changes_the_table_and_undo_redo_restore_it():
    s = ModelState(FIG2)
    s.select("H2")
    before = rows(s)
    assert s.set_card(2)
    assert s.model.card("H2") == 2
    assert rows(s) != before
    assert s.can_undo and not s.can_redo
    assert s.undo()
    assert s.model.card("H2") == 3 and rows(s) == before
    assert s.can_redo
    assert s.redo()
    assert s.model.card("H2") == 2
    assert not s.redo()  # nothing left


def test_refused_edits_keep_the_model_and_say_why():
    s = ModelState("3:2,2")
    model = s.model
    s.select("O1")
    assert not s.delete()  # H1 would keep one neighbour: a hidden leaf
    assert s.model == model
    assert s.message_kind == "danger" and "unchanged" in s.message and "H1" in s.message
    assert not s.set_card(1)  # observed nodes need >= 2 states
    assert s.model == model and "O1" in s.message
    assert not s.rename("not a name!")
    assert not s.rename("H1")  # duplicate
    assert s.model == model and "duplicate" in s.message
    s.select("H1")
    assert not s.delete()  # the root
    assert s.model == model and not s.can_undo


def test_structure_edits():
    s = ModelState("3:2,2,2")
    s.select("H1")
    assert s.add_observed_child(card=3)
    assert s.selected == "O4" and s.model.card("O4") == 3
    s.select("H1")
    assert s.add_hidden_child(card=2)
    new_hidden = s.selected
    assert s.model.is_hidden(new_hidden) and len(s.model.children(new_hidden)) == 2
    assert s.make_root()
    assert s.model.root == new_hidden
    s.select("H1")
    assert s.rename("Top")
    assert s.selected == "Top" and "Top" in s.model
    s.select(new_hidden)
    assert not s.delete()  # the root cannot go
    assert s.make_root("Top")
    assert s.delete(new_hidden)  # a hidden node with its subtree
    assert new_hidden not in s.model and s.selected == "Top"
    assert s.model.observed == ["O1", "O2", "O3", "O4"]


def test_notation_presets_and_json():
    s = ModelState()
    assert s.load_notation("H1:5(H2:3(O1:2,O2:2),O3:2)")
    assert s.model.hidden == ["H1", "H2"]
    model = s.model
    assert not s.load_notation("5(3(2,2),2")
    assert s.model == model and "position" in s.message
    text = s.to_json()
    s.load_preset(presets.FIGURE1)
    assert str(s.model) == "3:2,2,2,2"
    assert (s.report.ds, s.report.de) == (14, 13)  # Table 1: db overestimates de by one
    assert s.load_json(text.encode())
    assert s.model == model
    assert not s.load_json(b'{"nodes": []}')
    assert s.model == model and "nodes" in s.message
    assert not s.load_json(b"\xff\xfe")
    assert not s.load_preset("no such preset")


@pytest.mark.parametrize("label", list(presets.PRESETS))
def test_every_preset_loads_and_has_a_report(label):
    s = ModelState("2:2,2")
    assert s.load_preset(label)
    assert s.report is not None and not s.report_error


def test_table1_presets_match_the_paper():
    table1_de = {"3:2,2,2,2": 13, "4:3,3,3": 25, "5:10,3,2": 54, "2:3,3,3": 13}
    for lc, de in table1_de.items():
        assert ModelState(lc).report.de == de


def test_irregular_model_auto_regularized_with_step_log():
    s = ModelState()
    assert s.load_preset(presets.IRREGULAR)
    assert not s.is_regular and s.violations
    reg = s.regularization
    assert reg is not None and reg.steps
    assert s.effective == reg.model and s.effective != s.model
    assert s.changed["H2"] == "9 → 4" and s.changed["H3"] == "removed"
    assert s.report.regular  # dimensions of the regular equivalent
    s.auto_regularize = False
    assert s.effective == s.model and not s.report.regular
    assert s.regularization is not None  # still known, only not used
    s.auto_regularize = True
    assert s.adopt_regular()
    assert s.is_regular and s.model == reg.model
    assert s.undo() and not s.is_regular


def test_highlight_follows_table_rows():
    s = ModelState(FIG2)
    s.highlight = "H2"
    assert s.highlight_nodes == ["H2", "H1", "O1", "O2"]
    s.highlight = "O1"  # not hidden: ignored
    assert s.highlight is None and s.highlight_nodes == []
    s.highlight = "H3"
    s.select("H3")
    s.delete()
    assert s.highlight is None


def test_select_nearest_uses_layout_positions():
    s = ModelState(FIG2)
    pos = tree_layout(s.model)
    x, y = pos["O4"]
    assert s.select_nearest(x + 0.1, y - 0.1, pos) == "O4" and s.selected == "O4"
    assert s.select_nearest(x + 5, y + 5, pos) is None and s.selected == "O4"
    assert s.select_nearest(float("nan"), 0.0, pos) is None


def test_sessions_do_not_share_state():
    a, b = ModelState(FIG2), ModelState(FIG2)
    a.select("H2")
    a.set_card(2)
    assert b.model.card("H2") == 3 and not b.can_undo and b.selected == "H1"
    assert a.report is not b.report


# --------------------------------------------------------------------- layout
@pytest.mark.parametrize(
    "text", [FIG2, "3:2,2,2,2", "3(2,4(2,2,3(2,2,2)),2,2(2,2(2,2)))", "2(2(2(2,2),2(2,2)),2(2,2),2(2(2,2),2))"]
)
def test_tidy_layout(text):
    m = parse_model(text)
    pos = tree_layout(m)
    assert set(pos) == set(m.nodes)
    for n in m.nodes:  # layers by depth, parents centred over their children
        kids = m.children(n)
        if kids:
            assert all(pos[k][1] == pos[n][1] - 1 for k in kids)
            xs = [pos[k][0] for k in kids]
            assert pos[n][0] == pytest.approx((xs[0] + xs[-1]) / 2)
            assert xs == sorted(xs)  # notation order left to right
    by_layer: dict[float, list[float]] = {}
    for x, y in pos.values():
        by_layer.setdefault(y, []).append(x)
    for xs in by_layer.values():  # never closer than one unit on a layer
        xs.sort()
        assert all(b - a >= 1 - 1e-9 for a, b in zip(xs, xs[1:]))
    assert min(x for x, _ in pos.values()) == 0


def test_update_is_fast_for_50_node_trees():
    import time

    leaves = ",".join(["3(2,2,2)"] * 12)
    s = ModelState(f"4({leaves},2)")  # 1 + 12 * 4 + 1 = 50 nodes
    assert len(s.model) == 50
    s.select("H2")
    times = []
    for card in (2, 3, 2, 3):  # CPU seconds of this process: the other tests running meanwhile do not count
        start = time.process_time()
        s.set_card(card)
        times.append(time.process_time() - start)
    assert s.report.ds > 0
    assert min(times) < 0.3


# ----------------------------------------------------------------------- data
BAD_CSV = b"A,B\n1,2\n3\n"


def test_data_loading_and_bad_files():
    d = DataState()
    assert d.load_bundled("stouffer-toby")
    assert d.dataset.columns == ("A", "B", "C", "D") and d.message_kind == "success"
    good = d.dataset
    assert not d.load_upload("bad.csv", BAD_CSV)
    assert d.dataset is good and d.message_kind == "danger" and "line 3" in d.message
    assert "Still using" in d.message
    assert not d.load_upload("empty.csv", b"")
    assert not d.load_upload("one.csv", b"A,B\nx,1\nx,2\n")  # a column with a single value
    assert "'A'" in d.message
    d.max_bytes = 10
    assert not d.load_upload("big.csv", b"A,B\n1,2\n2,1\n" * 10)
    assert "limit" in d.message and d.dataset is good
    d.max_bytes = 10_000
    assert d.load_upload("ok.csv", b"X,Y\n1,a\n2,b\n1,b\n")
    assert d.dataset.columns == ("X", "Y")
    assert list(d.columns_frame()["states"]) == [2, 2]


# --------------------------------------------------------------------- scores
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
    assert set(best) == {"bic", "bic+", "cs", "cs+", "aic"}
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


def test_dimensions_that_fail_for_a_defect_say_so_without_a_librarys_words(monkeypatch):
    """A model whose dimensions raise something other than an engine refusal: the user reads that effdim
    failed, not the library's message."""

    def broken(self, model):
        raise TypeError("unsupported operand type(s) for +: 'NoneType' and 'int'")

    monkeypatch.setattr(ModelState, "quick_report", broken)
    s = ModelState(parse_model("2:2,2,2"))
    assert s.report is None and s.report_error == (
        "an unexpected error inside effdim, not a problem with your input (the server's log has the details)"
    )


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


def test_sweep_range_is_checked_against_the_server_limits(scores):
    scores.card_max = 10**12
    assert run(scores.run_sweep()) is None
    assert "above this server's limit" in scores.message and scores.message_kind == "danger"
    scores.card_max = 500
    assert run(scores.run_sweep()) is None
    assert "at most 50 at a time" in scores.message and not scores.running


def test_one_revision_per_action():
    s = ModelState(FIG2)
    seen = []
    s.param.watch(lambda e: seen.append(e.new), "revision")
    s.select("H2")
    s.set_card(2)  # also makes H1 irregular: one update all the same
    s.undo()
    s.highlight = "H3"
    s.auto_regularize = False
    assert len(seen) == 5 and seen == sorted(seen)


def test_direct_rank_on_demand_and_cleared_by_edits():
    s = ModelState(FIG2)
    assert s.report.de_direct is None  # interactive route: Corollary 4.1 only
    full = run(s.verify_direct())
    assert full.de_direct == 23 and s.direct is full and not s.direct_running
    s.select("O1")
    s.set_card(3)
    assert s.direct is None


def test_tree_data_marks_selection_highlight_and_regularization():
    from effdim_app.views.tree_view import PALETTE

    s = ModelState(presets.PRESETS[presets.IRREGULAR])
    s.select("H4")
    s.highlight = "H1"
    data = s.drawing()
    nodes = dict(zip(data["nodes"]["node"], zip(data["nodes"]["label"], data["nodes"]["fill"], data["nodes"]["line"])))
    assert nodes["H2"] == ("H2 : 9→4", PALETTE["changed"], PALETTE["hidden"])
    assert nodes["H3"][0] == "H3 : 4 ✕"
    assert nodes["H4"][2] == PALETTE["selected"]
    assert len(data["halo"]["x"]) == 1 + len(s.effective.neighbors("H1"))
    regular = s.drawing("regular")
    assert "H3" not in regular["positions"]
    assert dict(zip(regular["nodes"]["node"], regular["nodes"]["label"]))["H2"] == "H2 : 4 (was 9)"


def test_tree_svg_draws_every_node_edge_and_label_of_the_screen():
    import xml.etree.ElementTree as ET

    from effdim.treedraw import SVG_UNIT
    from effdim_app.views.tree_view import PALETTE, tree_svg

    s = ModelState(presets.PRESETS[presets.IRREGULAR])
    data = s.drawing()
    root = ET.fromstring(tree_svg(data))
    ns = "{http://www.w3.org/2000/svg}"
    assert root.tag == f"{ns}svg"
    assert int(root.get("width")) == round((data["xlim"][1] - data["xlim"][0]) * SVG_UNIT)
    model = s.model
    circles = root.findall(f"{ns}circle")
    rects = [r for r in root.findall(f"{ns}rect") if r.get("class") != "background"]
    assert len(circles) == len(model.hidden) and len(rects) == len(model.observed)
    assert len(root.findall(f"{ns}line")) == len(model.edges)
    labels = [t.text for t in root.findall(f"{ns}text")]
    assert sorted(labels) == sorted(data["nodes"]["label"]) and "H2 : 9→4" in labels
    assert {c.get("fill") for c in circles} >= {PALETTE["changed"], PALETTE["hidden"]}
    # the root sits at the top, in the middle of its children
    root_node = next(c for c in circles if c.find(f"{ns}title").text == model.root)
    assert float(root_node.get("cy")) == min(float(c.get("cy")) for c in circles)


def test_cs_prior_reaches_the_scores_and_picks_say_when_saturated(scores):
    scores.card_max = 0  # up to the largest regular |X|, 8 for four binary items
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


# ------------------------------------------------------------- limits and jobs
def test_a_huge_model_shows_its_closed_forms_and_says_why_de_is_missing():
    s = ModelState(FIG2)
    assert s.load_notation("3:1000000000,2")
    assert s.model == parse_model("3:1000000000,2") and s.message_kind == "success"
    report = s.report
    assert report.de is None and report.ds == 2_000_000_001 and report.dc == 1_999_999_999  # regular equivalent
    assert "de was not computed" in s.de_note and "more than one computation may use on this server" in s.de_note
    assert "sketch" not in s.de_note and "rows=" not in s.de_note
    s.auto_regularize = False  # the model itself: 1000000000:2,2 asked for 7.45 GiB before
    assert s.load_notation("1000000000:2,2") and s.report.de is None and s.report.ds == 2_999_999_999
    s.auto_regularize = True
    assert s.report.de == 3  # its regular equivalent 2:2,2 is tiny


@pytest.mark.parametrize(
    "text, words",
    [
        ("3:" + ",".join(["2"] * 300), "at most 200 nodes"),
        ("3:10000000000,2", "at most 1,000,000,000 states per node"),
        ("3:" + "2," * 20000 + "2", "characters"),
    ],
)
def test_models_beyond_the_server_limits_are_refused_and_the_model_kept(text, words):
    s = ModelState(FIG2)
    assert not s.load_notation(text)
    assert words in s.message and "unchanged" in s.message and str(s.model) == FIG2


def test_json_of_a_huge_model_is_refused():
    from effdim import model_to_json

    s = ModelState(FIG2)
    big = json.dumps(model_to_json(HLCModel.lc(3, [2] * 250)))
    assert not s.load_json(big.encode())
    assert "at most 200 nodes" in s.message and str(s.model) == FIG2


def test_heavy_dimensions_run_as_a_job_and_arrive_later():
    from effdim_app.config import ServerLimits
    from effdim_app.jobs import JobRunner

    held, report_set_while = [], []

    @contextlib.contextmanager
    def in_one_update():  # as the dashboard's one_message: everything the job's end changes goes out together
        held.append(True)
        try:
            yield
        finally:
            held.pop()

    async def go():
        s = ModelState(FIG2, limits=ServerLimits(quick_ms=0), jobs=JobRunner(workers=1))
        s.in_one_update = in_one_update
        s.param.watch(lambda _: report_set_while.append(bool(held)), "report")
        s.load_notation("4:3,3,3,3")
        job, early = s.de_job, s.report
        await job
        return s, job, early

    s, job, early = run(go())
    assert early.de is None and early.ds == s.report.ds  # closed forms at once
    assert job.state == "done" and s.de_job is None and s.de_note == ""
    assert report_set_while == [False, True], "the exact de was shown outside one update"
    from effdim import dimensions

    assert s.report.de == dimensions(parse_model("4:3,3,3,3")).de and s.report.de_status == "proven"


def test_a_job_past_the_time_limit_is_stopped_and_the_user_told():
    from effdim_app.config import ServerLimits
    from effdim_app.jobs import JobRunner

    async def go():
        s = ModelState(FIG2, limits=ServerLimits(quick_ms=0), jobs=JobRunner(workers=1, timeout=0.01))
        s.load_notation("20:10,10,10")
        first = s.de_job
        s.load_notation("21:10,10,10")  # a new model: the old job is cancelled
        await s.de_job
        return s, first

    s, first = run(go())
    assert first.state == "cancelled"
    assert s.report.de is None and "time limit" in s.de_note and str(s.model) == "21:10,10,10"


def test_every_upload_is_read_in_a_worker_and_a_bad_one_keeps_the_data():
    from effdim_app.jobs import JobRunner

    rows = "\n".join(f"{i % 3},{i % 2},{(i // 2) % 4}" for i in range(50_000))
    good = ("A,B,C\n" + rows + "\n").encode()
    bad = ("A,B\n" + "1,2\n" * 70_000 + "1\n").encode()

    async def go():
        d = DataState(jobs=JobRunner(workers=1))
        d.load_upload("small.csv", b"A,B\n1,x\n2,y\n")
        small = d.load_job is not None  # a small file too: no parsing on the server's loop
        await d.load_job
        d.load_upload("big.csv", good)
        first = (d.load_job is not None, d.message)
        await d.load_job
        loaded = d.dataset
        d.load_upload("bad.csv", bad)
        await d.load_job
        return d, small, first, loaded

    d, small, (had_job, reading), loaded = run(go())
    assert small and had_job and "Reading upload 'big.csv'" in reading
    assert loaded.columns == ("A", "B", "C") and loaded.n_rows == 50_000
    assert d.dataset is loaded and d.message_kind == "danger" and "Still using upload 'big.csv'" in d.message


def raises_a_library_error(content, *, name, progress=None, **limits):
    """An upload reader that fails as a format's library may (module level: a worker unpickles it by name)."""
    raise TypeError("unhashable type: 'numpy.ndarray'")


def test_an_upload_that_fails_inside_reads_as_one_effdim_line_naming_the_file(monkeypatch):
    """Whatever a reader raises in the worker, the user reads the file's name and an effdim line, never
    the library's words, and keeps her data."""
    from effdim_app import tasks
    from effdim_app.jobs import JobRunner

    monkeypatch.setattr(tasks, "read_upload_task", raises_a_library_error)

    async def go():
        d = DataState(jobs=JobRunner(workers=1))
        d.load_bundled("stouffer-toby")
        d.load_upload("survey.parquet", b"PAR1 whatever")
        await d.load_job
        return d

    d = run(go())
    assert d.message == (
        "Could not load upload 'survey.parquet': an unexpected error inside effdim, not a problem with your "
        "input (the server's log has the details). Still using bundled data set 'stouffer-toby'."
    )
    assert d.message_kind == "danger" and d.dataset.columns == ("A", "B", "C", "D")


@pytest.mark.exclusive  # bounds on seconds and on the event loop's gaps
def test_a_wide_upload_is_refused_by_its_header_without_stalling_the_loop():
    """231 kB, 22,000 columns: once 31 s of another session's edit; now a worker refuses it on its header."""
    from effdim_app.jobs import JobRunner

    header = ",".join(f"c{i}" for i in range(22_000))
    wide = (
        header + "\n" + "\n".join(",".join("01"[(i + r) % 2] for i in range(22_000)) for r in range(2)) + "\n"
    ).encode()
    assert 200_000 < len(wide) < 250_000

    async def go():
        d = DataState(jobs=JobRunner(workers=1))
        d.load_bundled("stouffer-toby")
        gaps, last = [], time.perf_counter()
        d.load_upload("wide.csv", wide)
        job = d.load_job
        while not job.finished:  # the loop keeps turning while the worker reads
            await asyncio.sleep(0.01)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now
        return d, job, max(gaps)

    start = time.perf_counter()
    d, job, gap = run(go())
    assert time.perf_counter() - start < 10
    assert "the header has 22,000 columns, more than the limit of 2,000" in d.message
    assert d.message_kind == "danger" and d.dataset.columns == ("A", "B", "C", "D")  # the data in use stay
    assert gap < 0.5, gap


def test_tree_edit_keeps_lc_sweep_results_but_clears_model_sweep_results():
    """The LC model over all columns does not use the edited tree: editing the tree leaves its results."""
    scores = ScoresState(ModelState(), DataState())
    assert scores.data.load_bundled("stouffer-toby")
    scores.results = ["stand-in result"]
    scores.models.set_card(2, node="O2")
    assert scores.results == ["stand-in result"]
    scores.mapping = "model"
    assert scores.results == []


def test_a_model_nested_a_thousand_deep_is_refused_with_a_message():
    s = ModelState(FIG2)
    assert not s.load_notation("2(" * 1000 + "2" + ")" * 1000)
    assert "nested more than 200 levels deep" in s.message and s.message_kind == "danger"
    assert not s.load_json("[" * 1000 + "]" * 1000)
    assert "nested too deeply" in s.message
    chain = {
        "nodes": [{"name": f"{kind}{i}", "card": 2, "hidden": kind == "H"} for i in range(300) for kind in "HO"]
        + [{"name": "O", "card": 2, "hidden": False}],
        "edges": [[f"H{i}", f"H{i + 1}"] for i in range(299)]
        + [[f"H{i}", f"O{i}"] for i in range(300)]
        + [["H299", "O"]],
        "root": "H0",
    }
    assert not s.load_json(chain)  # a parsed dict: past the text's length check, the tree's depth is refused
    assert "more than 200 levels deep" in s.message
    assert s.model == parse_model(FIG2)


def test_empty_json_file_is_refused_by_name():
    s = ModelState()
    assert not s.load_json(b"")
    assert "the file is empty" in s.message


def test_default_sweep_stops_where_de_reaches_dc(monkeypatch):
    """With 'to' = 0 the worker stops at de = dc; the server computes no dimension to find where."""

    def no_dimensions_here(*args, **kwargs):
        raise AssertionError("a dimension was computed on the server's event loop")

    scores = ScoresState(ModelState(), DataState(), restarts=1)
    scores.data.load_bundled("stouffer-toby")  # four binary items: dc = 15, LC 4:2,2,2,2 has de = 15
    monkeypatch.setattr(sys.modules["effdim.dimensions"], "_lc_rank", no_dimensions_here)  # every local de
    assert scores._sweep_range() == (None, True)
    scores.card_min = 2
    assert scores._sweep_range() == ([2, 3, 4, 5, 6, 7, 8], True)  # up to the largest regular |X|
    scores.past_saturation = True
    assert scores._sweep_range() == ([2, 3, 4, 5, 6, 7, 8], False)
    scores.card_max = 6
    assert scores._sweep_range() == ([2, 3, 4, 5, 6], False)
    monkeypatch.undo()
    scores.param.update(card_min=1, card_max=0, past_saturation=False)
    results = run(scores.run_sweep())
    assert [r.card for r in results] == [1, 2, 3, 4]
    assert "Stopped at |H| = 4, where de = dc" in scores.status


def test_upload_leaves_out_identifier_columns_detects_semicolons_and_latin1():
    d = DataState()
    rows = ["id;A;B"] + [f"{i};{'é' if i % 2 else 'e'};{i % 3}" for i in range(60)]
    assert d.load_upload("ids.csv", "\n".join(rows).encode("latin-1"))
    assert d.dataset.columns == ("A", "B") and d.full.columns == ("A", "B")  # left out while reading
    assert "Left out 'id' (more than 50 distinct values" in d.message
    assert "semicolons" in d.message and "Latin-1" in d.message
    assert not d.use_columns(["A"]) and d.dataset.columns == ("A", "B")
    assert d.load_upload("utf16.csv", "A,B\né,1\ne,2\n".encode("utf-16"))
    assert "UTF-16" in d.message and d.dataset.states[0] == ("é", "e")  # as the CLI reads it
    assert d.load_upload("plain.csv", b"A,B,C\n1,2,3\n2,1,4\n")
    assert d.use_columns(["C", "A"]) and d.dataset.columns == ("A", "C")  # the file's order


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
    """The search gets the computation's time limit less a margin; stopped by it, it still opens its best tree
    and says why it ended."""
    from effdim_app.jobs import JobRunner
    from effdim_app.state import scores as scores_module

    monkeypatch.setattr(scores_module, "SEARCH_MIN_SECONDS", 0.3)
    m, d = ModelState(FIG2), DataState()
    s = ScoresState(m, d, restarts=1, jobs=JobRunner(workers=1, timeout=4.0))  # a search of 0.3 s
    d.load_bundled("hlc-figure2")
    learned = run(s.run_learn())
    assert learned is not None and learned.stopped == "max_time"
    assert "the time limit ended the search" in s.status and m.model == learned.model


def test_learn_structure_needs_data():
    s = ScoresState(ModelState(FIG2), DataState())
    assert run(s.run_learn()) is None
    assert s.message == "Load a data set first."


def test_demo_numbers_come_from_the_engine():
    from effdim.dimensions import dimensions
    from effdim_app.demo_script import demo_steps, first_lc_below_bound

    lc = first_lc_below_bound()
    row = dimensions(parse_model(lc)).local[0]
    assert row.de < row.db
    earlier = presets.TABLE1_LC[: presets.TABLE1_LC.index(lc)]
    assert all(dimensions(parse_model(m)).local[0].de == dimensions(parse_model(m)).local[0].db for m in earlier)
    table1, figure2, irregular = demo_steps()
    assert (
        table1.notation == lc
        and f"de = {row.de}" in table1.sentence
        and f"db = min(ds, dc, dp) = {row.db}" in table1.sentence
    )
    assert "ds = 41" in figure2.sentence and "de = 23" in figure2.sentence
    assert irregular.notation == presets.PRESETS[presets.IRREGULAR]
    state = ModelState(irregular.notation)
    assert f"as drawn it has ds = {state.drawn_ds}" in irregular.sentence
    assert f"has ds = {state.report.ds} and de = {state.report.de}" in irregular.sentence


def test_moving_a_state_reorders_the_column_in_the_data_in_use():
    data = DataState()
    assert data.load_upload("s.csv", b"id,freq,item\n1,sometimes,1\n2,never,2\n3,often,1\n")
    assert data.use_columns(["freq", "item"])
    assert data.move_state("freq", "often", -2)
    assert data.full.states[1] == data.dataset.states[0] == ("often", "sometimes", "never")
    assert data.dataset.columns == ("freq", "item") and data.dataset.n_rows == 3
    assert not data.move_state("freq", "seldom", 1)
    assert data.message == "The order was not changed: column 'freq' has no state 'seldom'."
    assert data.dataset.states[0] == ("often", "sometimes", "never")
