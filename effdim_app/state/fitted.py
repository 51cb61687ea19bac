"""State of the "Fitted model" view: which fit of a sweep or climb is shown.

No Panel import (as the rest of :mod:`effdim_app.state`): the view
(:mod:`effdim_app.views.fitted_view`) displays this, the engine computes
everything shown (:class:`effdim.FitResult` and :mod:`effdim.diagnostics`).

The fits of the last sweep or climb are kept when the scores state clears its
results (the model, the data or the mapping changed), so the analyst's view
survives applying a proposed model (:mod:`.proposal`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import param

# What a shown fit computes (FitResult's statistics, residuals and identification) lives in effdim.diagnostics,
# which FitResult imports when first asked; that import (scipy.special) would be spent by the first fit a
# server shows, on its event loop, every session waiting. Imported with this state instead.
import effdim.diagnostics  # noqa: F401
from effdim.scores import best

from .. import tasks
from ..logs import swallowed
from .model import ModelState
from .reproduce import distal_command, reproducing_command
from .scores import ScoresState
from .shared import failure_text

__all__ = ["FittedState", "ShownFit", "DEFAULT_SCORE", "STALE"]

#: The fit shown first after a sweep: the best by BIC+ (the paper's correction of BIC).
DEFAULT_SCORE = "bic+"
#: Said over a fit kept on screen after the model, the data or the mapping changed.
STALE = (
    "This fit no longer matches the model on screen (the model, the data or the mapping changed since): "
    "it is kept for reference. Sweep or climb again to fit the current model."
)


@dataclass(frozen=True)
class ShownFit:
    """Everything the fitted view draws of one fit and one hidden node, computed here, not in the view.

    ``profiles``: rows (item, category, class, probability) of ``node``
    (:meth:`effdim.FitResult.profiles`); ``shares``: rows (state,
    share) of ``node``, largest first; ``residuals``: the square table of
    bivariate residuals; ``statistics`` and ``identification`` as
    :meth:`~effdim.FitResult.fit_statistics` and
    :meth:`~effdim.FitResult.identification` (an
    :class:`effdim.errors.EffdimError` when the latter cannot be computed);
    ``classification`` the classification table of ``node``
    (:meth:`~effdim.FitResult.classification`).
    """

    fit: Any
    node: str
    profiles: Any
    shares: Any
    residuals: Any
    statistics: Any
    identification: Any
    classification: Any = None


class FittedState(param.Parameterized):
    """The fits of the last sweep or climb and the one shown."""

    scores = param.ClassSelector(class_=ScoresState, instantiate=False)
    models = param.ClassSelector(class_=ModelState, instantiate=False)
    fits = param.Dict(default={}, doc="Label -> FitResult of the last sweep or climb.")
    chosen = param.String(default=None, allow_None=True)
    node = param.String(default=None, allow_None=True, doc="Hidden node whose profiles are shown.")
    proposal = param.String(default="", doc="What happened to the last reordering, in words.")
    shown = param.ClassSelector(
        class_=ShownFit,
        default=None,
        allow_None=True,
        doc="What the view draws of the chosen fit and node (None: no fit).",
    )
    error = param.String(default="", doc="Why the chosen fit cannot be shown ('' when it can).")
    stale = param.String(default="", doc="Why the shown fit no longer matches the model on screen ('' if it does).")
    distal = param.List(default=[], doc="Distal outcomes of the shown fit (.distal), which its report shows.")
    enumeration = param.Parameter(
        default=None, doc="The sweep's class-enumeration table (.enumeration, with its BLRT), which the report shows."
    )

    def __init__(self, scores: ScoresState, models: ModelState, **params):
        super().__init__(scores=scores, models=models, **params)
        # (data, sweep, climb, settings, the identifiers of the data's rows) of the fits offered
        self._analysis: tuple[Any, list | None, Any, Any, Any] = (None, None, None, None, None)
        scores.param.watch(self._results_changed, ["results", "climb", "running"])
        self.param.watch(self._show, ["fits", "chosen", "node"])  # one watcher: one computation per change

    def _results_changed(self, *_) -> None:
        """Offer the fits of the sweep or climb that just ended: not while it runs (a sweep's fits arrive one
        by one, and the first, one class, would be shown and computed for nothing), once when it ends."""
        scores = self.scores
        if scores.running:
            return
        fits: dict[str, Any] = {}
        if scores.results:
            for f in scores.results:
                node = f.model.root if scores.node is None else scores.node
                fits[f"|{node}| = {f.card}: {f.model}"] = f
            shown = best(scores.results, DEFAULT_SCORE)
        elif scores.climb is not None:
            for i, f in enumerate(scores.climb.path):
                fits[f"step {i}: {f.model}"] = f
            shown = scores.climb.best
        else:  # results cleared: keep showing what the analyst was looking at, marked as such
            if self.fits:
                self.stale = STALE
            return
        chosen = next(label for label, f in fits.items() if f is shown)
        data = scores.data
        self._analysis = (data.full, list(scores.results) or None, scores.climb, scores.settings_of_results, data.ids)
        self.param.update(fits=fits, chosen=chosen, node=shown.model.root, proposal="", stale="")

    @property
    def fit(self):
        return self.fits.get(self.chosen) if self.chosen else None

    @property
    def data(self):
        """The data the fits were made on, every column as loaded (None before the first sweep or climb)."""
        return self._analysis[0]

    @property
    def run_settings(self):
        """How the fits offered were made (:class:`.reproduce.RunSettings`; None before the first sweep or climb)."""
        return self._analysis[3]

    def _show(self, *_) -> None:
        """Compute what the view draws of the chosen fit (its profiles, shares, residuals, statistics)."""
        from effdim.errors import EffdimError

        fit = self.fit
        if fit is None:
            self.param.update(shown=None, error="")
            return
        node = self.node if self.node in fit.model.hidden else fit.model.root
        try:
            table = fit.class_shares()
            rows = table[table["node"] == fit.labels.name(node)]
            try:
                identification = fit.identification()
            except EffdimError as err:  # too many parameters for the SVD at the estimate
                identification = err
            shown = ShownFit(
                fit=fit,
                node=node,
                profiles=fit.profiles(node),
                shares=rows[["state", "share"]],
                residuals=fit.bivariate_residuals(),
                statistics=fit.fit_statistics(),
                identification=identification,
                classification=fit.classification(node),
            )
        except Exception as err:  # noqa: BLE001 - say why in the view, keep the session alive
            swallowed(f"fitted model {fit.model}, node {node}", err)
            self.param.update(shown=None, error=f"Cannot show this fit: {failure_text(err)}")
            return
        self.param.update(shown=shown, error="")

    async def report(self, bootstrap: Any = None) -> str | None:
        """The HTML report (:mod:`effdim.report`) of the shown fit, with the data (its file name), the sweep or
        climb the fit came from, the criterion it is the pick of and the command that reproduces it
        (:mod:`.reproduce`); written in a worker
        (:func:`effdim_app.tasks.report_task`). ``None`` (and :attr:`proposal` says why) when it failed."""
        fit = self.fit
        if fit is None:
            return None
        data, sweep, climb, settings, _ = self._analysis
        if sweep is not None:
            pick = DEFAULT_SCORE if best(sweep, DEFAULT_SCORE) is fit else None
        else:
            pick = climb.score if climb is not None and climb.best is fit else None
        command = None if settings is None else reproducing_command(settings, data.source or "DATA", fit, pick)
        if command is not None and self.distal:
            command += "\n" + distal_command(settings, data.source or "DATA", fit, self.distal)
        job = self.scores.jobs.submit(
            tasks.report_task,
            fit,
            data=data,
            sweep=sweep,
            climb=climb,
            pick=pick,
            command=command,
            three_step=self.distal,
            enumeration=self.enumeration if sweep is not None else None,
            bootstrap=bootstrap,
            label="Report",
        )
        self.proposal = "Writing the report…"
        html = await job
        if job.silenced:  # the session closed
            return None
        self.proposal = "" if job.state == "done" else f"The report could not be written: {job.error}"
        return html

    def posteriors_csv(self) -> str:
        """Every row's posteriors of the shown fit, the identifiers of the rows first (the columns the reader left
        out as identifiers, :attr:`.data.DataState.ids`), so the table merges back into the file."""
        fit = self.fit
        return "" if fit is None else fit.posteriors(ids=self._analysis[4]).to_csv(index=False)

    def reorder(self, text: str) -> bool:
        """Renumber the shown node's states: ``text`` lists the current state numbers in the new
        order, e.g. ``"2,1,3"`` (:meth:`effdim.FitResult.relabeled`); the fit is replaced."""
        from effdim.errors import EffdimError

        if self.shown is None:
            return False
        node = self.shown.node
        try:
            order = [int(t) - 1 for t in str(text).replace(" ", "").split(",")]
            moved = self.shown.fit.relabeled(node, order)
        except (ValueError, EffdimError) as err:
            self.proposal = f"Cannot reorder the states of {node}: {err}"
            return False
        self.fits = {**self.fits, self.chosen: moved}
        self.proposal = f"States of {node} reordered: new 1..{len(order)} are old {text}."
        return True
