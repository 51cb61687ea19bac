"""The guided demo: the paper's key cases, one sentence per step, in a bar with Back and Next.

Every number in a sentence comes from the engine when the demo starts
(:func:`demo_steps`); the models are the paper's (presets). The steps, in order:

1. a Table 1 LC model whose de falls below the bound ``db = min(ds, dc, dp)``
   (Theorem 4; the first such row of the table, found by computing them);
2. the HLC model of Figure 2, and Corollary 4.1 adding its local deficits;
3. an irregular model and its regular equivalent (Lemma 4.1): the totals of
   the model as drawn beside those of the regular one.

See docs/theory.md, sections 2, 5 and 6. Each step loads its model as the
notation box's Apply does (:meth:`ModelState.load_notation`), so Undo brings
back the model before it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import panel as pn
from panel.viewable import Viewer

from effdim import parse_model
from effdim.bounds import standard_dimension
from effdim.dimensions import dimensions
from effdim.regularity import regularize

from ..presets import FIGURE2, IRREGULAR, PRESETS, TABLE1_LC
from ..state import ModelState
from .widgets import html, in_one_message, plain

__all__ = ["GuidedDemo", "DemoStep", "demo_steps", "first_lc_below_bound"]


@dataclass(frozen=True)
class DemoStep:
    """One step: a title, the model it loads (notation) and the sentence that explains it."""

    title: str
    notation: str
    sentence: str


def first_lc_below_bound() -> str:
    """The first LC model of Table 1 (in the table's order) whose de is below db (Theorem 4)."""
    for lc in TABLE1_LC:
        row = dimensions(parse_model(lc)).local[0]
        if row.de < row.db:
            return lc
    raise LookupError("no Table 1 model has de below db")


@lru_cache(maxsize=1)
def demo_steps() -> tuple[DemoStep, ...]:
    """The demo's steps, their numbers computed now (a fraction of a second, then cached)."""
    lc = first_lc_below_bound()
    report = dimensions(parse_model(lc))
    row = report.local[0]
    table1 = DemoStep(
        "Table 1",
        lc,
        f"The LC model {lc} has ds = {report.ds} parameters, and none of the closed-form bounds is "
        f"reached: de = {row.de} ({report.de_status}) is below db = min(ds, dc, dp) = {row.db}, so de "
        "has to be computed as a Jacobian rank (Theorem 4).",
    )
    fig2 = PRESETS[FIGURE2]
    report = dimensions(parse_model(fig2))
    terms = " + ".join(str(r.deficit) for r in report.local)
    figure2 = DemoStep(
        "Figure 2",
        fig2,
        f"Figure 2's HLC model has ds = {report.ds} parameters but only de = {report.de} effective ones: "
        f"its {len(report.local)} local LC models (table rows) lose {terms} = {report.ds - report.de} "
        "(Corollary 4.1); click a row to see one in the tree.",
    )
    irregular_text = PRESETS[IRREGULAR]
    irregular = parse_model(irregular_text)
    reg = regularize(irregular)
    report = dimensions(reg.model)
    nodes = ", ".join(dict.fromkeys(step.node for step in reg.steps))
    regular = DemoStep(
        "Irregularity",
        irregular_text,
        f"An irregular model: as drawn it has ds = {standard_dimension(irregular)}, but {nodes} break "
        f"Lemma 4.1; its regular equivalent (the log beside the tree, {len(reg.steps)} steps) has "
        f"ds = {report.ds} and de = {report.de}, the de of the model as drawn too: the extra states add "
        "parameters, not dimensions.",
    )
    return table1, figure2, regular


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
