"""State of the covariates card: a latent class regression of the shown fit's model (no Panel import).

The analyst picks covariates among the loaded columns the fit does not use (and, if she wants, a column of
sampling weights); the model of the fit shown (:class:`.fitted.FittedState`) is fitted again with its root's
classes a multinomial logit on them (:func:`effdim.fit` with ``covariates=``), as a job
(:func:`effdim_app.tasks.regression_task`). What the card draws is computed here
(:class:`ShownRegression`): the coefficients with standard errors, z, p, odds ratios and intervals
(:meth:`effdim.FitResult.coefficient_table`), the class probabilities along each covariate
(:meth:`effdim.FitResult.probability_curves`) and the rows used. Its report (:meth:`RegressionState.report`)
is the engine's report of the regression, with the command that writes it again (:mod:`.reproduce`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import param

from .. import tasks
from .fitted import FittedState
from .reproduce import regression_command
from .shared import MESSAGE_KINDS, NOTHING_HELD, error_text, job_parameter

__all__ = ["RegressionState", "ShownRegression"]


@dataclass(frozen=True)
class ShownRegression:
    """What the card draws of a regression: the ``fit``, its ``table`` of coefficients, its ``curves`` (one per
    covariate), the ``rows`` used and left out (:meth:`effdim.FitResult.rows_json`) and ``notes`` (standard
    errors missing and why, convergence)."""

    fit: Any
    table: Any
    curves: list
    rows: dict
    notes: list


class RegressionState(param.Parameterized):
    """The covariates chosen for the shown fit's model, and the regression fitted with them."""

    fitted = param.ClassSelector(class_=FittedState, instantiate=False)
    candidates = param.List(default=[], doc="Loaded columns the shown fit does not use: the covariates offered.")
    covariates = param.List(default=[], doc="The covariates chosen (main effects; the formula may say more).")
    formula = param.String(default="", doc="The covariate formula fitted (R's A + B, A*B, A:B, C(A)).")
    weights = param.String(default="", doc="A column of sampling weights ('' for none).")
    shown = param.ClassSelector(class_=ShownRegression, default=None, allow_None=True)
    message = param.String(default="")
    message_kind = param.Selector(default="info", objects=MESSAGE_KINDS)
    job = job_parameter("The regression's job while it runs.")

    def __init__(self, fitted: FittedState, **params):
        super().__init__(fitted=fitted, **params)
        self.in_one_update = NOTHING_HELD
        fitted.param.watch(self._fit_changed, ["shown"])
        self.param.watch(self._chosen, ["covariates"])
        self._fit_changed()

    def _fit_changed(self, *_) -> None:
        """A new fit shown: offer the loaded columns it leaves out; an earlier regression is for another model."""
        shown, full = self.fitted.shown, self.fitted.data
        if shown is None or full is None:
            self.param.update(candidates=[], shown=None)
            return
        used = set(shown.fit.columns.values())
        candidates = [c for c in full.columns if c not in used]
        keep = [c for c in self.covariates if c in candidates]
        weights = self.weights if self.weights in candidates else ""
        stale = self.shown is not None and self.shown.fit.model != shown.fit.model
        self.param.update(candidates=candidates, covariates=keep, weights=weights, **({"shown": None} if stale else {}))

    def _chosen(self, event) -> None:
        """Picking covariates writes their formula (main effects), which the analyst may then edit."""
        from effdim.formula import written

        self.formula = " + ".join(written(c) for c in event.new)

    async def run(self) -> bool:
        """Fit the shown fit's model with the covariates, as a job; ``False`` (and :attr:`message` says why)
        when nothing was fitted. A formula that does not parse is refused at once, in its own words."""
        from effdim.errors import EffdimError
        from effdim.formula import parse_formula

        shown = self.fitted.shown
        if shown is None:
            self.param.update(message="Fit a model first (a sweep or a climb above).", message_kind="warning")
            return False
        if not self.formula.strip():
            self.param.update(message="Pick at least one covariate.", message_kind="warning")
            return False
        try:
            parse_formula(self.formula)
        except EffdimError as err:
            self.param.update(message=error_text(err), message_kind="danger")
            return False
        fit, scores = shown.fit, self.fitted.scores
        if self.job is not None:
            self.job.cancel()
        with self.in_one_update():
            job = scores.jobs.submit(
                tasks.regression_task,
                self.fitted.data,
                fit.model,
                covariates=self.formula,
                weights=self.weights or None,
                mapping=dict(fit.columns),
                settings=scores.em_settings(),
                label="Latent class regression",
            )
            self.param.update(job=job, message="Fitting the regression…", message_kind="info")
        result = await job
        if self.job is not job:  # a newer run replaced it
            return False
        with self.in_one_update():
            self.job = None
            if job.state == "cancelled":
                self.param.update(message="Regression cancelled.", message_kind="info")
                return False
            if job.state != "done":
                self.param.update(message=f"The regression failed: {job.error}", message_kind="danger")
                return False
            return self._show(result)

    async def report(self) -> str | None:
        """The HTML report (:mod:`effdim.report`) of the regression shown, with the data and the command that
        writes it again, written in a worker (:func:`effdim_app.tasks.report_task`); ``None`` (and
        :attr:`message` says why) when there is none or it failed."""
        if self.shown is None:
            return None
        fit, data, settings = self.shown.fit, self.fitted.data, self.fitted.run_settings
        command = None if settings is None else regression_command(settings, data.source or "DATA", fit)
        job = self.fitted.scores.jobs.submit(
            tasks.report_task,
            fit,
            data=data,
            sweep=None,
            climb=None,
            pick=None,
            command=command,
            label="Report",
        )
        html = await job
        if job.state != "done":
            self.param.update(message=f"The report could not be written: {job.error}", message_kind="danger")
            return None
        return html

    def _show(self, fit: Any) -> bool:
        from effdim.errors import EffdimError

        try:
            errors = fit.standard_errors()
            shown = ShownRegression(
                fit=fit,
                table=fit.coefficient_table(),
                curves=fit.probability_curves(),
                rows=fit.rows_json(),
                notes=[*errors.notes(), *fit.em.convergence_notes()],
            )
        except EffdimError as err:
            self.param.update(message=f"The regression cannot be shown: {error_text(err)}", message_kind="danger")
            return False
        rows = shown.rows
        left = rows["left_out_missing_covariate"] + rows["left_out_missing_or_zero_weight"]
        self.param.update(
            shown=shown,
            message=f"Fitted on {rows['n_used']:,} rows" + (f" ({left:,} left out)." if left else "."),
            message_kind="success",
        )
        return True
