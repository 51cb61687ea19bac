"""The "Model & dimensions" tab's controls: the selected node's and regularity's.

The tree drawing itself is :mod:`.tree_view`, the dimension totals and table
:mod:`.dimensions_view`.
"""

from __future__ import annotations

import pandas as pd
import panel as pn
from panel.viewable import Viewer

from .. import explain
from ..state import ModelState
from ..style import ALERT_CSS, CARD_CSS, TABLE_CSS
from .widgets import SMALL_TABLE, heading, html, in_one_message, message, plain, typed

__all__ = ["SelectionPanel", "RegularizationPanel"]

STEP_COLUMNS = dict(step="int64", node="object", rule="object", **{"old → new": "object"})


class SelectionPanel(Viewer):
    """Controls acting on the selected node."""

    def __init__(self, state: ModelState, **params):
        super().__init__(**params)
        self.state = state
        self.info = html("", sizing_mode="stretch_width", margin=(0, 5), css_classes=["effdim-selinfo"])
        # Text, not a number spinner: a spinner clamps or drops out-of-range
        # values silently, and its value reaches the server only after
        # Panel's 50 ms debounce; Enter on a TextInput is an event, sent at once.
        self.card = pn.widgets.TextInput(label="States", value="2", width=55, css_classes=["effdim-card-input"])
        self.set_card = pn.widgets.Button(label="Set", width=55, margin=(24, 5, 5, 0), css_classes=["effdim-card-set"])
        self.name_input = pn.widgets.TextInput(label="Name", width=70, css_classes=["effdim-name-input"])
        self.rename = pn.widgets.Button(label="Rename", width=70, margin=(24, 5, 5, 0))
        self.new_card = pn.widgets.IntInput(label="New child's states", start=1, end=1000, value=2, width=130)
        self.add_obs = pn.widgets.Button(label="+ Observed child", sizing_mode="stretch_width")
        self.add_hid = pn.widgets.Button(label="+ Hidden child", sizing_mode="stretch_width")
        self.delete = pn.widgets.Button(label="Delete", color="danger", sizing_mode="stretch_width")
        self.make_root = pn.widgets.Button(label="Make root", sizing_mode="stretch_width")
        self.message = message(state)

        self.card.param.watch(in_one_message(self._card_entered), "enter_pressed")
        self.set_card.on_click(in_one_message(self._card_entered))  # Enter can be swallowed (JupyterLab)
        self.rename.on_click(
            in_one_message(lambda _: state.rename(self.name_input.value_input or self.name_input.value))
        )
        self.add_obs.on_click(in_one_message(lambda _: state.add_observed_child(card=self.new_card.value)))
        self.add_hid.on_click(in_one_message(lambda _: state.add_hidden_child(card=self.new_card.value)))
        self.delete.on_click(in_one_message(lambda _: state.delete()))
        self.make_root.on_click(in_one_message(lambda _: state.make_root()))
        state.param.watch(self._sync, ["selected", "model"])
        self._sync()

    def _card_entered(self, _=None) -> None:
        """Apply the States box; whatever the outcome, the box then shows the node's states."""
        node, model = self.state.selected, self.state.model
        if node is None or node not in model:
            return
        text = self.card.value_input if self.card.value_input is not None else self.card.value
        if text.strip() != str(model.card(node)):
            self.state.set_card(text)
        self._sync()  # a refused value does not stay in the box

    def _sync(self, *_) -> None:
        state, node = self.state, self.state.selected
        model = state.model
        if node is None or node not in model:
            self.info.object = "<p>Click a node in the tree to select it.</p>"
            for w in (
                self.card,
                self.set_card,
                self.name_input,
                self.rename,
                self.add_obs,
                self.add_hid,
                self.delete,
                self.make_root,
            ):
                w.disabled = True
            return
        hidden = model.is_hidden(node)
        kind = "hidden" if hidden else "observed"
        ne = plain(", ".join(f"{n}:{model.card(n)}" for n in model.neighbors(node)))
        role = " (root)" if node == model.root else ""
        self.info.object = (
            f"<div class='effdim-sel'><b>Selected: {plain(node)}</b>{role}<br>"
            f"{kind}, {model.card(node)} states<br><small>Ne({plain(node)}) = {{{ne}}}</small></div>"
        )
        self.card.param.update(value=str(model.card(node)), value_input=str(model.card(node)), disabled=False)
        self.set_card.disabled = False
        self.name_input.param.update(value=node, disabled=False)
        self.rename.disabled = False
        self.add_obs.disabled = not hidden
        self.add_hid.disabled = not hidden
        self.make_root.disabled = (not hidden) or node == model.root
        self.delete.disabled = node == model.root

    def __panel__(self):
        return pn.Column(
            heading(
                "Selected node",
                "Click a node in the tree. Edits the engine refuses leave the model unchanged and say why below.",
            ),
            self.info,
            pn.Row(self.card, self.set_card, self.name_input, self.rename, margin=0),
            html("<small>A new number of states applies on Enter or Set.</small>", margin=(0, 10)),
            self.new_card,
            pn.Row(self.add_obs, self.add_hid, margin=0, sizing_mode="stretch_width"),
            pn.Row(self.make_root, self.delete, margin=0, sizing_mode="stretch_width"),
            width=310,
            css_classes=["effdim-card"],
            stylesheets=[CARD_CSS],
        )


