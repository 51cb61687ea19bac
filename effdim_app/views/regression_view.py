"""The covariates card under the fitted model: a latent class regression of the fit shown.

The analyst picks covariates among the loaded columns the fit does not use (a column the reader left out
for its many values, an age, needs the file read with it: the card says so), edits the formula if she
wants interactions (``PARTY * AGE``) or categories (``C(GPA)``), picks a column of sampling weights if the
data have one, and fits. The card shows what :class:`effdim_app.state.RegressionState` computed: the
coefficients with standard errors, z, p, odds ratios and 95 % intervals, the class probabilities along
each covariate as poLCA's manual draws them (:func:`effdim.charts.probability_lines`; a categorical
covariate as bars, :func:`effdim.charts.profile_panel`), the rows used and what has no standard error.
"""

from __future__ import annotations

import io

import panel as pn
from panel.viewable import Viewer

from effdim.report import curves_html

from ..figures import PROFILE_CSS
from ..state import RegressionState
from ..style import HTML_CSS
from .widgets import JobLine, message, plain

__all__ = ["RegressionView"]

CSS = """
.effdim-coef { border-collapse: collapse; font-variant-numeric: tabular-nums; margin: 6px 0; }
.effdim-coef th, .effdim-coef td { padding: 2px 8px; border-bottom: 1px solid #d5dbe1; text-align: right;
  white-space: nowrap; }
.effdim-coef th { background: #f3f6f9; }
.effdim-coef td.t, .effdim-coef th.t { text-align: left; white-space: normal; }
.effdim-curves { display: flex; flex-wrap: wrap; gap: 6px 18px; }
.effdim-curves svg { max-width: 100%; height: auto; }
.effdim-note { color: #4a5a6a; font-size: 0.9em; margin: 2px 0; }
.effdim-warn { color: #8a5200; font-size: 0.9em; margin: 2px 0; }
"""


class RegressionView(Viewer):
    """Covariate choice, the Fit button, the coefficient table and the class-probability figures."""

    def __init__(self, state: RegressionState, **params):
        super().__init__(**params)
        self.state = state
        self.covariates = pn.widgets.MultiChoice.from_param(
            state.param.covariates,
            name="Covariates (columns the model does not use)",
            options=list(state.candidates),
            width=330,
            css_classes=["effdim-covariates"],
        )
        self.formula = pn.widgets.TextInput.from_param(
            state.param.formula,
            name="Formula",
            description="R's terms: A + B; A*B is A + B + A:B, the product; C(A) takes A as categories",
            width=330,
            css_classes=["effdim-formula"],
        )
        self.weights = pn.widgets.Select.from_param(
            state.param.weights,
            name="Sampling weights",
            options=self._weight_options(),
            width=200,
            css_classes=["effdim-weights"],
        )
        self.fit = pn.widgets.Button(
            label="Fit with covariates",
            color="primary",
            width=180,
            margin=(22, 5, 5, 5),
            css_classes=["effdim-regress"],
        )
        self.fit.on_click(self._fit)
        self.report = pn.widgets.FileDownload(
            label="Download report (HTML)",
            callback=self._report,
            filename="effdim-regression-report.html",
            embed=False,
            width=220,
            margin=(22, 5, 5, 5),
            css_classes=["effdim-regression-report"],
            visible=False,
        )
        self.result = pn.pane.HTML(
            "", sizing_mode="stretch_width", css_classes=["effdim-regression"], stylesheets=[HTML_CSS, PROFILE_CSS, CSS]
        )
        self.card = pn.Column(sizing_mode="stretch_width", css_classes=["effdim-regression-card"], visible=False)
        state.param.watch(self._candidates, ["candidates"])
        state.param.watch(self._render, ["shown"])
        self._render()
        self._candidates()

    async def _fit(self, _=None) -> None:
        await self.state.run()

    async def _report(self):
        """The report is written in a worker (RegressionState.report); the download waits for it."""
        return io.StringIO(await self.state.report() or "")

    def _weight_options(self) -> dict:
        return {"(none)": "", **{c: c for c in self.state.candidates}}

    def _candidates(self, *_) -> None:
        """The columns offered follow the fit shown; the card shows once a fit leaves a column to offer."""
        self.covariates.options = list(self.state.candidates)
        self.weights.options = self._weight_options()
        self.card.visible = bool(self.state.candidates)

    def _render(self, *_) -> None:
        shown = self.state.shown
        self.result.object = "" if shown is None else _result_html(shown)
        self.report.visible = shown is not None

    def __panel__(self):
        self.card.objects = [
            pn.pane.HTML(
                "<div class='effdim-h'>Covariates: latent class regression</div><p class='effdim-note'>Explain the "
                "classes of the model's root by columns it does not use, as poLCA's <code>cbind(...) ~ x</code>: "
                "the log odds of each class against class 1 as a linear function of the covariates.</p>",
                stylesheets=[HTML_CSS, CSS],
                sizing_mode="stretch_width",
            ),
            pn.FlexBox(
                self.covariates,
                self.formula,
                self.weights,
                self.fit,
                self.report,
                flex_wrap="wrap",
                sizing_mode="stretch_width",
            ),
            JobLine(self.state, "job"),
            message(self.state, keep_height=False),
            self.result,
        ]
        return self.card


