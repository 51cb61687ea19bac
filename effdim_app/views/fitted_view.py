"""The "Fitted model" view of the Data & scores tab.

After a sweep or a hill climb, pick one of the fits and see what an analyst
coming from poLCA or StepMix looks at first:

* the profiles: ``P(item = category | class)`` for every item
  (:meth:`effdim.FitResult.profiles`) as the report draws them, a
  panel per item, a bar group per category, a bar per state of the chosen
  hidden node, long labels wrapped or shortened with the whole text on hover
  (:func:`effdim_app.figures.profile_html`); the class shares as their
  legend; and, where ``de < ds``, a sign that they are not unique;
* the fit statistics with the true degrees of freedom ``df = dc - de``
  beside what other tools report (``dc - ds``), entropy R2, the average
  posterior per class, the Jacobian rank at the estimate, and convergence
  warnings (:mod:`effdim.diagnostics`);
* the bivariate residuals as a heatmap with its values in the cells: clicking a pair proposes the model
  with a new hidden node over that pair (:mod:`.proposal_view`), applied only when the analyst confirms;
* the posterior membership of every row as a CSV download, and the whole
  analysis as a self-contained HTML report (:mod:`effdim.report`);
* the columns left out of the model by class, by the three-step method
  (:mod:`.distal_view`).

:class:`effdim_app.state.FittedState` holds the fits offered and the
chosen one, and computes what is drawn of it (:class:`effdim_app.state.fitted.ShownFit`);
:class:`FittedView` only displays it, and says so when the fit no longer
matches the model on screen.
"""

from __future__ import annotations

import io

import panel as pn
from panel.viewable import Viewer

from ..figures import PROFILE_CSS, ResidualMap, profile_html, scale_fonts
from ..state import FittedState
from ..style import HTML_CSS
from .proposal_view import ProposalView
from .widgets import in_one_message, plain

__all__ = ["FittedState", "FittedView"]

#: The residual map's size at the normal type (projector mode makes it larger).
HEATMAP_WIDTH, HEATMAP_HEIGHT = 420, 340
STATS_CSS = """
.effdim-fit-table { border-collapse: collapse; font-variant-numeric: tabular-nums; margin: 4px 0; }
.effdim-fit-table td { padding: 2px 12px 2px 0; vertical-align: top; }
.effdim-fit-table td.v { text-align: right; font-weight: 600; white-space: nowrap; }
.effdim-stale { color: #6b4e00; background: #fff4d6; border: 1px solid #f3d98b; border-radius: 5px;
  padding: 5px 12px; margin: 2px 0; font-weight: 600; }
.effdim-note { color: #4a5a6a; font-size: 0.9em; margin: 2px 0; }
.effdim-warn { color: #8a5200; font-size: 0.9em; margin: 2px 0; }
"""


