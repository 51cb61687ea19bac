"""The "Fitted model" view of the Data & scores tab (issue 10).

After a sweep or a hill climb, pick one of the fits and see what an analyst
coming from poLCA or StepMix looks at first:

* the profile plot: ``P(item = category | class)`` for every item
  (:meth:`effdim.search.FitResult.profiles`), one line per state of the
  chosen hidden node, and the class shares;
* the fit statistics with the true degrees of freedom ``df = dc - de``
  beside what other tools report (``dc - ds``), entropy R2, the average
  posterior per class, the Jacobian rank at the estimate, and convergence
  warnings (:mod:`effdim.diagnostics`);
* the bivariate residuals as a heatmap: clicking a pair proposes the model
  with a new hidden node over that pair (:mod:`.proposal_view`), applied
  only when the analyst confirms;
* the posterior membership of every row as a CSV download, and the whole
  analysis as a self-contained HTML report (:mod:`effdim.report`).

:class:`effdim_app.state.FittedState` holds the fits offered and the
chosen one; :class:`FittedView` only displays it.
"""

from __future__ import annotations

import html
import io

import panel as pn
from panel.viewable import Viewer

from ..figures import ProfileLines, ResidualMap, ShareBars
from ..state import FittedState
from ..style import HTML_CSS
from .proposal_view import ProposalView

__all__ = ["FittedState", "FittedView"]

STATS_CSS = """
.effdim-fit-table { border-collapse: collapse; font-variant-numeric: tabular-nums; margin: 4px 0; }
.effdim-fit-table td { padding: 2px 10px 2px 0; }
.effdim-fit-table td.v { text-align: right; font-weight: 600; }
.effdim-note { color: #4a5a6a; font-size: 0.9em; margin: 2px 0; }
.effdim-warn { color: #8a5200; font-size: 0.9em; margin: 2px 0; }
"""


class FittedView(Viewer):
    """Profile plot, class shares, fit statistics, BVR heatmap and posterior download of one fit."""

    def __init__(self, state: FittedState, proposal: ProposalView, **params):
        super().__init__(**params)
        self.state = state
        self.proposed = proposal
        self.choice = pn.widgets.Select(label="Fitted model", options=[], width=330,
                                        css_classes=["effdim-fit-choice"])
        self.choice.param.watch(lambda e: setattr(state, "chosen", e.new), "value")
        self.node = pn.widgets.Select(label="Profiles of hidden node", options=[], width=170)
        self.node.param.watch(lambda e: setattr(state, "node", e.new), "value")
        self.order = pn.widgets.TextInput(label="Reorder its states (e.g. 2,1,3)", width=190,
                                          css_classes=["effdim-order"])
        self.order.param.watch(self._reorder, "value")
        self.stats = pn.pane.HTML("", sizing_mode="stretch_width", css_classes=["effdim-fit-stats"],
                                  stylesheets=[HTML_CSS, STATS_CSS])
        # Bokeh figures updated in place (effdim_app.figures), built with the first fit shown
        self.figures: tuple[ProfileLines, ShareBars, ResidualMap] | None = None
        # each figure goes into its box with the first fit: a Bokeh pane made empty and given its
        # figure later was laid out at the empty pane's size (the shares plot drawn off its box)
        self.profile = pn.Column(sizing_mode="stretch_width", margin=0, css_classes=["effdim-profile"])
        self.shares = pn.Column(width=310, margin=0, css_classes=["effdim-shares"])
        self.heatmap = pn.Column(width=430, margin=0, css_classes=["effdim-bvr"])
        self.bvr_help = pn.pane.HTML(
            "<p class='effdim-note'>Bivariate residual of two items: Pearson X² of their two-way table against "
            "the model's, per degree of freedom. Well above 1: the classes do not explain their association. "
            "Click the pair to see the model with a new hidden node over it, then apply it or not.</p>",
            stylesheets=[STATS_CSS])
        self.proposal = pn.pane.HTML("", sizing_mode="stretch_width", css_classes=["effdim-proposal"],
                                     stylesheets=[STATS_CSS])
        self.download = pn.widgets.FileDownload(label="Download posteriors (CSV)", callback=self._csv,
                                                filename="effdim-posteriors.csv", embed=False, width=240)
        self.report = pn.widgets.FileDownload(label="Download report (HTML)", callback=self._report,
                                              filename="effdim-report.html", embed=False, width=220,
                                              css_classes=["effdim-report"])
        self.placeholder = pn.pane.HTML(
            "<p class='effdim-note'>Run a sweep or a hill climb above: the fitted model appears here.</p>",
            stylesheets=[STATS_CSS])
        # visibility is toggled on this wrapping column only (see ScoresPanel)
        self.body = pn.Column(
            pn.FlexBox(self.choice, self.node, self.order, self.download, self.report, flex_wrap="wrap",
                       sizing_mode="stretch_width"),
            self.profile,
            pn.Row(self.shares, self.stats, sizing_mode="stretch_width"),
            pn.Row(self.heatmap, pn.Column(self.bvr_help, self.proposal, proposal), sizing_mode="stretch_width"),
            sizing_mode="stretch_width", visible=False,
        )
        state.param.watch(self._render, ["fits", "chosen", "node"])  # one watcher: one render per change
        state.param.watch(lambda e: setattr(self.proposal, "object", _p(e.new)), "proposal")
        self._render()  # built when the Data tab first opens: a fit may already be there

    def _reorder(self, event) -> None:
        if event.new and self.state.reorder(event.new):
            self.order.value = ""

    async def _report(self):
        """The report is written in a worker (FittedState.report); the download waits for it, the page stays live."""
        text = await self.state.report()
        return io.StringIO(text or "")

    def _csv(self):
        return io.StringIO(self.state.posteriors_csv())

    def _render(self, *_) -> None:
        fit = self.state.fit
        self.placeholder.visible = fit is None
        self.body.visible = fit is not None
        if fit is None:
            return
        node = self.state.node if self.state.node in fit.model.hidden else fit.model.root
        self.choice.param.update(options=list(self.state.fits), value=self.state.chosen)
        self.node.param.update(options=list(fit.model.hidden), value=node)
        try:
            self._draw(fit, node)
            self.stats.object = _stats_html(fit)
        except Exception as err:  # noqa: BLE001 - show any engine failure, keep the view alive
            self.stats.object = f"<p class='effdim-error'>Cannot show this fit: {html.escape(str(err))}</p>"

    def _draw(self, fit, node: str) -> None:
        first = self.figures is None
        if first:
            self.figures = (ProfileLines(), ShareBars(), ResidualMap(self._pair_clicked))
        profile, shares, residuals = self.figures
        table = fit.class_shares()
        rows = table[table["node"] == fit.labels.name(node)]
        # the figures' own Bokeh models change, possibly from a coroutine (a sweep ending), so outside
        # the document lock that Panel takes for its own widgets: dispatch the changes explicitly
        with pn.io.unlocked():
            profile.update(fit.profiles(node), fit.params.marginals()[node], node, str(fit.model))
            shares.update(rows["state"], rows["share"], node)
            residuals.update(fit.bivariate_residuals())
        if first:  # shown with their first data
            self.profile.objects = [pn.pane.Bokeh(profile.figure, sizing_mode="stretch_width", height=330)]
            self.shares.objects = [pn.pane.Bokeh(shares.figure, width=300, height=260)]
            self.heatmap.objects = [pn.pane.Bokeh(residuals.figure, width=420, height=340)]

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
    return f"<p class='effdim-note'>{html.escape(text)}</p>" if text else ""


