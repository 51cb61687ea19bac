"""The Model tab's dimensions panel without a browser (effdim_app.views.dimensions_view)."""

from waiting import run_in_fresh_loop as run

from effdim_app.state import ModelState
from effdim_app.views.dimensions_view import DimensionsPanel

FIG2 = "5(3(2,2),2,3(2,2))"


def test_the_explanation_says_the_whole_tree_rank_once_it_is_computed_and_forgets_it_after_an_edit():
    state = ModelState(FIG2)
    panel = DimensionsPanel(state)
    panel.build_details()  # as when the browser first shows the section
    panel.explain_card.collapsed = False
    assert "direct rank of the whole tree not asked for" in panel.totals_note.object
    run(state.verify_direct())
    assert "direct rank of the whole tree: 23" in panel.totals_note.object
    assert "not asked for" not in panel.totals_note.object
    state.select("O1")
    state.set_card(3)
    assert "not asked for" in panel.totals_note.object