class FittedView(Viewer):
    """Profile plot, class shares, fit statistics, BVR heatmap and posterior download of one fit."""

    def __init__(
        self,
        state: FittedState,
        proposal: ProposalView,
        distal: Viewer | None = None,
        checks: Viewer | None = None,
        **params,
    ):
        super().__init__(**params)
        self.state = state
        self.proposed = proposal
        self.checks = checks
        self.choice = pn.widgets.Select.from_param(
            state.param.chosen, label="Fitted model", options=[], width=330, css_classes=["effdim-fit-choice"]
        )
        self.node = pn.widgets.Select.from_param(
            state.param.node, label="Profiles of hidden node", options=[], width=170
        )
        self.order = pn.widgets.TextInput(
            label="Reorder its states (e.g. 2,1,3)", width=190, css_classes=["effdim-order"]
        )
        self.order.param.watch(in_one_message(self._reorder), "value")
        self.stats = pn.pane.HTML(
            "", sizing_mode="stretch_width", css_classes=["effdim-fit-stats"], stylesheets=[HTML_CSS, STATS_CSS]
        )
        # the profiles and shares as SVG (effdim_app.figures.profile_html); the residual map a Bokeh figure updated
        # in place, built with the first fit shown: a Bokeh pane made empty and given its figure later was laid
        # out at the empty pane's size
        self.profile = pn.pane.HTML(
            "", sizing_mode="stretch_width", css_classes=["effdim-profile"], stylesheets=[HTML_CSS, PROFILE_CSS]
        )
        self.residuals: ResidualMap | None = None
        self.font_scale = 1.0
        self.heatmap = pn.Column(width=430, margin=0, css_classes=["effdim-bvr"])
        self.bvr_help = pn.pane.HTML(
            "<p class='effdim-note'>Bivariate residual of two items: Pearson X² of their two-way table against "
            "the model's, per degree of freedom. Well above 1: the classes do not explain their association. "
            "Click the pair to see the model with a new hidden node over it, then apply it or not.</p>",
            stylesheets=[HTML_CSS, STATS_CSS],
        )
        self.proposal = pn.pane.HTML(
            "", sizing_mode="stretch_width", css_classes=["effdim-proposal"], stylesheets=[HTML_CSS, STATS_CSS]
        )
        self.download = pn.widgets.FileDownload(
            label="Download posteriors (CSV)",
            callback=self._csv,
            filename="effdim-posteriors.csv",
            embed=False,
            width=240,
        )
        self.stale = pn.pane.HTML(
            "", sizing_mode="stretch_width", css_classes=["effdim-fit-stale"], stylesheets=[STATS_CSS], visible=False
        )
        self.model_line = pn.pane.HTML("", sizing_mode="stretch_width", stylesheets=[STATS_CSS])
        self.report = pn.widgets.FileDownload(
            label="Download report (HTML)",
            callback=self._report,
            filename="effdim-report.html",
            embed=False,
            width=220,
            css_classes=["effdim-report"],
        )
        self.placeholder = pn.pane.HTML(
            "<p class='effdim-note'>Run a sweep or a hill climb above: the fitted model appears here.</p>",
            stylesheets=[STATS_CSS],
        )
        # visibility is toggled on this wrapping column only (see ScoresPanel)
        self.body = pn.Column(
            self.stale,
            pn.FlexBox(
                self.choice,
                self.node,
                self.order,
                self.download,
                self.report,
                flex_wrap="wrap",
                sizing_mode="stretch_width",
            ),
            self.model_line,
            self.profile,
            self.stats,
            *([checks] if checks is not None else []),
            # the explanation and the proposal beside the map, under it where the map leaves them no room
            pn.FlexBox(
                self.heatmap,
                pn.Column(
                    self.bvr_help, self.proposal, proposal, styles={"flex": "1 1 320px"}, sizing_mode="stretch_width"
                ),
                flex_wrap="wrap",
                sizing_mode="stretch_width",
            ),
            *([distal] if distal is not None else []),
            sizing_mode="stretch_width",
            visible=False,
        )
        state.param.watch(self._render, ["shown", "error"])  # one watcher: one render per change
        state.param.watch(lambda e: setattr(self.proposal, "object", _p(e.new)), "proposal")
        state.param.watch(self._mark_stale, "stale")
        self._mark_stale()
        self._render()  # built when the Data tab first opens: a fit may already be there

    def _reorder(self, event) -> None:
        if event.new and self.state.reorder(event.new):
            self.order.value = ""

    async def _report(self):
        """The report is written in a worker (FittedState.report); the download waits for it, the page stays live.
        It has the shown fit's bootstrap p-value when one was computed."""
        text = await self.state.report(bootstrap=None if self.checks is None else self.checks.state.bootstrap)
        return io.StringIO(text or "")

    def _csv(self):
        return io.StringIO(self.state.posteriors_csv())

    def _mark_stale(self, *_) -> None:
        """A fit that no longer matches the model on screen is said to be so and greyed."""
        stale = self.state.stale
        self.stale.param.update(
            object=f"<div class='effdim-stale'>⚠ {plain(stale)}</div>" if stale else "", visible=bool(stale)
        )
        for box in (self.profile, self.heatmap):
            box.styles = {"opacity": "0.45"} if stale else {"opacity": "1"}

    def _render(self, *_) -> None:
        shown = self.state.shown
        error = self.state.error
        self.placeholder.visible = shown is None and not error
        self.body.visible = shown is not None or bool(error)
        if shown is None:
            self.stats.object = f"<p class='effdim-error'>{plain(error)}</p>" if error else ""
            return
        fit = shown.fit
        self.choice.param.update(options=list(self.state.fits), value=self.state.chosen)
        self.node.param.update(options=list(fit.model.hidden), value=shown.node)
        self.model_line.object = f"<p class='effdim-note'>Fitted model: <code>{plain(str(fit.model))}</code></p>"
        self._draw(shown)
        self.stats.object = _stats_html(shown)

    def _draw(self, shown) -> None:
        shares, panels = profile_html(shown.profiles, shown.shares, shown.node, shown.fit.labels.described())
        node = plain(shown.node)
        sign = shown.fit.non_unique_sentence()
        self.profile.object = (
            f"<div class='effdim-h'>Profiles of {node}: P(item = category | {node})</div>"
            + (f"<div class='effdim-not-unique'>⚠ <b>Not unique.</b> {plain(sign)}</div>" if sign else "")
            + f"<div class='effdim-legend-bars'><div class='effdim-note'>Shares of {node}, largest first: the colours "
            f"of the bars below</div>{shares}</div>{panels}"
        )
        first = self.residuals is None
        if first:
            self.residuals = ResidualMap(self._pair_clicked)
        # the figure's own Bokeh models change, possibly from a coroutine (a sweep ending), so outside
        # the document lock that Panel takes for its own widgets: dispatch the changes explicitly
        with pn.io.unlocked():
            self.residuals.update(shown.residuals)
            if first:
                scale_fonts(self.residuals.figure, self.font_scale)
        if first:  # shown with its first data
            self.heatmap.objects = [pn.pane.Bokeh(self.residuals.figure, sizing_mode="fixed")]
        self._fit_heatmap()

    def set_font_scale(self, scale: float) -> None:
        """Projector mode: the residual map's type (and its size) at ``scale``; the profiles and the text
        follow the page's CSS."""
        self.font_scale = scale
        if self.residuals is not None:
            with pn.io.unlocked():
                scale_fonts(self.residuals.figure, scale)
            self._fit_heatmap()

    def _fit_heatmap(self) -> None:
        """The residual map grows with its type: its cells hold numbers in the larger type too."""
        figure = self.residuals.figure
        with pn.io.unlocked():
            figure.update(width=round(HEATMAP_WIDTH * self.font_scale), height=round(HEATMAP_HEIGHT * self.font_scale))
        self.heatmap.width = figure.width + 10

    def _pair_clicked(self, a: str, b: str) -> None:
        if a != b:
            self.proposed.state.propose(a, b)

    def __panel__(self):
        return pn.Column(
            pn.pane.HTML("<div class='effdim-h'>Fitted model</div>", stylesheets=[HTML_CSS], margin=(10, 5, 0, 5)),
            self.placeholder,
            self.body,
            sizing_mode="stretch_width",
            css_classes=["effdim-fitted"],
        )