def _stats_html(fit) -> str:
    from effdim.errors import EffdimError

    s = fit.fit_statistics()
    try:
        ident = fit.identification()
    except EffdimError as err:  # too many parameters for the SVD at the estimate
        ident = err

    def num(v, fmt=".4f"):
        return "n/a" if v is None else format(v, fmt)

    avepp = ", ".join("n/a" if v is None else f"{v:.3f}" for v in s.avepp)
    rows = [
        ("G²", f"{s.g2:.4f}", f"p = {num(s.p_g2)}"),
        ("X²", f"{s.x2:.4f}", f"p = {num(s.p_x2)}"),
        ("df = dc − de", str(s.df), f"other tools: dc − ds = {s.df_standard}"),
        ("entropy R²", num(s.entropy_r2, ".3f"), "1 = perfectly separated classes"),
        (f"mean posterior of the modal {fit.model.root}", avepp, "per state"),
    ]
    if not isinstance(ident, EffdimError):
        rows.append(("Jacobian rank at the estimate", str(ident.rank), f"generic de = {fit.de}"))
    table = "".join(f"<tr><td>{html.escape(a)}</td><td class='v'>{html.escape(b)}</td>"
                    f"<td class='effdim-note'>{html.escape(c)}</td></tr>" for a, b, c in rows)
    notes = [s.df_sentence()] + list(s.notes)
    if isinstance(ident, EffdimError):
        notes.append(str(ident))
    elif not ident.identified:
        notes.append(ident.sentence())
    text = "".join(f"<p class='effdim-note'>{html.escape(n)}</p>" for n in notes if n)
    warnings = fit.em.convergence_notes() + list(fit.degenerate)
    text += "".join(f"<p class='effdim-warn'>⚠ {html.escape(w)}</p>" for w in warnings)
    return f"<table class='effdim-fit-table'>{table}</table>{text}"
