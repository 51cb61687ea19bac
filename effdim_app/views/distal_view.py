"""The "Distal outcomes" card of the fitted model: columns left out of the model, by class.

Displays :class:`effdim_app.state.DistalState`: the columns of the data that
the shown fit does not use, the step-3 method, a button that estimates, and
the results as the report draws them (:func:`effdim.report.distal_html`: each
outcome's class means or category probabilities with 95 % intervals, a
table and the Wald test of equality). Shown at the foot of the fitted model
(:mod:`.fitted_view`).
"""

from __future__ import annotations

import panel as pn
from panel.viewable import Viewer

from effdim.report import distal_html

from ..figures import PROFILE_CSS
from ..state import DistalState
from ..state.distal import DISTAL_METHODS
from ..style import HTML_CSS
from .widgets import in_one_message, message

__all__ = ["DistalView"]

#: The report's classes that :func:`effdim.report.distal_html` writes, in the dashboard's type (the pane's own
#: stylesheet: it reaches only the pane's markup).
DISTAL_CSS = """
h3 { font-size: 1em; margin: 12px 0 4px; }
.node-row { display: flex; flex-wrap: wrap; gap: 4px 24px; align-items: flex-start; }
.panels svg { display: block; zoom: var(--effdim-font-scale, 1); }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; margin: 4px 0; }
th, td { padding: 2px 10px; border-bottom: 1px solid #d5dde8; text-align: left; }
th { background: #f3f6f9; font-weight: 600; }
td.num, th.num { text-align: right; white-space: nowrap; }
p { margin: 4px 0; }
.note { color: #4a5a6a; font-size: 0.9em; }
.warn { color: #8a5200; font-size: 0.9em; }
"""
EXPLAIN = (
    "Columns left out of the model, by class (the three-step method): the BCH and ML corrections undo the "
    "classification error that tabulating each row's most probable class leaves (Vermunt 2010)."
)


class DistalView(Viewer):
    """The outcome and method choice, the step-1 uncertainty box, the Estimate button, and the results."""

    def __init__(self, state: DistalState, **params):
        super().__init__(**params)
        self.state = state
        self.outcomes = pn.widgets.MultiChoice.from_param(
            state.param.outcomes, name="Outcomes (columns left out of the model)", width=330,
            css_classes=["effdim-distal-outcomes"],
        )  # fmt: skip
        self.method = pn.widgets.Select.from_param(
            state.param.method, name="Method", options={label: key for key, label in DISTAL_METHODS.items()}, width=250
        )
        self.step1 = pn.widgets.Checkbox.from_param(
            state.param.step1, name="Add the measurement model's uncertainty to the SEs", width=250,
            css_classes=["effdim-distal-step1"],
        )  # fmt: skip
        self.run = pn.widgets.Button(label="Estimate", color="primary", width=110, css_classes=["effdim-distal-run"])
        self.run.on_click(in_one_message(lambda _: state.estimate()))
        self.none_left = pn.pane.HTML(
            "<p class='effdim-note'>Every column of the data is in the model: leave a column out of it (the "
            "columns in use, in the data panel) to relate it to the classes.</p>",
            stylesheets=[HTML_CSS],
            visible=False,
        )
        self.results = pn.pane.HTML(
            "",
            sizing_mode="stretch_width",
            css_classes=["effdim-distal"],
            stylesheets=[HTML_CSS, PROFILE_CSS, DISTAL_CSS],
        )
        method = pn.Column(self.method, self.step1, margin=0)  # the box under the method it qualifies
        self.controls = pn.FlexBox(self.outcomes, method, self.run, flex_wrap="wrap", align_items="flex-end")
        state.param.watch(self._render, ["results", "candidates"])
        self._render()

    def _render(self, *_) -> None:
        state = self.state
        self.none_left.visible = not state.candidates
        self.controls.visible = bool(state.candidates)
        self.results.object = distal_html(state.results)

    def __panel__(self):
        return pn.Column(
            pn.pane.HTML("<div class='effdim-h'>Distal outcomes</div>", stylesheets=[HTML_CSS], margin=(10, 5, 0, 5)),
            pn.pane.HTML(f"<p class='effdim-note'>{EXPLAIN}</p>", stylesheets=[HTML_CSS], sizing_mode="stretch_width"),
            self.none_left,
            self.controls,
            message(self.state, keep_height=False),
            self.results,
            sizing_mode="stretch_width",
            css_classes=["effdim-distal-card"],
        )