#: Inline styles of a box kept in the layout but not shown (a change of `visible` re-lays out the page), and
#: of the same box shown (BokehJS removes an inline style set to "", and keeps one left out).
HIDDEN, SHOWN = {"display": "none"}, {"display": ""}


def _alert_colours(kind: str) -> dict[str, str]:
    """Inline styles giving an alert the colours of the alert type ``kind`` (Panel's alert variables)."""
    return {
        "color": f"var(--{kind}-text-color)",
        "background-color": f"var(--{kind}-bg-subtle)",
        "border-color": f"var(--{kind}-border-subtle)",
    }


class RegularizationPanel(Viewer):
    """Regular or not; with auto-regularize, the regular equivalent and the step log."""

    def __init__(self, state: ModelState, **params):
        super().__init__(**params)
        self.state = state
        # Turning regular or irregular changes no layout property (visible, css_classes, sizes): each such
        # change re-lays out the whole page in BokehJS, which made those edits the slowest (docs/dashboard.md).
        # The summary's colour is set by inline styles (its alert type stays), and the box of the step log and
        # the Replace button is hidden by an inline style, not by `visible`.
        self.summary = pn.pane.Alert(
            "", alert_type="success", sizing_mode="stretch_width", margin=(5, 5), stylesheets=[ALERT_CSS]
        )
        self.adopt = pn.widgets.Button(label="Replace the edited model by its regular equivalent", color="warning")
        self.adopt.on_click(in_one_message(lambda _: state.adopt_regular()))
        # The log exists only for an irregular model: built the first time one is shown, so a page opening on
        # a regular model does not make its table (docs/robustness.md, "Opening a page").
        self.steps: pn.widgets.Tabulator | None = None
        self._steps_layout = "fit_data_stretch"  # set_font_scale: measured again in projector mode
        self.regular_equivalent = pn.Column(self.adopt, margin=0, sizing_mode="stretch_width", styles=HIDDEN)
        state.param.watch(self._update, ["regularization", "violations", "auto_regularize"])
        self._update()

    def set_font_scale(self, scale: float) -> None:
        """Projector mode: the step log's columns are laid out again for the larger type (Tabulator keeps
        the widths of its first layout: switched on with a log shown, headers were cut to "s…"), sharing
        the log's width, their text wrapped (sized to their text, a removal's "old → new" ran past the
        log's right edge, to be scrolled to)."""
        self._steps_layout = "fit_columns" if scale > 1 else "fit_data_stretch"
        if self.steps is not None:
            self.steps.layout = self._steps_layout

    def _steps_table(self) -> pn.widgets.Tabulator:
        if self.steps is None:
            self.steps = pn.widgets.Tabulator(
                typed(**STEP_COLUMNS),
                show_index=False,
                disabled=True,
                selectable=False,
                sortable=False,
                sizing_mode="stretch_width",
                layout=self._steps_layout,
                css_classes=["effdim-steps"],
                stylesheets=[TABLE_CSS],
                formatters={"old → new": {"type": "textarea"}},  # a removal's long text wraps, not cut off
                configuration=SMALL_TABLE,
                header_tooltips={
                    "rule": "shrink: |H| to Π|Ne(H)|/max|Ne(H)| (Lemma 4.1). remove: a hidden node with two "
                    "neighbours, one hidden, and |H| ≥ the smaller one copies it and is removed.",
                },
            )
            self.regular_equivalent.objects = [self.steps, self.adopt]
        return self.steps

    @property
    def log_shown(self) -> bool:
        """Whether the step log and the Replace button are on screen."""
        return self.regular_equivalent.styles != HIDDEN

    def _say(self, kind: str, text: str, log: bool) -> None:
        """The summary in the colours of the alert ``kind`` ('success', 'warning', 'danger'), the log shown
        if ``log``."""
        self.summary.param.update(object=text, styles=_alert_colours(kind))
        self.regular_equivalent.styles = SHOWN if log else HIDDEN

    def _update(self, *_) -> None:
        state = self.state
        if state.is_regular:
            self._say(
                "success",
                "**Regular.** Every hidden node H has |H| ≤ Π|Ne(H)| / max|Ne(H)| (Lemma 4.1), strictly "
                "where H has two neighbours one of which is hidden; Corollary 4.1 applies.",
                log=False,
            )
            return
        reasons = "\n".join(f"- {plain(v.message)}" for v in state.violations)
        reg = state.regularization
        if state.auto_regularize:
            rows = [
                {"step": i + 1, "node": s.node, "rule": s.rule, "old → new": f"{s.old} → {s.new}"}
                for i, s in enumerate(reg.steps)
            ]
            table = self._steps_table()
            self._say(
                "warning",
                f"**Irregular; dimensions are those of the regular equivalent** "
                f"`{reg.model}` (same distributions over the observed variables, so the same de; "
                f"Lemma 4.1). Why:\n{reasons}",
                log=True,
            )
            # its rows after the box is shown: Tabulator draws no rows into a hidden table (nor when shown again)
            table.value = pd.DataFrame(rows)
        else:
            self._say(
                "danger",
                f"**The model is irregular** (auto-regularize is off; dimensions are of the model as "
                f"edited, and Corollary 4.1 need not hold). Why:\n{reasons}",
                log=False,
            )

    def __panel__(self):
        return pn.Column(
            heading("Regularity", explain.regularity_rules_markdown()),
            self.summary,
            self.regular_equivalent,
            sizing_mode="stretch_width",
        )
