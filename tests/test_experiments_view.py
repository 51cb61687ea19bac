"""The dashboard's Experiments tab over the results shipped in the package (no browser)."""

import shutil

import holoviews as hv

from effdim.experiments.committed import RESULTS_DIR, SUMMARY_FILES, load_committed
from effdim.experiments.plots import lc_summary_figure, table2_figure
from effdim_app.views.experiments_view import ExperimentsPanel


def test_shipped_results_cover_both_sections():
    results = load_committed()
    labels = set(results.lc_summary["label"])
    assert {"2:2,2,2,2", "8:2,2,2,2", "8:2,2,2,2 deterministic"} <= labels
    assert set(results.hlc_table2["score"]) == {"bic", "bic+", "cs", "cs+"}
    assert results.hlc_table2["n"].max() == 243000
    assert "Table 2" in results.hlc_markdown


def test_every_generator_can_be_drawn():
    results = load_committed()
    for label in dict.fromkeys(results.lc_summary["label"]):
        assert isinstance(lc_summary_figure(results.lc_summary, label), hv.Layout)
    assert isinstance(table2_figure(results.hlc_table2), hv.Overlay)


def test_panel_offers_the_generators_and_defaults_to_figure_4():
    panel = ExperimentsPanel()
    assert panel.generator.value == "8:2,2,2,2"
    assert "8:2,2,2,2 deterministic" in panel.generator.options


def test_missing_results_are_reported_not_raised(tmp_path):
    for name in SUMMARY_FILES[:-1]:
        shutil.copy(RESULTS_DIR / name, tmp_path / name)
    panel = ExperimentsPanel(tmp_path)
    assert panel.results is None
    assert "hlc_table2.md" in panel.__panel__().object


def test_figures_are_drawn_once_per_process_and_copied_for_each_session(monkeypatch):
    """HoloViews draws a figure in about a second; every session after the first gets a copy of it, its models
    its own (a Bokeh model belongs to one document)."""
    from effdim_app.views import experiments_view

    drawn = []
    render = experiments_view._render
    monkeypatch.setattr(experiments_view, "_render", lambda *args: drawn.append(args) or render(*args))
    monkeypatch.setattr(experiments_view, "_DRAWN", {})
    results = load_committed()
    sessions = [
        experiments_view._figures(RESULTS_DIR, lc_summary_figure, results.lc_summary, "2:2,2,2,2") for _ in range(2)
    ]
    assert len(drawn) == 1 and len(sessions[0]) == len(sessions[1]) == 2
    assert not {m.id for f in sessions[0] for m in f.references()} & {m.id for f in sessions[1] for m in f.references()}
    other = experiments_view._figures(RESULTS_DIR, lc_summary_figure, results.lc_summary, "8:2,2,2,2")
    assert len(drawn) == 2 and other[0].title.text != sessions[0][0].title.text  # another generator, drawn anew


def test_the_tab_says_the_figures_are_being_drawn_until_they_are(monkeypatch):
    """The layout a session first sends holds a line for each section saying its figures are being drawn (the
    browser test sees the line or the figures, whichever comes first: a copy can arrive before the line is laid
    out, tests/ui/test_experiments_tab.py). Served, the drawing runs after this layout was sent; here it is
    held back (outside a server Panel would run it at once)."""
    import panel as pn

    monkeypatch.setattr(pn.state, "execute", lambda *args, **kwargs: None)
    panel = ExperimentsPanel()
    shown = [
        [getattr(part, "object", "") for row in box.objects for part in row.objects]
        for box in (panel.lc_panels, panel.hlc_panel)
    ]
    assert any("Drawing the Section 5 figures" in str(text) for text in shown[0]), shown
    assert any("Drawing the Section 6 figure" in str(text) for text in shown[1]), shown
