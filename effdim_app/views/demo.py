"""The guided demo's bar: Back, Next and End over the steps of :mod:`effdim_app.demo_script`.

Each step loads its model as the notation box's Apply does
(:meth:`ModelState.load_notation`), so Undo brings back the model before it.
"""

from __future__ import annotations

from collections.abc import Callable

import panel as pn
from panel.viewable import Viewer

from ..demo_script import demo_steps
from ..state import ModelState
from .widgets import html, in_one_message, plain

__all__ = ["GuidedDemo"]


class GuidedDemo(Viewer):
    """A start button (:attr:`start`, placed by the page) and the bar it opens above the tree."""

    def __init__(self, state: ModelState, show_model: Callable[[], None] = lambda: None, **params):
        super().__init__(**params)
        self.state, self.show_model = state, show_model
        self.step = -1  # not running
        self.start = pn.widgets.Button(
            label="▶ Guided demo", color="light", width=130, margin=(10, 5), css_classes=["effdim-demo-start"]
        )
        self.start.on_click(in_one_message(lambda _: self.go(0)))
        # the bar is built when the demo first starts: most sessions never open it, and every page
        # open paid for its buttons (docs/robustness.md, "Opening a page")
        self.bar: pn.Row | None = None
        self._place = pn.Column(margin=0, sizing_mode="stretch_width")

    def _build_bar(self) -> pn.Row:
        self.sentence = html("", sizing_mode="stretch_width", margin=(0, 5), css_classes=["effdim-demo-text"])
        self.back = pn.widgets.Button(label="◀ Back", width=90)
        self.next = pn.widgets.Button(label="Next ▶", color="primary", width=90)
        self.end = pn.widgets.Button(label="End demo", width=100)
        self.back.on_click(in_one_message(lambda _: self.go(self.step - 1)))
        self.next.on_click(in_one_message(lambda _: self.go(self.step + 1)))
        self.end.on_click(in_one_message(lambda _: self.go(-1)))
        self.bar = pn.Row(
            self.sentence,
            self.back,
            self.next,
            self.end,
            visible=False,
            sizing_mode="stretch_width",
            css_classes=["effdim-demo"],
            styles={"background": "#eef3f9", "border-left": "4px solid #1d4e89", "flex-wrap": "wrap"},
        )
        self._place.objects = [self.bar]
        return self.bar

    def go(self, step: int) -> None:
        """Show step ``step`` (0-based) and load its model; -1 ends the demo (the model stays)."""
        steps = demo_steps()
        if step < 0 or step >= len(steps):
            self.step = -1
            if self.bar is not None:
                self.bar.visible = False
            return
        if self.bar is None:
            self._build_bar()
        self.step = step
        current = steps[step]
        self.state.load_notation(current.notation)
        self.show_model()
        self.sentence.object = (
            f"<div class='effdim-demo-line'><b>Step {step + 1} of {len(steps)} · "
            f"{plain(current.title)}.</b> {plain(current.sentence)}</div>"
        )
        self.back.disabled = step == 0
        self.next.disabled = step == len(steps) - 1
        self.bar.visible = True

    def __panel__(self):
        return self._place
