"""The views render into a Bokeh document and show the job states (no browser)."""

from __future__ import annotations

import asyncio
import warnings

from bokeh.document import Document
from waiting import run_in_fresh_loop

from effdim_app.config import ServerLimits
from effdim_app.dashboard import create_app
from effdim_app.jobs import JobRunner


def _rendered(app):
    doc = Document()
    app.tabs.get_root(doc)
    app.model_panel.__panel__().get_root(doc)
    app.dimensions.sight.seen = True  # the page scrolled to the Dimensions section (first_sight.py)
    return doc


def test_a_huge_model_renders_with_its_closed_forms_and_the_reason():
    app = create_app("5(3(2,2),2,3(2,2))")
    _rendered(app)
    assert app.models.load_notation("3:1000000000,2")
    totals = app.dimensions.totals.object
    assert "data-stat='ds'>2" in totals and "data-stat='de'>—" in totals and "not computed" in totals
    assert "more than one computation may use" in app.dimensions.de_note.object
    frame = app.dimensions.table.value
    assert list(frame["de"]) == ["—"] and list(frame["dp"]) == ["2·10⁹"]  # as the stat boxes show it


def test_numbers_past_the_browser_s_precision_show_as_in_the_stat_boxes_and_exact_in_the_csv():
    """The browser's numbers are doubles: dc of 60 binary leaves, 2^60 - 1, once arrived one too high (and
    Bokeh warned of the loss); the table shows it as the stat boxes do, the CSV exactly."""
    app = create_app("5(3(2,2),2,3(2,2))")
    doc = _rendered(app)
    assert app.models.load_notation("2:" + ",".join(["2"] * 60))
    shown = app.dimensions.table.value.iloc[0]
    assert shown["dc"] == "1.15·10¹⁸" and shown["ds"] == "121"
    assert all(isinstance(value, str) for value in shown)
    csv = app.dimensions._frame().to_csv(index=False)
    assert f",{2**60 - 1}," in csv
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a number Bokeh cannot send exactly warns
        doc.to_json()


def test_a_running_job_shows_progress_line_and_cancel():
    async def go():
        jobs = JobRunner(workers=1)
        app = create_app("5(3(2,2),2,3(2,2))", limits=ServerLimits(quick_ms=0), jobs=jobs)
        _rendered(app)
        app.models.load_notation("8:6,6,6")
        line = app.dimensions.de_job
        shown = line.row.visible, line.text.object
        app.dimensions.de_job.cancel.clicks += 1  # the Cancel button
        await asyncio.sleep(0.3)
        return app, shown, line

    app, (visible, text), line = run_in_fresh_loop(go())
    assert visible and "Exact de:" in text
    assert not line.row.visible and "cancelled" in app.models.de_note


def test_the_structure_search_s_tree_is_drawn_in_the_data_tab_while_there_is_one():
    import panel as pn

    from effdim import parse_model
    from effdim_app.views import ScoresPanel

    app = create_app("5(3(2,2),2,3(2,2))")
    scores = app.scores
    panel = ScoresPanel(scores)  # the app builds its own when the Data tab first opens
    panel.__panel__().get_root(Document())
    assert not panel.learned_box.visible and panel.learned_drawing is None  # no figure until a search sends a tree
    scores.param.update(
        learned_tree=parse_model("H1:2(H2:2(A:2,B:2,C:2),D:2,E:2,H3:3(F:2,G:2))"),
        learned_note="Best tree so far (3 hidden nodes)",
    )
    drawn = panel.learned_drawing._nodes.data
    low = panel.learned_drawing.figure.height
    assert panel.learned_box.visible and "Best tree so far" in panel.learned_note.object
    assert len(panel.learned_box.select(pn.pane.Bokeh)) == 1
    assert drawn["kind"].count("hidden") == 3 and sorted(drawn["node"])[:3] == ["A", "B", "C"]
    # a better tree from the search: the same figure redrawn, not a second one
    figure = panel.learned_drawing
    scores.param.update(
        learned_tree=parse_model("H1:2(H2:2(A:2,B:2,C:2),D:2,H4:2(E:2,H3:3(F:2,G:2)))"),
        learned_note="Best tree so far (4 hidden nodes)",
    )
    assert panel.learned_drawing is figure and len(panel.learned_box.select(pn.pane.Bokeh)) == 1
    assert figure._nodes.data["kind"].count("hidden") == 4 and "4 hidden nodes" in panel.learned_note.object
    # a deep, wide tree (a search over 40 columns) is drawn taller: each layer its room, the turned labels below
    deep = "H1:2(" + ",".join(f"H{g}:2(" + ",".join(f"V{g}_{i}:2" for i in range(8)) + ")" for g in range(2, 7))
    scores.param.update(learned_tree=parse_model(deep + ",H7:2(H8:2(A:2,B:2,C:2),D:2,E:2))"), learned_note="Deep")
    assert low == 280 < figure.figure.height and figure._nodes.data["angle"][0] > 0
    scores.param.update(learned_tree=None, learned_note="")
    assert not panel.learned_box.visible


