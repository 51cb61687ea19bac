"""The data demo's bar: Back, Next and End over the steps of :mod:`effdim_app.data_demo_script`.

Each step does on the bundled survey what its button on the Data & scores tab does: loads the data set
(:meth:`DataState.load_bundled`), runs the sweep as a job (:meth:`ScoresState.run_sweep`; Next waits for it),
shows a fit in the fitted view (:attr:`FittedState.chosen`) and proposes a model from a residual
(:meth:`ProposalState.propose`), then says what to read on screen. The bar sits at the top of the Data & scores
tab; its start button beside the guided demo's.
"""

from __future__ import annotations

from collections.abc import Callable

import panel as pn
from panel.viewable import Viewer

from .. import data_demo_script as script
from ..state import DEFAULT_SCORE, DataState, FittedState, ProposalState, ScoresState
from .widgets import html, in_one_message, plain

__all__ = ["DataDemo"]


class DataDemo(Viewer):
    """A start button (:attr:`start`, placed by the page) and the bar it opens above the Data & scores tab."""

    def __init__(self, proposal: ProposalState, show_data: Callable[[], None] = lambda: None, **params):
        """``proposal``'s fitted state holds the scores, which hold the data; ``show_data`` opens the tab."""
        super().__init__(**params)
        self.proposal, self.show_data = proposal, show_data
        self.step = -1  # not running
        self.start = pn.widgets.Button(
            label="▶ Data demo", color="light", width=120, margin=(10, 5), css_classes=["effdim-data-demo-start"]
        )
        self.start.on_click(self._start)
        # built when the demo first starts, as the guided demo's bar (docs/robustness.md, "Opening a page")
        self.bar: pn.Column | None = None
        self._place = pn.Column(margin=0, sizing_mode="stretch_width")

    @property
    def fitted(self) -> FittedState:
        return self.proposal.fitted

    @property
    def scores(self) -> ScoresState:
        return self.fitted.scores

    @property
    def data(self) -> DataState:
        return self.scores.data

    def _build_bar(self) -> None:
        self.sentence = html("", sizing_mode="stretch_width", margin=(0, 5), css_classes=["effdim-data-demo-text"])
        self.back = pn.widgets.Button(label="◀ Back", width=90)
        self.next = pn.widgets.Button(label="Next ▶", color="primary", width=90)
        self.end = pn.widgets.Button(label="End demo", width=100)
        self.back.on_click(self._back)
        self.next.on_click(self._next)
        self.end.on_click(in_one_message(lambda _: self._end()))
        # the sentence over the whole width, the buttons under it: beside them, at 1024 px in projector mode, it
        # was a narrow column of twelve lines
        self.bar = pn.Column(
            self.sentence,
            pn.Row(self.back, self.next, self.end, margin=0),
            visible=False,
            sizing_mode="stretch_width",
            css_classes=["effdim-data-demo"],
            styles={"background": "#eef3f9", "border-left": "4px solid #1d4e89"},
        )
        self._place.objects = [self.bar]

    async def _start(self, _=None) -> None:
        await self.go(0)

    async def _back(self, _=None) -> None:
        await self.go(self.step - 1)

    async def _next(self, _=None) -> None:
        await self.go(self.step + 1)

    def _end(self) -> None:
        self.step = -1
        if self.bar is not None:
            self.bar.visible = False

    def _say(self, step: int, text: str, *, ready: bool = True) -> None:
        """Show step ``step``'s sentence; Next waits until the step's action is done (``ready``)."""
        self.sentence.object = (
            f"<div class='effdim-demo-line'><b>Data demo, step {step + 1} of {len(script.TITLES)} · "
            f"{plain(script.TITLES[step])}.</b> {plain(text)}</div>"
        )
        self.back.disabled = step == 0 or not ready
        self.next.disabled = step == len(script.TITLES) - 1 or not ready

    async def go(self, step: int) -> None:
        """Do step ``step`` (0-based) on the bundled survey and say what to read; -1 or past the end ends the demo
        (what it loaded and fitted stays)."""
        if step < 0 or step >= len(script.TITLES):
            self._end()
            return
        if self.bar is None:
            self._build_bar()
        self.step = step
        self.show_data()
        self.bar.visible = True
        if step == 0:
            self._load()
        elif step == 1:
            await self._sweep()
        elif not self.fitted.fits:  # the sweep was cancelled, or failed, before a fit finished
            self._say(step, "The sweep has no fits to read: go back a step and sweep again.", ready=True)
            self.next.disabled = True
        else:
            [self._profile, self._residuals, self._propose][step - 2]()

    def _load(self) -> None:
        if not self.data.load_bundled(script.DATA_SET):
            self._say(0, f"The bundled survey could not be loaded: {self.data.message}")
            self.next.disabled = True
            return
        self.scores.mapping = "lc"
        self._say(0, script.data_sentence(self.data.describe(), list(self.data.dataset.columns)))

    async def _sweep(self) -> None:
        scores = self.scores
        if not scores.results:  # loading the data (step 1) cleared them
            scores.param.update(card_min=1, card_max=script.MOST_CLASSES, past_saturation=False)
            self._say(
                1,
                f"Sweeping LC models with 1 to {script.MOST_CLASSES} classes: each fit is drawn as it "
                "finishes (the progress bar above the curves).",
                ready=False,
            )
            await scores.run_sweep()
        if self.step != 1:  # the demo moved on, or ended, while the sweep ran
            return
        if not scores.results:
            self._say(
                1, f"The sweep did not finish: {scores.status or scores.message} Press Back, then Next, to sweep again."
            )
            self.next.disabled = True
            return
        self._say(1, script.sweep_sentence(scores.best(), len(scores.results)))

    def _profile(self) -> None:
        pick, _ = script.pick_and_fewer(self.fitted.fits, DEFAULT_SCORE)
        self.fitted.chosen = pick
        self._say(2, script.profile_sentence(self.fitted.fits[pick]))

    def _residuals(self) -> None:
        pick, fewer = script.pick_and_fewer(self.fitted.fits, DEFAULT_SCORE)
        self.fitted.chosen = fewer
        self._say(3, script.residual_sentence(self.fitted.fits[fewer], self.fitted.fits[pick]))

    def _propose(self) -> None:
        _, fewer = script.pick_and_fewer(self.fitted.fits, DEFAULT_SCORE)
        self.fitted.chosen = fewer
        a, b, _ = script.largest_residual(self.fitted.fits[fewer])
        self.proposal.propose(a, b)
        self._say(4, script.proposal_sentence(a, b, self.proposal.text))

    def __panel__(self):
        return self._place
