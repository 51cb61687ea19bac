"""One binding style per kind of link in the views (CONTRIBUTING.md, "Binding a view to its state").

* an input that edits a parameter is made with ``Widget.from_param(state.param.name, ...)``: two-way, so the
  widget also follows when the state changes the parameter itself;
* the state's changes reach the view through ``state.param.watch(self._update, [names])`` (or
  ``@param.depends(..., watch=True)``), one method per group of parameters that redraw together;
* an action (a click, a key, a pick that calls a state method) through ``on_click`` or a watcher calling the
  state's method.

Never ``.link``, a reactive expression, or a watcher that ``setattr``s a state parameter from a widget.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from bokeh.document import Document

from effdim_app.dashboard import create_app

VIEWS = Path(__file__).resolve().parent.parent / "effdim_app" / "views"
#: A widget's change written into a state's parameter by hand, instead of ``from_param``.
SETATTR_ON_STATE = re.compile(r"lambda \w+: setattr\((self\.)?state\b")


@pytest.mark.parametrize("path", sorted(VIEWS.glob("*.py")), ids=lambda p: p.name)
def test_views_bind_widgets_to_parameters_with_from_param(path):
    source = path.read_text(encoding="utf-8")
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            assert node.func.attr not in ("link", "jslink"), (
                f"{path.name}:{node.lineno}: .{node.func.attr}(): bind the widget with Widget.from_param"
            )
        assert not (isinstance(node, ast.Attribute) and node.attr == "rx"), (
            f"{path.name}:{node.lineno}: .rx: update the view from a param.watch watcher"
        )
    for number, line in enumerate(source.splitlines(), 1):
        assert not SETATTR_ON_STATE.search(line), (
            f"{path.name}:{number}: a watcher setattr()s the state: bind the widget with Widget.from_param"
        )


def test_the_scores_and_tree_inputs_follow_their_parameters_both_ways():
    from effdim_app.views import ScoresPanel

    app = create_app("5(3(2,2),2,3(2,2))")
    panel = ScoresPanel(app.scores)
    panel.__panel__().get_root(Document())
    for name in ("climb_score", "learn_score"):
        widget = getattr(panel, name)
        other = next(value for value in widget.options.values() if value != widget.value)
        setattr(app.scores, name, other)  # the state changes it (a preset, a shared link)
        assert widget.value == other, name
        first = next(iter(widget.options.values()))
        widget.value = first  # the user picks
        assert getattr(app.scores, name) == first, name
    prior = next(value for value in panel.cs_prior.options.values() if value != app.scores.cs_prior)
    app.scores.cs_prior = prior
    assert panel.cs_prior.value == prior
    tree = app.tree
    tree.mode = "regular"
    assert tree._mode.value == "regular"
    tree._mode.value = "edited"
    assert tree.mode == "edited"


def test_the_draw_choice_shows_only_while_the_model_is_irregular():
    app = create_app("5(3(2,2),2,3(2,2))")
    assert not app.tree._mode_row.visible
    app.models.select("H2")
    app.models.set_card(2)  # H1 becomes irregular
    assert app.tree._mode_row.visible
    app.models.undo()
    assert not app.tree._mode_row.visible
