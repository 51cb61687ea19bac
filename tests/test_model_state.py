"""The tree editor's state (effdim_app.state.ModelState) without a browser: edits, undo, presets, regularization,
layout, the drawing's data, and the server's limits on models.
"""

from __future__ import annotations

import contextlib
import json
import sys
import time

import pytest
from waiting import run_in_fresh_loop as run

from effdim import HLCModel, parse_model
from effdim.treelayout import tree_layout
from effdim_app import presets
from effdim_app.state import ModelState

FIG2 = "5(3(2,2),2,3(2,2))"


def rows(state: ModelState) -> dict[str, tuple]:
    return {r.hidden: (r.lc, r.ds, r.de, r.dc, r.dp, r.db, r.binding, r.deficit) for r in state.report.local}


def test_state_module_does_not_import_panel():
    """Nor does its Fitted model view's module (in the same fresh interpreter: each starts in seconds of CPU)."""
    import subprocess

    code = (
        "import sys, effdim_app.state, effdim_app.state.fitted\nprint('panel' in sys.modules, 'bokeh' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


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
    assert max(times) < 0.3, times  # every edit, the first included


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