def _result_html(shown) -> str:
    fit = shown.fit
    root = fit.labels.name(fit.model.root)
    header = "".join(
        f"<th class='{c}'>{plain(h)}</th>"
        for h, c in [
            ("term", "t"),
            ("class", "t"),
            ("coefficient", ""),
            ("SE", ""),
            ("z", ""),
            ("p", ""),
            ("odds ratio", ""),
            ("95 % interval", ""),
        ]
    )
    rows = []
    for r in shown.table.to_dict("records"):
        interval = "n/a" if r["or_low"] != r["or_low"] else f"{r['or_low']:.3f} to {r['or_high']:.3f}"
        p = "n/a" if r["p"] != r["p"] else ("&lt; 0.0001" if r["p"] < 1e-4 else f"{r['p']:.4f}")
        se = plain(r["flag"]) if r["flag"] else f"{r['se']:.4f}"
        z = "n/a" if r["z"] != r["z"] else f"{r['z']:.3f}"
        rows.append(
            f"<tr><td class='t'>{plain(r['term'])}</td><td class='t'>{plain(root)} = {r['class']}</td>"
            f"<td>{r['coefficient']:.4f}</td><td>{se}</td><td>{z}</td><td>{p}</td>"
            f"<td>{r['odds_ratio']:.3f}</td><td>{interval}</td></tr>"
        )
    classes = list(range(1, fit.model.card(fit.model.root) + 1))
    refs = fit.design.references
    reference = (
        "; categorical covariates against " + ", ".join(f"{plain(c)} = {plain(v)}" for c, v in refs.items())
        if refs
        else ""
    )
    notes = "".join(f"<p class='effdim-warn'>⚠ {plain(n)}</p>" for n in shown.notes)
    rows_used = shown.rows
    weighted = (
        f", weighted by {plain(rows_used['weights'])} (rescaled to sum to the rows: the pseudo-log-likelihood)"
        if rows_used["weights"]
        else ""
    )
    return (
        f"<p class='effdim-note'>{plain(root)} on <code>{plain(str(fit.design.formula))}</code>: log odds against "
        f"{plain(root)} = 1{reference}. Log-likelihood {fit.loglik:.4f}, {rows_used['n_used']:,} rows{weighted}; "
        f"standard errors from the {plain(fit.standard_errors().method)} information.</p>"
        f"<div style='overflow-x:auto'><table class='effdim-coef'><thead><tr>{header}</tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table></div>"
        f"<div class='effdim-note'>Class probabilities along each covariate, the others held at their mean "
        f"(numbers) or reference (categories):</div><div class='effdim-curves'>{curves_html(shown.curves, classes, root)}</div>{notes}"
    )
