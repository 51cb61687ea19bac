"""The guided demo's bar: one sentence per step of :func:`effdim_app.demo.demo_steps`, with Back and Next.

Each step loads its model as the notation box's Apply does
(:meth:`ModelState.load_notation`), so Undo brings back the model before it.
"""

from __future__ import annotations

import html as html_text
from typing import Callable

import panel as pn
from panel.viewable import Viewer

from ..demo import demo_steps
from ..state import ModelState
from .widgets import html, in_one_message

__all__ = ["GuidedDemo"]


class GuidedDemo(Viewer):
    """A start button (:attr:`start`, placed by the page) and the bar it opens above the tree."""

    def __init__(self, state: ModelState, show_model: Callable[[], None] = lambda: None, **params):
        super().__init__(**params)
        self.state, self.show_model = state, show_model
        self.step = -1  # not running
        self.start = pn.widgets.Button(label="▶ Guided demo", color="light", width=130, margin=(10, 5),
                                       css_classes=["effdim-demo-start"])
        self.sentence = html("", sizing_mode="stretch_width", margin=(0, 5), css_classes=["effdim-demo-text"])
        self.back = pn.widgets.Button(label="◀ Back", width=90)
        self.next = pn.widgets.Button(label="Next ▶", color="primary", width=90)
        self.end = pn.widgets.Button(label="End demo", width=100)
        self.start.on_click(in_one_message(lambda _: self.go(0)))
        self.back.on_click(in_one_message(lambda _: self.go(self.step - 1)))
        self.next.on_click(in_one_message(lambda _: self.go(self.step + 1)))
        self.end.on_click(in_one_message(lambda _: self.go(-1)))
        self.bar = pn.Row(self.sentence, self.back, self.next, self.end, visible=False,
                          sizing_mode="stretch_width", css_classes=["effdim-demo"],
                          styles={"background": "#eef3f9", "border-left": "4px solid #1d4e89", "flex-wrap": "wrap"})

    def go(self, step: int) -> None:
        """Show step ``step`` (0-based) and load its model; -1 ends the demo (the model stays)."""
        steps = demo_steps()
        if step < 0 or step >= len(steps):
            self.step = -1
            self.bar.visible = False
            return
        self.step = step
        current = steps[step]
        self.state.load_notation(current.notation)
        self.show_model()
        self.sentence.object = (f"<div class='effdim-demo-line'><b>Step {step + 1} of {len(steps)} · "
                                f"{html_text.escape(current.title)}.</b> {html_text.escape(current.sentence)}</div>")
        self.back.disabled = step == 0
        self.next.disabled = step == len(steps) - 1
        self.bar.visible = True

    def __panel__(self):
        return self.bar
