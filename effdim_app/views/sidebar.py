"""The sidebar: presets, the notation box, JSON import and export, auto-regularize, undo and redo."""

from __future__ import annotations

import io

import panel as pn
from panel.viewable import Viewer

from .. import explain, presets
from ..state import ModelState
from .shortcuts import Shortcuts, shortcut_hint
from .widgets import heading, html, in_one_message, plain

__all__ = ["ModelPanel"]


class ModelPanel(Viewer):
    """Sidebar: presets, notation box, JSON import/export, auto-regularize, undo/redo."""

    def __init__(self, state: ModelState, **params):
        super().__init__(**params)
        self.state = state
        self.preset = pn.widgets.Select(
            label="Preset",
            groups={"On screen": [presets.CUSTOM], **{g: list(items) for g, items in presets.PRESET_GROUPS.items()}},
            value=presets.menu_entry(state.model),
            sizing_mode="stretch_width",
            css_classes=["effdim-preset"],
        )
        self.load_preset = pn.widgets.Button(
            label="Load preset",
            color="primary",
            sizing_mode="stretch_width",
            disabled=self.preset.value == presets.CUSTOM,
        )
        self.load_preset.on_click(in_one_message(lambda _: state.load_preset(self.preset.value)))
        # the menu names the model on screen: a preset while it is one, "custom" once another model is loaded
        state.param.watch(
            lambda e: setattr(self.preset, "value", presets.menu_entry(e.new, self.preset.value)), "model"
        )
        self.preset.param.watch(lambda e: setattr(self.load_preset, "disabled", e.new == presets.CUSTOM), "value")
        self.notation = pn.widgets.TextAreaInput(
            label="Model notation",
            value=state.notation,
            height=90,
            sizing_mode="stretch_width",
            placeholder="3:2,2,2,2  or  5(3(2,2),2,3(2,2))  or  H1:5(H2:3(O1:2,O2:2),O3:2)",
            css_classes=["effdim-notation"],
            # one character over the limit: a longer paste is cut there and refused for its length, not
            # parsed as cut (Panel's default of 5,000 gave "position 5001: expected a cardinality")
            max_length=state.limits.notation_chars + 1,
        )
        self.apply = pn.widgets.Button(label="Apply notation", color="primary", sizing_mode="stretch_width")
        self.apply.on_click(in_one_message(self._apply_notation))
        state.param.watch(lambda e: setattr(self.notation, "value", e.new), "notation")

        self.export = pn.widgets.FileDownload(
            label="Export JSON",
            callback=lambda: io.StringIO(state.to_json()),
            filename="model.json",
            sizing_mode="stretch_width",
            embed=False,
        )
        self.import_json = pn.widgets.FileInput(accept=".json,application/json", sizing_mode="stretch_width")
        self.import_json.param.watch(in_one_message(self._import), ["value", "filename"])

        self.auto = pn.widgets.Switch.from_param(
            state.param.auto_regularize, label="", margin=(8, 5), css_classes=["effdim-auto"]
        )
        self.undo = pn.widgets.Button(label="↶ Undo", sizing_mode="stretch_width", disabled=not state.can_undo)
        self.redo = pn.widgets.Button(label="↷ Redo", sizing_mode="stretch_width", disabled=not state.can_redo)
        self.undo.on_click(in_one_message(lambda _: state.undo()))
        self.redo.on_click(in_one_message(lambda _: state.redo()))
        state.param.watch(lambda e: setattr(self.undo, "disabled", not e.new), "can_undo")
        state.param.watch(lambda e: setattr(self.redo, "disabled", not e.new), "can_redo")
        self.shortcuts = Shortcuts.for_editor(state, self._apply_notation)
        # which model the Data tab scores (:meth:`say_scored`): this one, or an LC model over the data's columns
        self.scored = html("", sizing_mode="stretch_width", margin=(0, 5), css_classes=["effdim-scored-note"])

    def say_scored(self, words: str) -> None:
        """Say under the heading which model the Data tab scores ("": nothing to say, no data)."""
        self.scored.object = f"<small>{plain(words)}</small>" if words else ""

    def _apply_notation(self, _=None) -> None:
        text = self.notation.value_input if self.notation.value_input is not None else self.notation.value
        self.state.load_notation(text or "")

    def _import(self, *_) -> None:
        chooser = self.import_json
        if not chooser.filename:  # cleared below
            return
        self.state.load_json(chooser.value or b"")  # Panel reads an empty file as no value
        chooser.clear()  # choosing the same file again is a new import

    def __panel__(self):
        return pn.Column(
            heading("Model"),
            self.scored,
            self.preset,
            self.load_preset,
            self.notation,
            self.apply,
            pn.Row(self.undo, self.redo, sizing_mode="stretch_width"),
            shortcut_hint(),
            self.shortcuts,
            pn.Row(
                self.auto,
                html("<b>Auto-regularize</b> (Lemma 4.1)", margin=(10, 0, 0, 0)),
                pn.widgets.TooltipIcon(value=explain.regularity_rules_markdown(), margin=(12, 0, 0, 0)),
            ),
            heading("JSON"),
            self.export,
            html("<small>Import a model saved as JSON:</small>", margin=(0, 5)),
            self.import_json,
            sizing_mode="stretch_width",
        )
