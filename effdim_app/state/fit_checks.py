"""The checks of the shown fit that take refits, as jobs (no Panel import): :class:`FitChecksState`.

Two questions an analyst asks of a fit need many more EM runs than the fit
itself, so each is a job in a worker process (:mod:`effdim_app.jobs`), with
its progress, a cancel and the server's time limit:

* the **bootstrap p-value of G2** (:func:`effdim.bootstrap.bootstrap_g2`,
  ``effdim fit --bootstrap B``): the chi-square p-values are unreliable on a
  sparse table, as a survey's almost always is;
* **how far the class shares move** between equally good fits where
  ``de < ds`` (:meth:`effdim.FitResult.equivalent_share_ranges`, ``effdim fit
  --equivalent-fits K``): the parameters are then not unique, and the ranges
  say by how much.

Each answer belongs to the fit it was computed for: another fit shown clears
it, and a job whose fit is no longer shown when it ends is not shown.
"""

from __future__ import annotations

from typing import Any

import param

from .. import tasks
from .fitted import FittedState
from .shared import MESSAGE_KINDS, job_parameter

__all__ = ["FitChecksState", "EQUIVALENT_FITS"]

#: Refits from other starts whose class shares are compared where de < ds (the CLI's default too).
EQUIVALENT_FITS = 4


class FitChecksState(param.Parameterized):
    """The bootstrap p-value of G2 and the share ranges over equally good fits of the fit shown."""

    fitted = param.ClassSelector(class_=FittedState, instantiate=False)
    replicates = param.Integer(default=100, bounds=(10, 2000), doc="Bootstrap replicates B.")
    bootstrap = param.Parameter(default=None, doc="The shown fit's effdim.bootstrap.BootstrapResult (None: not run).")
    share_ranges = param.Dict(
        default=None, allow_None=True, doc="The shown fit's class-share ranges over equally good fits (None: not run)."
    )
    bootstrap_job = job_parameter("The bootstrap of G2, while it waits or runs.")
    ranges_job = job_parameter("The refits for the share ranges, while they wait or run.")
    message = param.String(default="")
    message_kind = param.Selector(default="info", objects=MESSAGE_KINDS)

    def __init__(self, fitted: FittedState, **params):
        super().__init__(fitted=fitted, **params)
        self._of: dict[str, Any] = {}  # the fit each answer (or job computing it) belongs to
        fitted.param.watch(self._shown_changed, ["shown"])

    def _shown_changed(self, *_) -> None:
        """Another fit shown: the answers of the last one go, and its jobs are not wanted any more."""
        fit = self._fit()
        for name, job in (("bootstrap", self.bootstrap_job), ("share_ranges", self.ranges_job)):
            if self._of.get(name) is not fit:
                if job is not None:
                    job.cancel()
                if getattr(self, name) is not None:
                    setattr(self, name, None)

    def _fit(self):
        shown = self.fitted.shown
        return None if shown is None else shown.fit

    async def run_bootstrap(self) -> Any:
        """The parametric bootstrap p-value of the shown fit's G2 with :attr:`replicates` replicates, refitted as
        the sweep or climb fitted it (its starts and seed)."""
        settings = self.fitted.scores.em_settings()
        return await self._run(
            "bootstrap",
            tasks.bootstrap_task,
            label=f"Bootstrap p-value of G² ({self.replicates} replicates)",
            B=self.replicates,
            settings=settings,
        )

    async def run_share_ranges(self) -> Any:
        """The class shares' range over :data:`EQUIVALENT_FITS` refits of the shown fit that fit equally well
        (meaningful where de < ds)."""
        return await self._run(
            "share_ranges",
            tasks.share_ranges_task,
            label=f"Class shares over {EQUIVALENT_FITS} equally good fits",
            fits=EQUIVALENT_FITS,
            seed=self.fitted.scores.seed,
        )

    async def _run(self, name: str, fn, *, label: str, **options) -> Any:
        fit = self._fit()
        job_name = "bootstrap_job" if name == "bootstrap" else "ranges_job"
        if fit is None or getattr(self, job_name) is not None:
            return None
        job = self.fitted.scores.jobs.submit(fn, fit, label=label, **options)
        self._of[name] = fit
        self.param.update(**{job_name: job, name: None}, message="")
        result = await job
        with self.fitted.scores.in_one_update():
            setattr(self, job_name, None)
            if self._fit() is not fit:  # another fit is shown now: this answer is not its
                return None
            if job.state != "done":
                self.param.update(message=f"{label}: {job.error}", message_kind="warning")
                return None
            setattr(self, name, result)
        return result