def test_the_entry_points_stay_callable_once_their_modules_are_loaded():
    """A submodule named like an entry point (``effdim_app.app``) replaced the function on first import:
    a second ``effdim_app.app()`` in a notebook failed with "'module' object is not callable"."""
    import effdim_app
    import effdim_app.dashboard
    import effdim_app.server

    assert effdim_app.app is effdim_app.dashboard.app
    assert effdim_app.create_app is effdim_app.dashboard.create_app
    assert (effdim_app.serve, effdim_app.session_page, effdim_app.show) == (
        effdim_app.server.serve,
        effdim_app.server.session_page,
        effdim_app.server.show,
    )


def test_every_button_sends_what_its_click_changes_as_one_message():
    """A click's changes reach the browser together (``effdim_app.views.widgets.in_one_message``): "Load data
    set" sent eleven messages, laid out one by one (``benchmarks/dashboard/bench_job_messages.py``). A coroutine handler
    runs a job, whose start and end its state sends as one message (``ScoresState._run``)."""
    import inspect

    import panel as pn

    from effdim_app.views import widgets

    app = create_app("5(3(2,2),2,3(2,2))")
    for tab in (1, 2, 0):  # the Data & scores and Experiments tabs are built when first opened
        app.tabs.active = tab
    buttons = pn.Column(app.tabs, app.model_panel, app.demo).select(pn.widgets.Button)
    handlers = {
        button.label: watcher.fn
        for button in buttons
        for watcher in button.param.watchers["clicks"]["value"]
        if watcher.fn.__qualname__ != "Syncable._param_change"  # Panel's own, sending the click to the browser
    }
    assert {"Apply notation", "Load data set", "Apply proposed model", "■ Cancel"} <= set(handlers)
    one_message = widgets.in_one_message(lambda: None).__code__
    loose = [
        label
        for label, fn in handlers.items()
        if getattr(fn, "__code__", None) is not one_message and not inspect.iscoroutinefunction(fn)
    ]
    assert not loose, f"clicks whose changes go out one by one: {loose}"


def test_the_data_tab_opens_without_tables_or_figures_and_makes_each_when_it_has_rows():
    """A hidden Tabulator still costs the browser its build: the Data & scores tab's four tables, empty on a new
    page, were about 0.4 s of its first opening; a hidden figure is laid out again with every change the page
    receives (docs/dashboard.md, "Opening the Data & scores tab")."""
    import panel as pn

    app = create_app("5(3(2,2),2,3(2,2))")
    app.tabs.active = 1
    tab = app.tabs[1]
    assert not tab.select(pn.widgets.Tabulator)
    assert not tab.select(pn.pane.Bokeh)
    assert app.data.load_bundled("hlc-figure2")
    (table,) = tab.select(pn.widgets.Tabulator)  # the data's columns, shown with their rows
    assert table.visible and list(table.value["column"]) == list(app.data.dataset.columns)
