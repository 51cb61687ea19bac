"""State of the "Distal outcomes" card of the fitted model: columns left out of the model, by class.

The analyst picks columns of the data as loaded that the shown fit does not
use and a step-3 method; :meth:`DistalState.estimate` runs the three-step
method (:func:`effdim.threestep.distal_outcomes`) in a worker
(:func:`effdim_app.tasks.distal_task`) and keeps its results, which belong to
the fit they were computed for: showing another fit clears them. The shown
fit's report (:meth:`effdim_app.state.fitted.FittedState.report`) includes
them. No Panel import.
"""

from __future__ import annotations

from typing import Any

import param

from .. import tasks
from ..jobs import Job
from .fitted import FittedState
from .shared import MESSAGE_KINDS, NOTHING_HELD, job_parameter, runner_parameter

__all__ = ["DISTAL_METHODS", "DistalState"]

#: The step-3 methods offered, and how the card names them.
DISTAL_METHODS = {
    "bch": "BCH correction",
    "ml": "ML correction",
    "modal": "modal assignment (uncorrected)",
}


class DistalState(param.Parameterized):
    """Distal outcomes of the shown fit's classes: the columns offered and chosen, the method, the results."""

    fitted = param.ClassSelector(class_=FittedState, instantiate=False)
    candidates = param.List(default=[], doc="Columns of the data as loaded that the shown fit does not use.")
    outcomes = param.ListSelector(default=[], objects=[], doc="The columns chosen.")
    method = param.Selector(default="bch", objects=list(DISTAL_METHODS))
    step1 = param.Boolean(
        default=False,
        doc="Add the measurement model's uncertainty to the standard errors (effdim.threestep.step1); by default "
        "the classification error is taken as known.",
    )
    results = param.List(default=[], doc="effdim.threestep.DistalOutcome of the shown fit, one per outcome.")
    message = param.String(default="")
    message_kind = param.Selector(default="info", objects=MESSAGE_KINDS)
    job = job_parameter("The three-step job, while it runs.")
    jobs = runner_parameter("Runs the three-step method in a worker process; None: in this process.")

    def __init__(self, fitted: FittedState, **params):
        super().__init__(fitted=fitted, **params)
        self.in_one_update = NOTHING_HELD
        fitted.param.watch(self._fit_changed, ["shown"])
        self._fit_changed()

    def _fit_changed(self, *_) -> None:
        """Another fit (or none) is shown: offer its left-out columns, keep the choices still offered, and
        drop the results, which were the previous fit's."""
        fit, data = self.fitted.fit, self.fitted.data
        candidates = [] if fit is None or data is None else [c for c in data.columns if c not in fit.columns.values()]
        chosen = [c for c in self.outcomes if c in candidates]
        if self.job is not None:
            self.job.cancel()
        self.param.outcomes.objects = candidates
        self.param.update(candidates=candidates, outcomes=chosen, results=[], message="", job=None)
        self.fitted.distal = []

    def estimate(self) -> bool:
        """Run the three-step method on the chosen outcomes (in a worker when there is a runner)."""
        from effdim.errors import EffdimError

        fit, data = self.fitted.fit, self.fitted.data
        if fit is None or data is None:
            self.param.update(message="Fit a model first (a sweep or a hill climb).", message_kind="warning")
            return False
        if not self.outcomes:
            self.param.update(message="Pick at least one column left out of the model.", message_kind="warning")
            return False
        options = dict(outcomes=list(self.outcomes), method=self.method, step1=self.step1)
        if self.jobs is None:
            try:
                return self._show(fit, tasks.distal_task(fit, data, **options))
            except EffdimError as err:
                return self._failed(str(err))
        if self.job is not None:
            self.job.cancel()
        job = self.jobs.submit(tasks.distal_task, fit, data, **options, label="Distal outcomes")
        self.param.update(job=job, message="Estimating the distal outcomes…", message_kind="info")
        job.add_done_callback(lambda job: self._finished(job, fit))
        return True

    def _finished(self, job: Job, fit: Any) -> None:
        if self.job is not job:  # replaced by a newer request, or the fit changed
            return
        with self.in_one_update():
            self.job = None
            if job.state == "cancelled":
                self.param.update(message="Cancelled.", message_kind="info")
            elif job.state != "done":
                self._failed(job.error.rstrip("."))
            elif self.fitted.fit is fit:
                self._show(fit, job.result)

    def _show(self, fit: Any, results: list) -> bool:
        method = DISTAL_METHODS[results[0].method] if results else ""
        self.param.update(
            results=results, message=f"{_outcomes(len(results))} by the {method}.", message_kind="success"
        )
        self.fitted.distal = results
        return True

    def _failed(self, text: str) -> bool:
        self.param.update(
            results=[], message=f"The distal outcomes could not be estimated: {text}.", message_kind="danger"
        )
        self.fitted.distal = []
        return False


def _outcomes(count: int) -> str:
    """``"1 outcome"``, ``"2 outcomes"``."""
    return f"{count} outcome" + ("" if count == 1 else "s")
