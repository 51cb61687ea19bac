"""The proposal of a new hidden node from a bivariate residual, with Apply, Dismiss and Undo.

Displays :class:`effdim_app.state.ProposalState`: what the proposed model is
(notation, ds, de, the score change when known) and the buttons that apply it,
dismiss it, or undo it once applied. Shown in the "Fitted model" view
(:mod:`.fitted_view`) under the heatmap whose click made the proposal.
"""

from __future__ import annotations

import html

import panel as pn
from panel.viewable import Viewer

from ..state import ProposalState
from ..style import HTML_CSS
from .widgets import in_one_message

__all__ = ["ProposalView"]


class ProposalView(Viewer):
    """The proposed model in words and the buttons that decide on it."""

    def __init__(self, state: ProposalState, **params):
        super().__init__(**params)
        self.state = state
        self.text = pn.pane.HTML(
            "", sizing_mode="stretch_width", css_classes=["effdim-model-proposal"], stylesheets=[HTML_CSS]
        )
        self.apply = pn.widgets.Button(label="Apply proposed model", color="primary", width=180)
        self.dismiss = pn.widgets.Button(label="Dismiss", width=90)
        self.undo = pn.widgets.Button(label="Undo", width=90)
        self.apply.on_click(in_one_message(lambda _: state.apply()))
        self.dismiss.on_click(in_one_message(lambda _: state.dismiss()))
        self.undo.on_click(in_one_message(lambda _: state.undo()))
        state.param.watch(self._show, ["pending", "text", "applied"])
        self._show()

    def _show(self, *_) -> None:
        state = self.state
        self.text.object = f"<p class='effdim-note'>{html.escape(state.text)}</p>" if state.text else ""
        self.apply.visible = self.dismiss.visible = state.pending is not None
        self.undo.visible = state.applied

    def __panel__(self):
        return pn.Column(self.text, pn.Row(self.apply, self.dismiss, self.undo), sizing_mode="stretch_width", margin=0)