# ------------------------------------------------------------------ plots and text
def _p(text: str) -> str:
    return f"<p class='effdim-note'>{plain(text)}</p>" if text else ""


def _stats_html(shown) -> str:
    """The fit statistics as a table whose numbers align: right-aligned, four decimals (integers whole); EM's
    starts; the classification table."""
    from effdim.errors import EffdimError

    fit, s, ident = shown.fit, shown.statistics, shown.identification

    def num(v) -> str:
        return "n/a" if v is None else f"{v:.4f}"

    rows = [
        ("G²", num(s.g2), f"p = {num(s.p_g2)}"),
        ("X²", num(s.x2), f"p = {num(s.p_x2)}"),
        ("df = dc − de", str(s.df), f"other tools: dc − ds = {s.df_standard}"),
        ("entropy R²", num(s.entropy_r2), "1 = perfectly separated classes"),
    ]
    rows += [
        (f"mean posterior, modal {fit.model.root} = {state}", num(v), "of the rows assigned to this state")
        for state, v in enumerate(s.avepp, start=1)
    ]
    if not isinstance(ident, EffdimError):
        rows.append(("Jacobian rank at the estimate", str(ident.rank), f"generic de = {fit.de}"))
    table = "".join(
        f"<tr><td>{plain(a)}</td><td class='v'>{plain(b)}</td><td class='effdim-note'>{plain(c)}</td></tr>"
        for a, b, c in rows
    )
    notes = [s.df_sentence()] + list(s.notes)
    if isinstance(ident, EffdimError):
        notes.append(str(ident))
    elif not ident.identified:
        notes.append(ident.sentence())
    if s.sparse:
        notes.append("The bootstrap p-value of G²: ▶ Bootstrap p-value of G² below.")
    text = "".join(f"<p class='effdim-note'>{plain(n)}</p>" for n in notes if n)
    info = fit.restarts
    ends = ", ".join(f"{x:,.2f}" for x in info["start_logliks"])
    text += f"<p class='effdim-note effdim-starts'>EM: {plain(fit.starts_sentence())}; each start ended at {ends}.</p>"
    warnings = fit.em.convergence_notes() + list(fit.degenerate)
    text += "".join(f"<p class='effdim-warn'>⚠ {plain(w)}</p>" for w in warnings)
    classified = "" if shown.classification is None else _classification_html(shown.classification)
    return f"<table class='effdim-fit-table'>{table}</table>{text}{classified}"


def _classification_html(table) -> str:
    """The classification table (:mod:`effdim.classification`): expected rows by modal and by posterior state."""
    k = table.counts.shape[0]
    head = "".join(f"<th>{plain(table.node)} = {c + 1}</th>" for c in range(k))
    rows = "".join(
        f"<tr><td>assigned {s + 1}</td>"
        + "".join(f"<td class='v'>{table.counts[s, c]:,.1f}</td>" for c in range(k))
        + f"<td class='v'>{table.assigned[s]:,.1f}</td></tr>"
        for s in range(k)
    )
    return (
        f"<p class='effdim-sel effdim-classification-error'><b>Classification error {table.error:.1%}</b>: the "
        f"expected share of rows whose modal state of {plain(table.node)} is not their own (rows: the state each "
        "row is assigned to; columns: the state by its posteriors, summed)</p>"
        f"<table class='effdim-fit-table effdim-classification'><tr><td></td>{head}<th>rows</th></tr>{rows}</table>"
    )
