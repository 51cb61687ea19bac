"""The fitted view's checks that take refits (:class:`effdim_app.state.FitChecksState`): the bootstrap p-value
of G2, and where de < ds how far the class shares move between equally good fits; each a job with its
progress and a cancel, and its answer in words."""

from __future__ import annotations

import panel as pn
from panel.viewable import Viewer

from ..state.fit_checks import EQUIVALENT_FITS, FitChecksState
from .widgets import JobLine, html, message, plain

__all__ = ["FitChecksView"]


class FitChecksView(Viewer):
    """Buttons that start the checks, their job lines, and their answers."""

    def __init__(self, state: FitChecksState, **params):
        super().__init__(**params)
        self.state = state
        self.replicates = pn.widgets.IntInput.from_param(
            state.param.replicates, label="Replicates B", width=110, css_classes=["effdim-bootstrap-b"]
        )
        self.bootstrap = pn.widgets.Button(
            label="▶ Bootstrap p-value of G²",
            width=210,
            margin=(24, 5, 5, 5),
            css_classes=["effdim-bootstrap"],
            description="Refit the model to B data sets drawn from the fitted one: the chi-square p-values are "
            "unreliable when most expected counts are small, as in most surveys",
        )
        self.ranges = pn.widgets.Button(
            label=f"▶ How far do the class shares move? ({EQUIVALENT_FITS} refits)",
            width=330,
            margin=(24, 5, 5, 5),
            css_classes=["effdim-share-ranges"],
            visible=False,
        )
        self.bootstrap.on_click(self._run_bootstrap)
        self.ranges.on_click(self._run_ranges)
        self.answer = html("", sizing_mode="stretch_width", css_classes=["effdim-checks"])
        self.message = message(state, keep_height=False)
        state.param.watch(self._show, ["bootstrap", "share_ranges", "bootstrap_job", "ranges_job"])
        state.fitted.param.watch(self._show, ["shown"])
        self._show()

    async def _run_bootstrap(self, _=None) -> None:
        await self.state.run_bootstrap()

    async def _run_ranges(self, _=None) -> None:
        await self.state.run_share_ranges()

    def _show(self, *_) -> None:
        state, shown = self.state, self.state.fitted.shown
        fit = None if shown is None else shown.fit
        self.bootstrap.disabled = fit is None or state.bootstrap_job is not None
        self.ranges.param.update(
            visible=fit is not None and not fit.unique, disabled=fit is None or state.ranges_job is not None
        )
        lines = []
        if state.bootstrap is not None:
            boot = state.bootstrap
            lines.append(
                f"<b>Bootstrap p-value of G² = {boot.p_value:.4f}</b> (B = {boot.B} data sets drawn from the fitted "
                "model and refitted; the share of their G² at least as large as this fit's)"
            )
        if state.share_ranges is not None and fit is not None:
            found = state.share_ranges
            for node, rows in found["shares"].items():
                ranges = ", ".join(f"{i + 1}: {lo:.3f}–{hi:.3f}" for i, (lo, hi) in enumerate(rows))
                lines.append(
                    f"<b>Shares of {plain(fit.labels.name(node))} over {found['fits']} equally good fits</b>: {ranges}"
                )
        self.answer.object = "".join(f"<p class='effdim-sel'>{line}</p>" for line in lines)

    def __panel__(self):
        return pn.Column(
            pn.FlexBox(self.replicates, self.bootstrap, self.ranges, flex_wrap="wrap", sizing_mode="stretch_width"),
            JobLine(self.state, "bootstrap_job"),
            JobLine(self.state, "ranges_job"),
            self.message,
            self.answer,
            sizing_mode="stretch_width",
        )
